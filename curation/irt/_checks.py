"""Model checks: BIC for 1PL vs 2PL and leave-one-model-out stability."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl

from curation.irt._data import Cells, encode
from curation.irt._fit import FitResult, bic, bic_classic, fit_cells, n_params
from curation.irt._loo import one_step_loo, refit_1pl, refit_2pl_point, warm_start
from curation.irt._map import _big, fit_map_1pl, fit_map_2pl
from curation.irt._scale import Calibration, make_scale
from curation.irt._settings import MODELS, SCALES, FitSettings, ModelType, ScaleMethod, check_choice
from curation.irt._threads import pinned
from curation.progress import progress


@pinned
def bic_compare(
    responses: pl.DataFrame | pl.LazyFrame | Cells,
    *,
    seed: int = 0,
    settings: FitSettings | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Fit 1PL and 2PL by MAP and choose by BIC (lower is better); ``settings`` and
    ``overrides`` as in :func:`curation.irt.fit`.

    ``bic`` is the crossed-design BIC (see :func:`curation.irt._fit.bic`), which decides;
    ``bic_classic`` (n = all trials) is reported beside it for comparison. ``seed`` is
    recorded only: MAP fits are deterministic.
    """
    s = FitSettings.of(settings, **overrides)
    cells = encode(responses)
    if cells.n_models < 2:
        raise ValueError(f"BIC comparison needs at least 2 models, got {cells.n_models}")
    one = fit_map_1pl(cells, s)
    two = fit_map_2pl(cells, s, one)  # starts from the 1PL mode
    out: dict[str, Any] = {"seed": seed, "n_obs": float(cells.n.sum())}
    for name, mp in (("1pl", one), ("2pl", two)):
        out[name] = {
            "loglik": mp.loglik,
            "n_params": n_params(name, cells.n_models, cells.n_items),
            "bic": bic(mp.loglik, cells, name),
            "bic_classic": bic_classic(mp.loglik, cells, name),
            "converged": mp.converged,
        }
    out["delta_bic"] = out["2pl"]["bic"] - out["1pl"]["bic"]
    out["choice"] = "2pl" if out["delta_bic"] < 0 else "1pl"
    out["choice_classic"] = (
        "2pl" if out["2pl"]["bic_classic"] < out["1pl"]["bic_classic"] else "1pl"
    )
    return out


LooMethod = Literal["warm", "refit"]
LOO_METHODS: tuple[str, ...] = ("warm", "refit")


TIE_TOL = 1e-9
"""Difficulties closer than this (relative, logits) are one value when ranked: items
with the same counts from the same models have the same b, up to rounding noise that
would otherwise break the tie one way or the other from run to run."""


def rank_average(x: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """Ranks 1..n, ties sharing their mean rank (as scipy's ``rankdata``).

    With ``tol`` > 0, neighbours (in sorted order) closer than ``tol · max(1, |x|)``
    are tied.
    """
    order = np.argsort(x, kind="stable")
    xs = x[order]
    gap = np.diff(xs)
    first = np.concatenate([[True], gap > tol * np.maximum(1.0, np.abs(xs[1:]))])
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    ends = np.append(starts[1:], x.size)
    ranks = np.empty(x.size, dtype=np.float64)
    ranks[order] = (0.5 * (starts + ends - 1) + 1.0)[group]
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho (Pearson r of average ranks, ties within :data:`TIE_TOL`).

    NaN if either side is constant.
    """
    rx, ry = rank_average(x, TIE_TOL), rank_average(y, TIE_TOL)
    rx -= rx.mean()
    ry -= ry.mean()
    den = float(np.sqrt((rx @ rx) * (ry @ ry)))
    return float(rx @ ry) / den if den > 0 else float("nan")


LOO_EXACT_TOP = 20
"""Models refitted exactly when the panel is large enough for the approximation: the
ones whose removal moves z most by it."""

LOO_APPROX_TOL = 0.02
"""Stated tolerance of the one-step approximation: |max |dz|| (per dropped model) within
this of the exact refit's on simulated and bundled matrices (tests/irt)."""


def _loo_row(
    dropped: str, j: int, idx: np.ndarray, b_sub: np.ndarray, z_sub: np.ndarray, full: FitResult
) -> dict[str, Any]:
    b_full = full.items["b"].to_numpy()
    z_full = full.items["z"].to_numpy()
    theta_full = full.models["theta"].to_numpy()
    cal = full.calibration
    shift = float(np.mean(np.delete(theta_full, j)))
    dz = np.abs(z_sub - z_full[idx])
    dz_aligned = np.abs(cal.to_z(b_sub + shift) - z_full[idx])
    rho = spearman(b_full[idx], b_sub) if idx.size > 1 else float("nan")
    return {
        "dropped": dropped,
        "n_items": int(idx.size),
        "max_abs_dz": float(dz.max()),
        "mean_abs_dz": float(dz.mean()),
        "max_abs_dz_aligned": float(dz_aligned.max()),
        "mean_abs_dz_aligned": float(dz_aligned.mean()),
        "spearman_b": float(rho),
    }


def _refit_warm(
    sub: Cells,
    model: str,
    s: FitSettings,
    full: FitResult,
    j: int,
    idx: np.ndarray,
    floor: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """θ and the items' axis locations of the warm-started refit without model ``j``."""
    keep = np.delete(np.arange(full.models.height), j)
    th0, b0 = warm_start(full.models["theta"].to_numpy(), _curve_b(full), keep, idx)
    if model == "1pl":
        th, b, _, _ = refit_1pl(sub, s, th0, b0)
        return th, b
    al0 = np.log(full.items["a"].to_numpy()[idx])
    used = None if floor is None else floor[idx]
    th, b, al = refit_2pl_point(sub, s, th0, b0, al0, used)["x"]
    return th, _axis_b(model, th, b, np.exp(al), used)


def _curve_b(fit: FitResult) -> np.ndarray:
    """The item curves' own b (3PL: ``b_curve``; ``b`` is then the axis location)."""
    col = "b_curve" if fit.calibration.model == "3pl" else "b"
    return fit.items[col].to_numpy()


def _axis_b(
    model: str, th: np.ndarray, b: np.ndarray, a: np.ndarray | None, floor: np.ndarray | None
) -> np.ndarray:
    """A refit's items on the axis z maps (3PL: 1PL-equivalent, :mod:`curation.irt._floor`)."""
    if model != "3pl":
        return b
    from curation.irt._floor import equivalent_b

    return equivalent_b(th, b, a, floor)


@pinned
def loo_stability(
    responses: pl.DataFrame | pl.LazyFrame | Cells,
    *,
    model: ModelType = "1pl",
    seed: int = 0,
    scale: ScaleMethod = "panel",
    method: LooMethod = "warm",
    exact_max_models: int | None = None,
    exact_top: int = LOO_EXACT_TOP,
    settings: FitSettings | None = None,
    floor: np.ndarray | None = None,
    full: FitResult | None = None,
    exact_max_cells: int | None = None,
    approx_max_work: int | None = None,
    **overrides: Any,
) -> dict[str, Any]:
    """Refit (MAP) without each model in turn and report how far the items move.

    Two views of Δz per dropped model, over the items still answered without it:
    ``*_abs_dz``: the refit's own z (its own panel scale), i.e. how much the published
    z depends on that model being in the panel; ``*_abs_dz_aligned``: the refit's b
    shifted onto the full fit's location (mean of the remaining models' full-fit
    abilities) and mapped with the full calibration, i.e. estimation noise only.
    ``spearman_b``: rank correlation of b between full fit and refit.

    ``method="warm"`` (default) starts each refit's Newton iterations at the full fit
    (:mod:`curation.irt._loo`): the same mode to within the fit tolerance, several
    times faster. ``"refit"`` refits from scratch with :func:`fit` (the reference; also
    what leaderboard-sized panels use).

    Above ``exact_max_models`` models (None: never) no model is refitted at first: every
    leave-out mode is approximated from the full fit (:func:`curation.irt._loo.one_step_loo`,
    checked against exact refits to within :data:`LOO_APPROX_TOL` in |dz| in the tests),
    then the ``exact_top`` models whose removal moves z most by that approximation are
    refitted exactly and their rows replaced (``"mode": "approximate"``; the figures of
    the rest are approximations). ``approx_error`` is the largest |Δ max |dz|| between
    approximation and refit over the refitted models: the approximation's measured error
    where it matters most. At or below it (default) every model is refitted (``"mode":
    "exact"``). ``floor`` (3PL): the guessing floor per item in the order the responses
    encode them, NaN where unknown; the refits hold every floor at the full fit's (a
    shared floor is not re-estimated per refit).

    Budgets for leaderboard-sized matrices (None: no budget). ``full``: the caller's MAP
    fit of the same cells with the same arguments (annotate's), used instead of fitting
    again. ``exact_max_cells``: the approximate mode refits at most this many cells in
    all (``exact_top`` capped at ``exact_max_cells // cells``; with none refitted,
    ``approx_error`` is null: the error is the tests' :data:`LOO_APPROX_TOL`).
    ``approx_max_work``: the approximation costs ~ dropped models x models x items;
    above this product a seeded random sample of models is dropped (``n_dropped`` of
    them, ``"sampled": true``), so ``max_abs_dz`` is the sample's maximum.
    """
    check_choice("model", model, MODELS)
    check_choice("scale", scale, SCALES)
    check_choice("method", method, LOO_METHODS)
    s = FitSettings.of(settings, **overrides)
    cells = encode(responses)
    if cells.n_models < 3:
        raise ValueError(f"leave-one-model-out needs at least 3 models, got {cells.n_models}")
    if full is None or full.diagnostics.get("method") != "map":
        full = fit_cells(
            cells, model=model, method="map", seed=seed, scale=scale, settings=s, floor=floor
        )
    b_full = _curve_b(full)
    theta_full = full.models["theta"].to_numpy()
    warm = method == "warm" and not _big(cells, s)
    a_full = full.items["a"].to_numpy() if model != "1pl" else None
    used = full.items["c"].to_numpy() if model == "3pl" else None  # floors, shared one filled

    def sub_z(sub: Cells, th_sub: np.ndarray, b_sub: np.ndarray) -> np.ndarray:
        _, k_i, n_i = sub.item_stats()
        return Calibration(
            model=model,
            abilities=dict(zip(sub.models, th_sub.tolist(), strict=True)),
            scale=make_scale(scale, th_sub, b_sub, (k_i >= n_i) | (k_i <= 0)),
            panel=sub.models,
            created_by="",
        ).to_z(b_sub)

    def exact_row(j: int) -> dict[str, Any]:
        sub = cells.drop_model(j)
        idx = np.unique(cells.ii[cells.mi != j])  # the full fit's index of sub.items
        if warm:
            th_sub, b_sub = _refit_warm(sub, model, s, full, j, idx, used)
            z_sub = sub_z(sub, th_sub, b_sub)
        else:
            refit = fit_cells(
                sub,
                model=model,
                method="map",
                seed=seed,
                scale=scale,
                settings=s,
                floor=None if used is None else used[idx],
            )
            b_sub, z_sub = refit.items["b"].to_numpy(), refit.items["z"].to_numpy()
        return _loo_row(cells.models[j], j, idx, b_sub, z_sub, full)

    approximate = exact_max_models is not None and cells.n_models > exact_max_models
    extra: dict[str, Any] = {"mode": "exact"}
    if not approximate:
        rows = [
            exact_row(j) for j in progress(range(cells.n_models), desc="LOO refits", unit="fit")
        ]
    else:
        rows = []
        dropped = np.arange(cells.n_models)
        per_model = cells.n_models * cells.n_items  # the sweeps' dense work per dropped model
        sampled = approx_max_work is not None and cells.n_models * per_model > approx_max_work
        if sampled:
            size = max(1, min(cells.n_models, int(approx_max_work or 0) // per_model))
            rng = np.random.default_rng(seed)
            dropped = np.sort(rng.choice(cells.n_models, size=size, replace=False))
        steps = one_step_loo(cells, s, theta_full, b_full, a_full, dropped, floor=used)
        _, k_all, n_all = cells.item_stats()
        bounds = np.searchsorted(cells.mi, np.arange(cells.n_models + 1))  # sorted by model
        for j, (idx, th_sub, b_sub) in zip(dropped.tolist(), steps, strict=True):
            kj, nj = np.zeros(cells.n_items), np.zeros(cells.n_items)
            rows_j = slice(int(bounds[j]), int(bounds[j + 1]))
            kj[cells.ii[rows_j]], nj[cells.ii[rows_j]] = cells.k[rows_j], cells.n[rows_j]
            k_i, n_i = (k_all - kj)[idx], (n_all - nj)[idx]
            if used is not None and a_full is not None:
                b_sub = _axis_b(model, th_sub, b_sub, a_full[idx], used[idx])
            z_sub = Calibration(
                model=model,
                abilities={},
                scale=make_scale(scale, th_sub, b_sub, (k_i >= n_i) | (k_i <= 0)),
                panel=(),
                created_by="",
            ).to_z(b_sub)
            rows.append(_loo_row(cells.models[j], j, idx, b_sub, z_sub, full))
        order = np.argsort([-r["max_abs_dz"] for r in rows], kind="stable")
        n_exact = min(exact_top, len(rows))
        if exact_max_cells is not None:
            n_exact = min(n_exact, exact_max_cells // max(int(cells.k.size), 1))
        top = order[:n_exact].tolist()
        err: float | None = 0.0 if top else None
        for r in progress(top, desc="LOO exact refits", unit="fit"):
            exact = exact_row(int(dropped[r]))
            err = max(err or 0.0, abs(exact["max_abs_dz"] - rows[r]["max_abs_dz"]))
            rows[r] = exact
        extra = {
            "mode": "approximate",
            "n_exact": len(top),
            "exact_max_models": exact_max_models,
            "approx_tol": LOO_APPROX_TOL,
            "approx_error": err,
        }
        if sampled:
            extra |= {"sampled": True, "n_dropped": int(dropped.size)}
    col = {key: np.array([r[key] for r in rows]) for key in rows[0] if key != "dropped"}
    overall = {
        "max_abs_dz": float(col["max_abs_dz"].max()),
        "mean_abs_dz": float(col["mean_abs_dz"].mean()),
        "max_abs_dz_aligned": float(col["max_abs_dz_aligned"].max()),
        "mean_abs_dz_aligned": float(col["mean_abs_dz_aligned"].mean()),
        "min_spearman_b": float(np.nanmin(col["spearman_b"])),
        "mean_spearman_b": float(np.nanmean(col["spearman_b"])),
    }
    return {
        "model": model,
        "scale": scale,
        "seed": seed,
        "method": "warm" if warm else "refit",
        **extra,
        "n_models": cells.n_models,
        "n_items": cells.n_items,
        "per_model": rows,
        "overall": overall,
    }
