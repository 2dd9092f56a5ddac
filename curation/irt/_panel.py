"""Other panels of the same kind: z refitted on resampled and leave-one-out model panels.

A benchmark's z is measured *by its panel*: the models that answered it set every item's
difficulty and the scale's anchors. The parametric bootstrap (:mod:`curation.irt._bootstrap`)
holds the panel fixed, so its intervals say nothing about what another panel would give
(issue 29: 40 random 12-model panels drawn from the bundled GSM8K panel give DDM 0.34–0.44
where the bootstrap interval of the full panel is 0.35–0.38). This module refits the same
items on other panels:

* :func:`panel_bootstrap` — new panels of as many models: the models resampled with
  replacement, each drawn model's ability moved by a normal kernel (a smoothed
  bootstrap: the scale is anchored by the weakest and strongest models, and plain
  resampling never draws beyond the observed ones — in the tests its intervals held
  another panel's DDM in 0.57 of 240 checks at 90%, the kernel's 0.94) and its
  responses simulated from the fit on its own cells; refitted with the same model and
  settings, each on its own panel scale. ``smooth=False``: plain resampling of the
  observed rows;
* :func:`leave_one_model_out_z` — each model left out in turn (the panel's jackknife).

Both return z per refit in ``cells.items`` order, for :mod:`curation.measure` to turn into
metric intervals.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from curation.irt._bootstrap import _axis, bounded_items, z_on_fitted_scale
from curation.irt._data import Cells, Dense, layout_kind
from curation.irt._fit import fit_map
from curation.irt._map import _big
from curation.irt._refit import DenseRefitter
from curation.irt._settings import MODELS, SCALES, FitSettings, ScaleMethod, check_choice
from curation.irt._threads import pinned
from curation.progress import progress

MAX_REDRAWS = 20
"""A resample that leaves some item without a response is drawn again (sparse designs)."""


@dataclass(frozen=True)
class PanelRefits:
    """z of every refit (refits × items, ``cells.items`` order) and which models each used.

    ``panels[r]`` holds the indices (into ``cells.models``) of refit ``r``'s models, with
    repeats for a resample; a panel whose models all sit at one ability (no scale) is
    left out and counted in ``n_degenerate``.
    """

    z: np.ndarray
    panels: tuple[tuple[int, ...], ...]
    kind: str
    seed: int
    n_unconverged: int
    n_degenerate: int = 0
    """Panels left out: every model at one ability, so no scale (tiny panels)."""

    @property
    def refits(self) -> int:
        return int(self.z.shape[0])


def _sub_cells(cells: Cells, k: np.ndarray, n: np.ndarray, rows: np.ndarray) -> Cells:
    """The panel of dense rows ``rows`` (repeats allowed) as cells, one model per row."""
    kk, nn = k[rows], n[rows]
    mi, ii = np.nonzero(nn > 0)  # row-major: sorted by (model, item) as encode() sorts
    models = tuple(f"m{j}" for j in range(rows.size))
    return Cells(models, cells.items, mi, ii, kk[mi, ii], nn[mi, ii])


def _refit_z(
    sub: Cells,
    model: str,
    settings: FitSettings,
    scale: ScaleMethod,
    floor: np.ndarray | None,
) -> tuple[np.ndarray, bool]:
    """z of one panel's refit on its own scale (1PL dense: the bootstrap's fast refitter)."""
    if model == "1pl" and not _big(sub, settings) and layout_kind(sub, settings.layout) == "dense":
        lay = Dense(sub)
        theta, b, converged = DenseRefitter(lay.N, settings).fit(lay.K)
    else:
        mp = fit_map(sub, model, settings, floor)
        theta, b, converged = mp.theta, _axis(mp), mp.converged
    bound = bounded_items(sub, sub.k)
    return z_on_fitted_scale(model, scale, theta, b, bound), bool(converged)


def _run(
    cells: Cells,
    panels: list[np.ndarray],
    *,
    model: str,
    settings: FitSettings | None,
    scale: ScaleMethod,
    floor: np.ndarray | None,
    kind: str,
    seed: int,
    desc: str,
) -> PanelRefits:
    check_choice("model", model, MODELS)
    check_choice("scale", scale, SCALES)
    s = settings if settings is not None else FitSettings()
    lay = Dense(cells)
    rows: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    bad = 0
    for r in progress(range(len(panels)), desc=desc, unit="refit"):
        sub = _sub_cells(cells, lay.K, lay.N, panels[r])
        try:
            z_r, ok = _refit_z(sub, model, s, scale, floor)
        except ValueError:  # no scale: every model of the panel at one ability
            continue
        rows.append(z_r)
        kept.append(panels[r])
        bad += not ok
    return _refits(cells, rows, kept, len(panels), kind, seed, bad)


def _refits(
    cells: Cells,
    rows: list[np.ndarray],
    kept: list[np.ndarray],
    total: int,
    kind: str,
    seed: int,
    bad: int,
) -> PanelRefits:
    z = np.stack(rows) if rows else np.empty((0, cells.n_items))
    return PanelRefits(
        z=z,
        panels=tuple(tuple(int(j) for j in p) for p in kept),
        kind=kind,
        seed=int(seed),
        n_unconverged=bad,
        n_degenerate=total - len(rows),
    )


@pinned
def panel_bootstrap(
    cells: Cells,
    *,
    model: str = "1pl",
    settings: FitSettings | None = None,
    scale: ScaleMethod = "panel",
    replicates: int = 50,
    seed: int = 0,
    floor: np.ndarray | None = None,
    smooth: bool = True,
) -> PanelRefits:
    """Refit ``replicates`` panels of as many models drawn with replacement from ``cells``.

    Each refit uses the fit's ``model``, ``settings`` and ``scale`` (3PL: ``floor`` per
    item held at the fit's). A draw that leaves an item with no response is drawn again
    (up to :data:`MAX_REDRAWS` times, then kept with that item at its prior).
    Deterministic given ``seed``.
    """
    if int(replicates) < 2:
        raise ValueError(f"replicates must be >= 2, got {replicates!r}")
    m = cells.n_models
    if m < 3:
        raise ValueError(f"resampling the panel needs at least 3 models, got {m}")
    answered = Dense(cells).N > 0
    rng = np.random.default_rng(seed)
    panels = []
    for _ in range(int(replicates)):
        for _try in range(MAX_REDRAWS):
            rows = rng.integers(0, m, m)
            if answered[rows].any(axis=0).all():
                break
        panels.append(np.sort(rows))
    if not smooth:
        return _run(
            cells, panels, model=model, settings=settings, scale=scale, floor=floor,
            kind="resample", seed=seed, desc="panel bootstrap",
        )  # fmt: skip
    return _run_smooth(
        cells, panels, rng, model=model, settings=settings, scale=scale, floor=floor, seed=seed
    )


def _run_smooth(
    cells: Cells,
    panels: list[np.ndarray],
    rng: np.random.Generator,
    *,
    model: str,
    settings: FitSettings | None,
    scale: ScaleMethod,
    floor: np.ndarray | None,
    seed: int,
) -> PanelRefits:
    """New panels simulated: each drawn model's ability is its fitted θ plus a normal
    kernel of Silverman's bandwidth widened by the abilities' standard error (so a new
    panel's weakest and strongest models are not bound to the observed ones: resampling
    alone never draws beyond the observed extremes, which anchor the scale), its
    responses drawn on its rows' cells from the fit."""
    check_choice("model", model, MODELS)
    check_choice("scale", scale, SCALES)
    s = settings if settings is not None else FitSettings()
    mp = fit_map(cells, model, s, floor)
    lay = Dense(cells)
    m = cells.n_models
    spread = float(np.std(mp.theta, ddof=1))
    # Silverman's kernel, plus each ability's own standard error: the MAP abilities are
    # shrunk towards 0, so their spread understates the population's by about that much.
    se2 = float(np.mean(np.nan_to_num(np.asarray(mp.theta_se, dtype=np.float64)) ** 2))
    bandwidth = float(np.sqrt((1.06 * spread * m ** (-0.2)) ** 2 + se2))
    a = mp.a if model != "1pl" else None
    c = mp.c if model == "3pl" else None
    out: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    bad = 0
    for r in progress(range(len(panels)), desc="panel bootstrap", unit="refit"):
        rows = panels[r]
        theta = mp.theta[rows] + bandwidth * rng.standard_normal(rows.size)
        eta = theta[:, None] - mp.b[None, :]
        p = expit(eta if a is None else a[None, :] * eta)
        if c is not None:
            p = c[None, :] + (1.0 - c[None, :]) * p
        nn = lay.N[rows]
        kk = rng.binomial(nn.astype(np.int64), p).astype(np.float64)
        sub = _sub_cells(cells, kk, nn, np.arange(rows.size))
        try:
            z_r, ok = _refit_z(sub, model, s, scale, c)
        except ValueError:  # no scale: every model of the panel at one ability
            continue
        out.append(z_r)
        kept.append(rows)
        bad += not ok
    return _refits(cells, out, kept, len(panels), "smoothed", seed, bad)


@pinned
def leave_one_model_out_z(
    cells: Cells,
    *,
    model: str = "1pl",
    settings: FitSettings | None = None,
    scale: ScaleMethod = "panel",
    floor: np.ndarray | None = None,
) -> PanelRefits:
    """z refitted without each model in turn (``panels[r]`` leaves out model ``r``)."""
    m = cells.n_models
    if m < 3:
        raise ValueError(f"leave-one-model-out needs at least 3 models, got {m}")
    panels = [np.delete(np.arange(m), j) for j in range(m)]
    return _run(
        cells, panels, model=model, settings=settings, scale=scale, floor=floor,
        kind="leave-one-out", seed=0, desc="leave one model out",
    )  # fmt: skip
