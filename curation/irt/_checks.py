"""Model checks: BIC for 1PL vs 2PL and leave-one-model-out stability."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
from scipy.stats import spearmanr

from curation.irt._data import encode
from curation.irt._fit import bic, bic_classic, fit_cells, n_params
from curation.irt._map import fit_map_1pl, fit_map_2pl
from curation.irt._settings import MODELS, SCALES, ModelType, ScaleMethod, Settings, check_choice
from curation.irt._threads import pinned


@pinned
def bic_compare(responses: pl.DataFrame, *, seed: int = 0, **settings: Any) -> dict[str, Any]:
    """Fit 1PL and 2PL by MAP and choose by BIC (lower is better).

    ``bic`` is the crossed-design BIC (see :func:`curation.irt._fit.bic`), which decides;
    ``bic_classic`` (n = all trials) is reported beside it for comparison. ``seed`` is
    recorded only: MAP fits are deterministic.
    """
    s = Settings.from_kwargs(**settings)
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


@pinned
def loo_stability(
    responses: pl.DataFrame,
    *,
    model: ModelType = "1pl",
    seed: int = 0,
    scale: ScaleMethod = "panel",
    **settings: Any,
) -> dict[str, Any]:
    """Refit (MAP) without each model in turn and report how far the items move.

    Two views of Δz per dropped model, over the items still answered without it:
    ``*_abs_dz``: the refit's own z (its own panel scale), i.e. how much the published
    z depends on that model being in the panel; ``*_abs_dz_aligned``: the refit's b
    shifted onto the full fit's location (mean of the remaining models' full-fit
    abilities) and mapped with the full calibration, i.e. estimation noise only.
    ``spearman_b``: rank correlation of b between full fit and refit.
    """
    check_choice("model", model, MODELS)
    check_choice("scale", scale, SCALES)
    s = Settings.from_kwargs(**settings)
    cells = encode(responses)
    if cells.n_models < 3:
        raise ValueError(f"leave-one-model-out needs at least 3 models, got {cells.n_models}")
    full = fit_cells(cells, model=model, method="map", seed=seed, scale=scale, settings=s)
    cal = full.calibration
    b_full = full.items["b"].to_numpy()
    z_full = full.items["z"].to_numpy()
    theta_full = full.models["theta"].to_numpy()
    index = {item: i for i, item in enumerate(cells.items)}
    rows = []
    for j, dropped in enumerate(cells.models):
        sub = cells.drop_model(j)
        refit = fit_cells(sub, model=model, method="map", seed=seed, scale=scale, settings=s)
        idx = np.array([index[item] for item in sub.items], dtype=np.int64)
        b_sub = refit.items["b"].to_numpy()
        shift = float(np.mean(np.delete(theta_full, j)))
        dz = np.abs(refit.items["z"].to_numpy() - z_full[idx])
        dz_aligned = np.abs(cal.to_z(b_sub + shift) - z_full[idx])
        rho = spearmanr(b_full[idx], b_sub).statistic if idx.size > 1 else float("nan")
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
        "n_models": cells.n_models,
        "n_items": cells.n_items,
        "per_model": rows,
        "overall": overall,
    }
