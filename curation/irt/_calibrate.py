"""Online calibration: new items onto an existing scale, abilities held fixed.

With the panel's abilities fixed, the items decouple: each new item's b (and a, for
2PL/3PL) is a tiny independent problem, solved for all items at once by vectorised
Newton with a per-item line search, under the same weak prior as the bank fit. The
standard error comes from the curvature at the mode (ability uncertainty ignored: the
bank's abilities rest on thousands of responses, one new item on a few hundred).
A 3PL item keeps a guessing floor (given, else the one the calibration recorded for new
items) and is placed, like the bank's, at its 1PL-equivalent location on the panel
(:mod:`curation.irt._floor`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np
import polars as pl
from numpy.typing import NDArray

from curation.irt._data import Cells, cells_of, encode
from curation.irt._fit import NEW_ITEM_FLOOR, bound_labels, interval_z
from curation.irt._guess import floor_cell_loglik, floor_terms
from curation.irt._map import logistic, softplus
from curation.irt._numeric import logit
from curation.irt._scale import Calibration
from curation.irt._settings import MODELS, Z90, FitSettings, ModelType, check_choice
from curation.irt._threads import pinned

_FULL_STEP = 1e-6


def _solve_items(
    th: np.ndarray,
    ii: np.ndarray,
    k: np.ndarray,
    n: np.ndarray,
    n_items: int,
    *,
    vb: float,
    va: float,
    two_pl: bool,
    max_iter: int = 100,
    tol: float = 1e-10,
    floor: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, bool]:
    """Per-item MAP of b (and log a) given per-cell abilities ``th``; ``floor`` (3PL, with
    ``two_pl``): the guessing floor per item.

    Returns b, its standard error, a (None for 1PL) and whether all items converged.
    """
    c = None if floor is None else floor[ii]

    def cs(x: np.ndarray) -> NDArray[np.float64]:
        # a weighted bincount is float64; numpy's stubs type every bincount as integer
        return cast("NDArray[np.float64]", np.bincount(ii, weights=x, minlength=n_items))

    item_n = cs(n)
    b = cs(n * th) / item_n - logit((cs(k) + 0.5) / (item_n + 1.0))
    al = np.zeros(n_items)

    def objective(b: np.ndarray, al: np.ndarray) -> NDArray[np.float64]:
        eta = np.exp(al)[ii] * (th - b[ii])
        ll = k * eta - n * softplus(eta) if c is None else floor_cell_loglik(k, n, eta, c)
        f: NDArray[np.float64] = -cs(ll) + 0.5 * vb * b * b
        return f + 0.5 * va * al * al if two_pl else f

    def derivatives(b: np.ndarray, al: np.ndarray, observed: bool) -> tuple[np.ndarray, ...]:
        a = np.exp(al)
        eta = a[ii] * (th - b[ii])
        if c is None:
            p = logistic(eta)
            r = k - n * p
            w = w_obs = n * p * (1.0 - p)
        else:
            w, r = floor_terms(k, n, eta, c, observed=False)
            w_obs, _ = floor_terms(k, n, eta, c, observed=True)
        if not two_pl:
            h = cs(w) + vb
            return cs(r) + vb * b, np.zeros(n_items), h, np.ones(n_items), np.zeros(n_items)
        col_r = cs(r)
        g_b, g_a = a * col_r + vb * b, -cs(r * eta) + va * al
        h_bb = a * a * cs(w) + vb
        h_aa = cs(w * eta * eta) + va
        h_ba = -a * cs(w * eta)
        if observed:  # observed curvature where it is positive definite, Fisher elsewhere
            o_bb = a * a * cs(w_obs) + vb
            o_aa = cs(w_obs * eta * eta) + va - cs(r * eta)
            o_ba = -a * cs(w_obs * eta) + a * col_r
            pd = (o_bb > 0) & (o_aa > 0) & (o_bb * o_aa - o_ba * o_ba > 0)
            h_bb = np.where(pd, o_bb, h_bb)
            h_aa, h_ba = np.where(pd, o_aa, h_aa), np.where(pd, o_ba, h_ba)
        return g_b, g_a, h_bb, h_aa, h_ba

    f = objective(b, al)
    converged = False
    for _ in range(max_iter):
        g_b, g_a, h_bb, h_aa, h_ba = derivatives(b, al, observed=True)
        det = h_bb * h_aa - h_ba * h_ba
        db = -(h_aa * g_b - h_ba * g_a) / det
        da = -(h_bb * g_a - h_ba * g_b) / det
        slope = g_b * db + g_a * da
        small = np.maximum(np.abs(db), np.abs(da)) < _FULL_STEP
        t = np.ones(n_items)
        for _ in range(60):
            f_new = objective(b + t * db, al + t * da)
            bad = (f_new > f + 1e-4 * t * slope) & ~small
            if not bad.any():
                break
            t[bad] *= 0.5
        b, al, f = b + t * db, al + t * da, f_new
        if max(np.max(np.abs(t * db)), np.max(np.abs(t * da))) < tol:
            converged = True
            break
    _, _, h_bb, h_aa, h_ba = derivatives(b, al, observed=True)
    var_b = h_aa / (h_bb * h_aa - h_ba * h_ba)
    return b, np.sqrt(var_b), (np.exp(al) if two_pl else None), converged


@pinned
def calibrate_items(
    new_responses: pl.DataFrame,
    calibration: Calibration,
    *,
    model: ModelType = "1pl",
    floor: float | Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """Put new items on a calibration's scale without refitting the bank.

    Abilities come from ``calibration`` and stay fixed; each item's b is its MAP under
    the calibration's b prior, with an SE from the curvature; z and its 90% interval
    use the stored scale (:meth:`Calibration.to_z`). Every model in ``new_responses``
    must belong to the calibration panel — an unknown model has no ability on this
    scale. ``model`` must match the calibration's model (a 1PL ability scale is not a
    2PL one). Returns item, b, se, z, z_low, z_high, n_models, n_trials, bound (and a
    last, for 2PL; a, c and b_curve for 3PL, whose b is the 1PL-equivalent location).
    ``floor`` (3PL): the new items' guessing floor, one for all or per item (default:
    the one the calibration recorded for new items).
    """
    check_choice("model", model, MODELS)
    if not isinstance(calibration, Calibration):
        raise TypeError(f"calibration must be a Calibration, got {type(calibration).__name__}")
    if model != calibration.model:
        raise ValueError(
            f"calibration was fitted with model={calibration.model!r}; calibrate_items("
            f"model={model!r}) would put the items on a different scale"
        )
    return _calibrate_cells(encode(new_responses, name="new_responses"), calibration, model, floor)


@pinned
def calibrate_counts(
    models: Sequence[str],
    items: Sequence[str],
    n_trials: Sequence[int],
    n_correct: Sequence[int],
    calibration: Calibration,
    floor: float | Mapping[str, float] | None = None,
) -> pl.DataFrame:
    """:func:`calibrate_items` of per-(model, item) counts given as parallel sequences.

    The same result as ``calibrate_items`` of the frame with these rows (same cell order,
    same arithmetic), without building and validating a frame: BenchFill calibrates a
    handful of children thousands of times per run, where that round trip was most of
    the cost. Counts must be non-negative with ``n_correct <= n_trials`` (not checked
    row by row beyond that; use ``calibrate_items`` for outside data).
    """
    k = np.asarray(n_correct, dtype=np.float64)
    n = np.asarray(n_trials, dtype=np.float64)
    if k.shape != n.shape or len(models) != k.size or len(items) != k.size:
        raise ValueError("models, items, n_trials and n_correct must have the same length")
    if k.size and (bool((k < 0).any()) or bool((k > n).any())):
        raise ValueError("counts need 0 <= n_correct <= n_trials")
    model_names = tuple(sorted(set(models)))  # sorted, as encode codes them
    item_names = tuple(sorted(set(items)))
    m_code = {m: i for i, m in enumerate(model_names)}
    i_code = {it: i for i, it in enumerate(item_names)}
    mi = np.fromiter((m_code[m] for m in models), dtype=np.int32, count=k.size)
    ii = np.fromiter((i_code[it] for it in items), dtype=np.int32, count=k.size)
    model = calibration.model
    check_choice("calibration.model", model, MODELS)
    cells = cells_of(model_names, item_names, mi, ii, k, n)
    return _calibrate_cells(cells, calibration, model, floor)  # type: ignore[arg-type]


def _floors(
    cells: Cells, calibration: Calibration, floor: float | Mapping[str, float] | None
) -> np.ndarray:
    default = calibration.settings.get(NEW_ITEM_FLOOR)
    if floor is None:
        if default is None:
            raise ValueError("a 3PL calibration needs the new items' guessing floor (floor=...)")
        return np.full(cells.n_items, float(default))
    if isinstance(floor, int | float):
        return np.full(cells.n_items, float(floor))
    missing = [i for i in cells.items if i not in floor and default is None]
    if missing:
        raise ValueError(f"no guessing floor for new item(s) {missing[:5]}")
    return np.array([float(floor.get(i, default)) for i in cells.items])  # type: ignore[arg-type]


def _calibrate_cells(
    cells: Cells,
    calibration: Calibration,
    model: ModelType,
    floor: float | Mapping[str, float] | None = None,
) -> pl.DataFrame:
    unknown = [m for m in cells.models if m not in calibration.abilities]
    if unknown:
        raise ValueError(
            f"new_responses has {len(unknown)} model(s) not in the calibration panel: {unknown}; "
            f"panel ({len(calibration.panel)}): {list(calibration.panel)}"
        )
    defaults = FitSettings()
    vb = float(calibration.settings.get("b_sd", defaults.b_sd)) ** -2
    va = float(calibration.settings.get("log_a_sd", defaults.log_a_sd)) ** -2
    theta = np.array([calibration.abilities[m] for m in cells.models])[cells.mi]
    c = _floors(cells, calibration, floor) if model == "3pl" else None
    b, se, a, _ = _solve_items(
        theta, cells.ii, cells.k, cells.n, cells.n_items, vb=vb, va=va, two_pl=model != "1pl",
        floor=c,
    )  # fmt: skip
    b_curve = b
    if c is not None:  # the bank's axis: 1PL-equivalent on the whole panel
        from curation.irt._floor import equivalent_b, equivalent_slope

        panel = calibration.theta
        b = equivalent_b(panel, b_curve, a, c)
        se = se * equivalent_slope(panel, b_curve, b, a, c)
    n_models_i, k_i, n_i = cells.item_stats()
    bound = bound_labels(k_i, n_i)
    z_low, z_high = interval_z(calibration, b - Z90 * se, b + Z90 * se, bound)
    out = pl.DataFrame(
        {
            "item": pl.Series(cells.items, dtype=pl.String),
            "b": b,
            "se": se,
            "z": calibration.to_z(b),
            "z_low": z_low,
            "z_high": z_high,
            "n_models": pl.Series(n_models_i, dtype=pl.Int64),
            "n_trials": pl.Series(n_i.astype(np.int64), dtype=pl.Int64),
            "bound": pl.Series(bound.tolist(), dtype=pl.String),
        }
    )
    if c is not None:
        return out.with_columns(
            a=pl.Series(a, dtype=pl.Float64),
            c=pl.Series(c, dtype=pl.Float64),
            b_curve=pl.Series(b_curve, dtype=pl.Float64),
        )
    return out.with_columns(a=pl.Series(a, dtype=pl.Float64)) if a is not None else out
