"""``fit``: MAP or NUTS, one result type, one calibration.

The MAP fit always runs (it is cheap and it starts the NUTS chains); NUTS replaces its
point estimates and intervals by posterior summaries when requested and feasible.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from curation.irt._data import Cells, encode
from curation.irt._map import MapFit, fit_map_1pl, fit_map_2pl
from curation.irt._scale import Calibration, make_scale
from curation.irt._settings import (
    IDENTIFICATION,
    METHODS,
    MODELS,
    SCALES,
    Z90,
    FitSettings,
    Method,
    ModelType,
    ScaleMethod,
    check_choice,
)
from curation.irt._threads import pinned

ITEM_COLUMNS = ("item", "b", "se", "a", "z", "z_low", "z_high", "n_models", "p_mean", "bound")


@dataclass(frozen=True)
class FitResult:
    """One benchmark's fit.

    ``items``: item, b, se, a (null for 1PL), z, z_low, z_high (90% interval: Laplace
    for MAP, posterior quantiles for NUTS), n_models, p_mean (observed proportion
    correct), bound (null, "all-solved" or "none-solved": such an item's b is only a
    bound set by the prior, and its interval is open towards that end of the scale).
    ``models``: model, theta, se. ``draws_b``: posterior draws of b (draws × items, in
    ``items`` order) for NUTS, None for MAP.
    """

    items: pl.DataFrame
    models: pl.DataFrame
    calibration: Calibration
    diagnostics: dict[str, Any]
    draws_b: np.ndarray | None = None

    def as_written(self) -> FitResult:
        """This fit with every float to the stated precision (:mod:`curation.io.precision`):
        what a stage writes, draws and plots, so its files are the same on every machine
        (the fit's last bits depend on the CPU's BLAS kernels)."""
        from curation.io.precision import round_array, round_frame

        return FitResult(
            items=round_frame(self.items),
            models=round_frame(self.models),
            calibration=self.calibration.as_written(),
            diagnostics=self.diagnostics,
            draws_b=None if self.draws_b is None else round_array(self.draws_b),
        )

    @property
    def draws_z(self) -> np.ndarray | None:
        """Posterior draws of z on the calibration's scale (None for MAP)."""
        return None if self.draws_b is None else self.calibration.to_z(self.draws_b)


def n_params(model: str, n_models: int, n_items: int) -> int:
    """Free parameters: abilities less one (mean fixed at 0), plus 1 or 2 per item."""
    return (n_models - 1) + n_items * (2 if model == "2pl" else 1)


def bic(loglik: float, cells: Cells, model: str) -> float:
    """BIC for a crossed design: each parameter pays log of the trials that inform it.

    An item's b (and a) is informed only by that item's trials, an ability only by its
    model's trials, so each item parameter is penalised by log(trials of the item) and
    each of the M − 1 free abilities by the mean log(trials of a model). This is the
    Laplace approximation behind BIC applied per parameter; charging every item
    parameter log(all trials) (:func:`bic_classic`) over-penalises 2PL so heavily
    that it almost never wins, whatever the data.
    """
    _, _, n_item = cells.item_stats()
    n_model = cells.model_trials()
    per_item = 2 if model == "2pl" else 1
    penalty = per_item * float(np.sum(np.log(n_item)))
    penalty += (cells.n_models - 1) * float(np.mean(np.log(n_model)))
    return -2.0 * loglik + penalty


def bic_classic(loglik: float, cells: Cells, model: str) -> float:
    """Textbook BIC with n = all Bernoulli trials (binary and aggregated data agree)."""
    k = n_params(model, cells.n_models, cells.n_items)
    return -2.0 * loglik + k * math.log(float(cells.n.sum()))


def fit_map(cells: Cells, model: str, settings: FitSettings) -> MapFit:
    """The MAP fit of ``model`` (1pl or 2pl) on the cells: one entry point for callers that
    hold cells already (refits, bootstrap), so they never pick the solver themselves."""
    return fit_map_2pl(cells, settings) if model == "2pl" else fit_map_1pl(cells, settings)


def bound_labels(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """ "all-solved" / "none-solved" / None per item (from pooled counts over the panel)."""
    labels = np.full(k.shape, None, dtype=object)
    labels[k >= n] = "all-solved"
    labels[k <= 0] = "none-solved"
    return labels


def interval_z(
    calibration: Calibration, low: np.ndarray, high: np.ndarray, bound: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Map a b interval to z; a bounded item's interval is open to its end of the scale."""
    z_low, z_high = calibration.to_z(low), calibration.to_z(high)
    z_low[bound == "all-solved"] = 0.0
    z_high[bound == "none-solved"] = 1.0
    return z_low, z_high


def fit_cells(
    cells: Cells,
    *,
    model: str,
    method: str,
    seed: int,
    scale: ScaleMethod,
    settings: FitSettings,
    benchmark: str | None = None,
) -> FitResult:
    if cells.n_models < 2:
        raise ValueError(
            f"an IRT fit needs at least 2 models, got {cells.n_models} ({list(cells.models)})"
        )
    mp = fit_map(cells, model, settings)
    n_models_i, k_i, n_i = cells.item_stats()
    bound = bound_labels(k_i, n_i)
    n_obs = float(cells.n.sum())
    k_par = n_params(model, cells.n_models, cells.n_items)
    diag: dict[str, Any] = {
        "requested_method": method,
        "method": "map",
        "interval_source": "laplace",
        "model": model,
        "identification": IDENTIFICATION,
        "converged": mp.converged,
        "iterations": mp.iterations,
        "loglik": mp.loglik,
        "n_params": k_par,
        "n_obs": n_obs,
        "bic": bic(mp.loglik, cells, model),
        "n_models": cells.n_models,
        "n_items": cells.n_items,
        "n_cells": int(cells.k.size),
        "n_all_solved": int(np.sum(bound == "all-solved")),
        "n_none_solved": int(np.sum(bound == "none-solved")),
        "layout": mp.layout,
        "curvature": mp.curvature,
    }
    draws_b = None
    theta, theta_se, b, b_se, a = mp.theta, mp.theta_se, mp.b, mp.b_se, mp.a
    b_low, b_high = b - Z90 * b_se, b + Z90 * b_se
    if method == "nuts":
        if cells.k.size > settings.nuts_max_cells:
            diag["fallback_reason"] = (
                f"{cells.k.size} cells > nuts_max_cells={settings.nuts_max_cells}: "
                "MAP with Laplace intervals stands in"
            )
        else:
            from curation.irt._nuts import fit_nuts  # lazy: imports jax

            nf = fit_nuts(cells, settings, model=model, seed=seed, start=mp)
            theta, theta_se = nf.theta.mean(axis=0), nf.theta.std(axis=0, ddof=1)
            b, b_se = nf.b.mean(axis=0), nf.b.std(axis=0, ddof=1)
            a = None if nf.a is None else nf.a.mean(axis=0)
            b_low, b_high = np.quantile(nf.b, [0.05, 0.95], axis=0)
            draws_b = nf.b
            diag.update(nf.diagnostics)
            diag.update(
                method="nuts",
                interval_source="posterior",
                iterations=settings.warmup + settings.draws,  # per chain
                map_iterations=mp.iterations,
            )
            diag["loglik_at"] = "map"
    used = diag["method"]
    calibration = Calibration(
        model=model,
        abilities={name: float(t) for name, t in zip(cells.models, theta, strict=True)},
        scale=make_scale(scale, theta, b, (k_i >= n_i) | (k_i <= 0)),
        panel=cells.models,
        settings={"method": used, "seed": seed, **settings.to_dict(used)},
        benchmark=benchmark,
    )
    z_low, z_high = interval_z(calibration, b_low, b_high, bound)
    items = pl.DataFrame(
        {
            "item": pl.Series(cells.items, dtype=pl.String),
            "b": b,
            "se": b_se,
            "a": pl.Series(a if a is not None else [None] * cells.n_items, dtype=pl.Float64),
            "z": calibration.to_z(b),
            "z_low": z_low,
            "z_high": z_high,
            "n_models": pl.Series(n_models_i, dtype=pl.Int64),
            "p_mean": k_i / n_i,
            "bound": pl.Series(bound.tolist(), dtype=pl.String),
        }
    )
    models = pl.DataFrame(
        {"model": pl.Series(cells.models, dtype=pl.String), "theta": theta, "se": theta_se}
    )
    return FitResult(items, models, calibration, diag, draws_b)


@pinned
def fit(
    responses: pl.DataFrame | pl.LazyFrame | Cells,
    *,
    model: ModelType = "1pl",
    method: Method = "map",
    seed: int = 0,
    scale: ScaleMethod = "panel",
    benchmark: str | None = None,
    settings: FitSettings | None = None,
    **overrides: Any,
) -> FitResult:
    """Fit a 1PL or 2PL model to one benchmark's responses.

    ``responses``: long polars frame with model, item, n_trials, n_correct (other
    columns ignored; duplicate cells summed; missing cells simply absent); ids may be
    text, integers, categorical or Enum. A lazy scan of a file (``pl.scan_parquet``,
    ``scan_csv``, ``scan_ndjson``) is read in one streaming pass, the ids coded as they
    stream: a leaderboard-sized table never exists as per-row strings. Already encoded
    :class:`Cells` (:func:`encode`) are fitted as they are.
    ``method="map"``: posterior mode by block Newton, Laplace standard errors — fast at
    any size. ``method="nuts"``: full posterior (needs the ``bayes`` extra); above
    ``nuts_max_cells`` cells the MAP fit stands in and ``diagnostics`` says so.
    ``scale`` fixes the logit → z map stored in the calibration (see
    :class:`Calibration`). ``settings`` (a :class:`FitSettings`, default its defaults)
    and keyword ``overrides`` of its fields: priors (theta_sd, b_sd, log_a_sd), MAP
    (max_iter, tol, layout) and NUTS (chains, warmup, draws, target_accept,
    max_tree_depth, chain_method, nuts_max_cells) knobs; unknown names are an error.
    Identification: mean ability 0.
    """
    check_choice("model", model, MODELS)
    check_choice("method", method, METHODS)
    check_choice("scale", scale, SCALES)
    s = FitSettings.of(settings, **overrides)
    cells = encode(responses)
    return fit_cells(
        cells, model=model, method=method, seed=seed, scale=scale, settings=s, benchmark=benchmark
    )
