"""Parametric bootstrap of a MAP fit: replicate pairs (true z, refitted z) for any metric.

Laplace draws of b around the mode treat the panel's abilities — hence the scale's anchors
θ_min, θ_max — as known, and spread each item independently; on the bundled single-trial
shapes their gap intervals covered the truth in 0 of 100 simulations. The bootstrap here
instead repeats the whole measurement in a simulated world with a known truth:

1. draw a truth (θ†, b†) — by default from smooth empirical-Bayes posteriors
   (:class:`SmoothTruth`), so it is continuous and its extremes are uncertain;
2. simulate counts on exactly the observed design (same cells, same trials per cell);
3. refit with the same model and settings, re-derive the scale from the refit (so the
   anchors' estimation error is part of every replicate) and map b̂* to z*;
4. keep z† (the truth on the truth's own anchors) beside z*.

A metric's error in the simulated world, T(z*) − T(z†), stands in for the real error
T(ẑ) − T(z); :mod:`curation.measure` turns those errors into bias-corrected estimates and
basic-bootstrap intervals. ``truth="plugin"`` uses the MAP estimates as the truth (the
textbook parametric bootstrap), kept only so benchmarks can show why it fails here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from curation.irt._batch import fit_map_1pl_batch
from curation.irt._data import Cells, Dense, layout_kind
from curation.irt._fit import fit_map
from curation.irt._floor import equivalent_b
from curation.irt._map import MapFit, _big, fit_2pl_raw, prior_centre
from curation.irt._refit import DenseRefitter
from curation.irt._scale import Calibration, make_scale
from curation.irt._settings import MODELS, SCALES, FitSettings, ScaleMethod, check_choice
from curation.irt._threads import pinned
from curation.progress import progress

BATCH_MAX_CELLS = 5_000
"""Designs up to this many model × item cells are refitted as a batch."""
BATCH_SIZE = 64

Truth = Literal["smooth", "plugin", "jitter", "lattice"]
TRUTHS: tuple[str, ...] = ("smooth", "plugin", "jitter", "lattice")
"""``smooth``: empirical-Bayes posteriors (the bootstrap's own truth); ``plugin``: the fit
itself (on single-trial data its difficulties cluster at the score levels: a lattice
truth); ``jitter``: the fit with every θ and b moved by a normal draw of its own Laplace
SE (a continuous truth spread around the fit, outside the empirical-Bayes family);
``lattice``: the refit of data simulated from a ``jitter`` truth (difficulties tied at
the score levels of a fresh fit, as a truth that is itself a fit of smooth-world data;
one extra refit per replicate; a 3PL fit uses ``plugin`` instead). ``jitter`` and
``lattice`` are the gaps stage's self-check worlds (:mod:`curation.measure._selfcheck`)."""


@dataclass(frozen=True)
class BootstrapReplicates:
    """``z_true`` and ``z_refit`` (replicates × items, in ``cells.items`` order).

    ``z_hat`` is the fit's own z (the point estimate the replicates are about);
    ``theta_range_true`` / ``theta_range_refit`` (replicates × 2) the anchors used.
    """

    z_hat: np.ndarray
    z_true: np.ndarray
    z_refit: np.ndarray
    theta_range_true: np.ndarray
    theta_range_refit: np.ndarray
    model: str
    scale: str
    truth: str
    seed: int
    n_unconverged: int

    @property
    def replicates(self) -> int:
        return int(self.z_true.shape[0])


def z_on_fitted_scale(
    model: str, scale: ScaleMethod, theta: np.ndarray, b: np.ndarray, bound: np.ndarray
) -> np.ndarray:
    """z of ``b`` on the scale fixed from (θ, b) exactly as a calibration would fix it
    (``bound``: :func:`bounded_items`); ``b`` may hold one row per draw."""
    names = tuple(f"m{j}" for j in range(theta.size))
    cal = Calibration(
        model=model,
        abilities={m: float(t) for m, t in zip(names, theta, strict=True)},
        scale=make_scale(scale, theta, b, bound),
        panel=names,
        created_by="parametric bootstrap",  # a throwaway calibration: says where it came from
    )
    return cal.to_z(b)


def bounded_items(cells: Cells, k: np.ndarray) -> np.ndarray:
    """Items every model, or none, solved in counts ``k`` (cell order)."""
    kk = np.bincount(cells.ii, weights=k, minlength=cells.n_items)
    nn = np.bincount(cells.ii, weights=cells.n, minlength=cells.n_items)
    return (kk >= nn) | (kk <= 0)


def _cell_logits(cells: Cells, theta: np.ndarray, b: np.ndarray) -> NDArray[np.float64]:
    """θ_m − b_i of every observed cell, per row of ``theta`` / ``b`` (rows × cells).

    Cells are sorted by (model, item), so they are the row-major dense matrix with the
    missing cells left out: broadcasting the dense difference and picking the observed
    positions is one gather instead of two (~10× faster at 200 × 55,000).
    """
    dense: NDArray[np.float64] = (theta[:, :, None] - b[:, None, :]).reshape(theta.shape[0], -1)
    if cells.k.size == cells.n_models * cells.n_items:  # no missing cell
        return dense
    observed: NDArray[np.int64] = cells.mi.astype(np.int64) * cells.n_items + cells.ii
    return dense[:, observed]


def _refit(
    cells: Cells,
    k_sim: np.ndarray,
    model: str,
    settings: FitSettings,
    floor: np.ndarray | None = None,
    fitted: MapFit | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Abilities, axis locations and convergence flags of the refits of each row of ``k_sim``
    (3PL: the refit's 1PL-equivalent locations, with ``floor`` held at the fit's). 2PL and
    3PL refits start at the assessed fit ``fitted`` (θ, b, log a and its scale's prior
    centre): a replicate's mode is near it, so a few Newton steps reach it instead of a
    1PL fit and a cold 2PL one.

    Small 1PL designs are fitted as one batch (same modes, far less per-call overhead);
    larger dense 1PL ones one by one by :class:`DenseRefitter` (the same modes, without
    the per-fit layout and standard errors); sparse, matrix-free and 2PL ones by the full
    fit.
    """
    r_count = k_sim.shape[0]
    theta = np.empty((r_count, cells.n_models))
    b = np.empty((r_count, cells.n_items))
    converged = np.empty(r_count, dtype=bool)
    if model == "1pl" and cells.n_models * cells.n_items <= BATCH_MAX_CELLS:
        n_dense = Dense(cells).N
        for start in range(0, r_count, BATCH_SIZE):
            rows = slice(start, start + BATCH_SIZE)
            k_dense = np.zeros((k_sim[rows].shape[0], cells.n_models, cells.n_items))
            k_dense[:, cells.mi, cells.ii] = k_sim[rows]
            bf = fit_map_1pl_batch(k_dense, n_dense, settings)
            theta[rows], b[rows], converged[rows] = bf.theta, bf.b, bf.converged
        return theta, b, converged
    if (
        model == "1pl"
        and not _big(cells, settings)
        and layout_kind(cells, settings.layout) == "dense"
    ):
        refitter = DenseRefitter(Dense(cells).N, settings)
        k_dense = np.zeros((cells.n_models, cells.n_items))
        flat, lin = k_dense.reshape(-1), cells.mi.astype(np.int64) * cells.n_items + cells.ii
        for r in progress(range(r_count), desc="bootstrap refits", unit="refit"):
            flat[lin] = k_sim[r]
            theta[r], b[r], converged[r] = refitter.fit(k_dense)
        return theta, b, converged
    for r in progress(range(r_count), desc="bootstrap refits", unit="refit"):
        k_r = k_sim[r].astype(np.float64)
        sim = Cells(cells.models, cells.items, cells.mi, cells.ii, k_r, cells.n)
        if model != "1pl" and fitted is not None and fitted.a is not None:
            x0 = (fitted.theta, fitted.b, np.log(fitted.a))
            res = fit_2pl_raw(sim, settings, floor=floor, x0=x0,
                              centre=prior_centre(fitted.theta, fitted.b, settings))  # fmt: skip
            th_r, b_r, al_r = res["x"]
            theta[r], converged[r] = th_r, res["converged"]
            b[r] = b_r if floor is None else equivalent_b(th_r, b_r, np.exp(al_r), floor)
            continue
        refit = fit_map(sim, model, settings, floor)
        theta[r], b[r], converged[r] = refit.theta, _axis(refit), refit.converged
    return theta, b, converged


def _axis(mp: MapFit) -> np.ndarray:
    """A fit's items on the axis z maps (3PL: 1PL-equivalent, :mod:`curation.irt._floor`)."""
    if mp.c is None:
        return mp.b
    return equivalent_b(mp.theta, mp.b, mp.a, mp.c)


@pinned  # hundreds of panel-sized products: threads only spin-wait
def parametric_bootstrap(
    cells: Cells,
    *,
    model: str = "1pl",
    settings: FitSettings | None = None,
    scale: ScaleMethod = "panel",
    replicates: int = 200,
    seed: int = 0,
    truth: Truth = "smooth",
    start: MapFit | None = None,
    floor: np.ndarray | None = None,
) -> BootstrapReplicates:
    """Refit ``replicates`` simulated copies of ``cells`` and return (z†, z*) pairs.

    ``model``, ``settings`` and ``scale`` must be those of the fit being assessed (the
    stage reads them from the stored calibration); ``start`` is that MAP fit if already
    at hand; ``floor`` (3PL) its floor per item (a shared floor is held at the fit's in
    every replicate). A 3PL item's z is that of its 1PL-equivalent location, in the
    truth and in every refit. Deterministic given ``seed``.
    """
    check_choice("model", model, MODELS)
    check_choice("scale", scale, SCALES)
    check_choice("truth", truth, TRUTHS)
    if int(replicates) < 2:
        raise ValueError(f"replicates must be >= 2, got {replicates!r}")
    s = settings if settings is not None else FitSettings()
    mp = start if start is not None else fit_map(cells, model, s, floor)
    floors = mp.c if model == "3pl" else None
    bound = bounded_items(cells, cells.k)
    z_hat = z_on_fitted_scale(model, scale, mp.theta, _axis(mp), bound)
    lay = Dense(cells)
    a = mp.a if model != "1pl" else None
    rng = np.random.default_rng(seed)
    smooth = None
    if truth == "smooth":
        from curation.irt._eb import SmoothTruth

        smooth = SmoothTruth.fit(lay.K, lay.N, mp.theta, mp.theta_se, a, mp.b, floors)
    n_trials = cells.n.astype(np.int64)
    r_count = int(replicates)
    slope = 1.0 if a is None else a[cells.ii]  # a(θ − b) per cell, 2PL/3PL
    if smooth is not None:
        theta_t, b_t = smooth.draw(rng, r_count)
    elif truth in ("jitter", "lattice") and not (truth == "lattice" and floors is not None):
        th_se = np.nan_to_num(np.asarray(mp.theta_se, dtype=np.float64), nan=0.0)
        b_se = np.nan_to_num(np.asarray(mp.b_se, dtype=np.float64), nan=0.0)
        theta_t = mp.theta + th_se * rng.standard_normal((r_count, mp.theta.size))
        b_t = mp.b + b_se * rng.standard_normal((r_count, mp.b.size))
        if truth == "lattice":  # the truth is the refit of one data set from that world
            p0 = expit(slope * _cell_logits(cells, theta_t, b_t))
            k0 = rng.binomial(cells.n.astype(np.int64)[None, :], p0)
            theta_t, b_t, _ = _refit(cells, k0, model, s, None, mp)
    else:
        theta_t, b_t = np.tile(mp.theta, (r_count, 1)), np.tile(mp.b, (r_count, 1))
    p = expit(slope * _cell_logits(cells, theta_t, b_t))
    if floors is not None:
        c_cell = floors[cells.ii]
        p = c_cell + (1.0 - c_cell) * p
    k_sim = rng.binomial(n_trials[None, :], p)  # int64; the refits convert as they go
    theta_f, b_f, converged = _refit(cells, k_sim, model, s, floors, mp)
    if floors is not None:  # the truth's items on the axis too
        b_t = np.stack([equivalent_b(t, b, a, floors) for t, b in zip(theta_t, b_t, strict=True)])
    z_true = np.empty((r_count, cells.n_items))
    z_refit = np.empty_like(z_true)
    for r in range(r_count):
        z_true[r] = z_on_fitted_scale(model, scale, theta_t[r], b_t[r], bound)
        z_refit[r] = z_on_fitted_scale(
            model, scale, theta_f[r], b_f[r], bounded_items(cells, k_sim[r])
        )
    range_true = np.stack([theta_t.min(axis=1), theta_t.max(axis=1)], axis=1)
    range_refit = np.stack([theta_f.min(axis=1), theta_f.max(axis=1)], axis=1)
    unconverged = int(np.sum(~converged))
    return BootstrapReplicates(
        z_hat=z_hat,
        z_true=z_true,
        z_refit=z_refit,
        theta_range_true=range_true,
        theta_range_refit=range_refit,
        model=model,
        scale=scale,
        truth=truth,
        seed=int(seed),
        n_unconverged=unconverged,
    )
