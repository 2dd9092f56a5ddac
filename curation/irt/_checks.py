"""Model checks: BIC for 1PL vs 2PL and leave-one-model-out stability."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl

from curation.irt._data import Cells, encode
from curation.irt._fit import FitResult, bic, bic_classic, fit_cells, n_params
from curation.irt._loo import refit_1pl, refit_2pl, warm_start
from curation.irt._map import _big, fit_map_1pl, fit_map_2pl
from curation.irt._scale import Calibration, make_scale
from curation.irt._settings import MODELS, SCALES, FitSettings, ModelType, ScaleMethod, check_choice
from curation.irt._threads import pinned


@pinned
def bic_compare(
    responses: pl.DataFrame,
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


def _refit_warm(
    sub: Cells, model: str, s: FitSettings, full: FitResult, j: int, idx: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    keep = np.delete(np.arange(full.models.height), j)
    th0, b0 = warm_start(full.models["theta"].to_numpy(), full.items["b"].to_numpy(), keep, idx)
    if model == "2pl":
        al0 = np.log(full.items["a"].to_numpy()[idx])
        th, b, _, _ = refit_2pl(sub, s, th0, b0, al0)
    else:
        th, b, _, _ = refit_1pl(sub, s, th0, b0)
    return th, b


@pinned
def loo_stability(
    responses: pl.DataFrame,
    *,
    model: ModelType = "1pl",
    seed: int = 0,
    scale: ScaleMethod = "panel",
    method: LooMethod = "warm",
    settings: FitSettings | None = None,
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
    """
    check_choice("model", model, MODELS)
    check_choice("scale", scale, SCALES)
    check_choice("method", method, LOO_METHODS)
    s = FitSettings.of(settings, **overrides)
    cells = encode(responses)
    if cells.n_models < 3:
        raise ValueError(f"leave-one-model-out needs at least 3 models, got {cells.n_models}")
    full = fit_cells(cells, model=model, method="map", seed=seed, scale=scale, settings=s)
    cal = full.calibration
    b_full = full.items["b"].to_numpy()
    z_full = full.items["z"].to_numpy()
    theta_full = full.models["theta"].to_numpy()
    warm = method == "warm" and not _big(cells, s)
    rows = []
    for j, dropped in enumerate(cells.models):
        sub = cells.drop_model(j)
        idx = np.unique(cells.ii[cells.mi != j])  # the full fit's index of sub.items
        if warm:
            th_sub, b_sub = _refit_warm(sub, model, s, full, j, idx)
            _, k_i, n_i = sub.item_stats()
            z_sub = Calibration(
                model=model,
                abilities=dict(zip(sub.models, th_sub.tolist(), strict=True)),
                scale=make_scale(scale, th_sub, b_sub, (k_i >= n_i) | (k_i <= 0)),
                panel=sub.models,
                created_by="",
            ).to_z(b_sub)
        else:
            refit = fit_cells(sub, model=model, method="map", seed=seed, scale=scale, settings=s)
            b_sub, z_sub = refit.items["b"].to_numpy(), refit.items["z"].to_numpy()
        shift = float(np.mean(np.delete(theta_full, j)))
        dz = np.abs(z_sub - z_full[idx])
        dz_aligned = np.abs(cal.to_z(b_sub + shift) - z_full[idx])
        rho = spearman(b_full[idx], b_sub) if idx.size > 1 else float("nan")
        rows.append(
            {
                "dropped": dropped,
                "n_items": int(idx.size),
                "max_abs_dz": float(dz.max()),
                "mean_abs_dz": float(dz.mean()),
                "max_abs_dz_aligned": float(dz_aligned.max()),
                "mean_abs_dz_aligned": float(dz_aligned.mean()),
                "spearman_b": float(rho),
            }
        )
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
        "n_models": cells.n_models,
        "n_items": cells.n_items,
        "per_model": rows,
        "overall": overall,
    }
