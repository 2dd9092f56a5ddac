"""``fit``: MAP or NUTS, one result type, one calibration.

The MAP fit always runs (it is cheap and it starts the NUTS chains); NUTS replaces its
point estimates and intervals by posterior summaries when requested and feasible.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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

NEW_ITEM_FLOOR = "new_item_floor"
"""A 3PL calibration's setting: the floor a new item gets unless its record gives one (the
median of the bank's floors: 1/options on a uniform multiple-choice benchmark)."""

ITEM_COLUMNS = (
    "item", "b", "se", "a", "c", "b_curve", "z", "z_low", "z_high", "n_models", "p_mean",
    "bound",
)  # fmt: skip


@dataclass(frozen=True)
class FitResult:
    """One benchmark's fit.

    ``items``: item, b, se, a (null for 1PL), c and b_curve (3PL, else null), z, z_low,
    z_high (90% interval: Laplace for MAP, posterior quantiles for NUTS), n_models,
    p_mean (observed proportion correct), bound (null, "all-solved" or "none-solved":
    such an item's b is only a bound set by the prior, and its interval is open towards
    that end of the scale). ``b`` is always the item's place on the axis z maps
    (``z = calibration.to_z(b)``): the curve's own location for 1PL/2PL, the
    1PL-equivalent location for 3PL (:func:`curation.irt._floor.equivalent_b`), whose
    curve P = c + (1 − c) σ(a (θ − b_curve)) has floor ``c``.
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


def n_params(model: str, n_models: int, n_items: int, shared_floor: bool = False) -> int:
    """Free parameters: abilities less one (mean fixed at 0), plus 1 (1PL) or 2 (2PL, 3PL:
    b and a, the floor fixed) per item, less one for the 2PL/3PL scale (mean log a = 0),
    plus one for a 3PL floor estimated and shared by the items whose options are unknown."""
    per_item = 1 if model == "1pl" else 2
    scale = 0 if model == "1pl" else 1
    return (n_models - 1) + n_items * per_item - scale + int(shared_floor)


def bic(loglik: float, cells: Cells, model: str, floor: np.ndarray | None = None) -> float:
    """BIC for a crossed design: each parameter pays log of the trials that inform it.

    An item's b (and a) is informed only by that item's trials, an ability only by its
    model's trials, so each item parameter is penalised by log(trials of the item) and
    each of the M − 1 free abilities by the mean log(trials of a model). This is the
    Laplace approximation behind BIC applied per parameter; charging every item
    parameter log(all trials) (:func:`bic_classic`) over-penalises 2PL so heavily
    that it almost never wins, whatever the data. A 3PL floor estimated for the items
    whose options are unknown (``floor`` NaN there) pays log of their trials.
    """
    _, _, n_item = cells.item_stats()
    n_model = cells.model_trials()
    per_item = 1 if model == "1pl" else 2
    penalty = per_item * float(np.sum(np.log(n_item)))
    penalty += (cells.n_models - 1) * float(np.mean(np.log(n_model)))
    if model == "3pl" and floor is not None and np.isnan(floor).any():
        penalty += float(np.log(np.sum(n_item[np.isnan(floor)])))
    return -2.0 * loglik + penalty


def bic_classic(loglik: float, cells: Cells, model: str, floor: np.ndarray | None = None) -> float:
    """Textbook BIC with n = all Bernoulli trials (binary and aggregated data agree)."""
    shared = model == "3pl" and floor is not None and bool(np.isnan(floor).any())
    k = n_params(model, cells.n_models, cells.n_items, shared)
    return -2.0 * loglik + k * math.log(float(cells.n.sum()))


def fit_map(
    cells: Cells,
    model: str,
    settings: FitSettings,
    floor: np.ndarray | None = None,
    start: MapFit | None = None,
) -> MapFit:
    """The MAP fit of ``model`` (1pl, 2pl or 3pl) on the cells: one entry point for callers
    that hold cells already (refits, bootstrap), so they never pick the solver themselves.

    ``floor`` (3PL): the guessing floor per item, NaN where unknown (those share one
    estimated floor; None: all unknown). ``start``: a 1PL fit of the same cells (2PL/3PL
    start there; fitted here if not given).
    """
    if model == "1pl":
        return fit_map_1pl(cells, settings)
    if model == "2pl":
        return fit_map_2pl(cells, settings, start)
    from curation.irt._floor import fit_map_3pl

    if floor is None:
        floor = np.full(cells.n_items, np.nan)
    return fit_map_3pl(cells, settings, floor, start)


def axis_location(mp: MapFit) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each item's place on the axis z maps, its SE and its 90% Laplace interval.

    1PL/2PL: the curve's b. 3PL: the 1PL-equivalent location (:mod:`curation.irt._floor`);
    it is increasing in the curve's b, so the interval's ends map to its ends, and the
    SE is the curve's SE times the map's slope there (the delta method).
    """
    b, se = mp.b, mp.b_se
    if mp.c is None:
        return b, se, b - Z90 * se, b + Z90 * se
    from curation.irt._floor import equivalent_b, equivalent_slope

    eq = equivalent_b(mp.theta, b, mp.a, mp.c)
    low = equivalent_b(mp.theta, b - Z90 * se, mp.a, mp.c)
    high = equivalent_b(mp.theta, b + Z90 * se, mp.a, mp.c)
    return eq, se * equivalent_slope(mp.theta, b, eq, mp.a, mp.c), low, high


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
    floor: np.ndarray | None = None,
    start: MapFit | None = None,
    fitted: MapFit | None = None,
) -> FitResult:
    if cells.n_models < 2:
        raise ValueError(
            f"an IRT fit needs at least 2 models, got {cells.n_models} ({list(cells.models)})"
        )
    mp = fitted if fitted is not None else fit_map(cells, model, settings, floor, start)
    n_models_i, k_i, n_i = cells.item_stats()
    bound = bound_labels(k_i, n_i)
    n_obs = float(cells.n.sum())
    shared = model == "3pl" and (floor is None or bool(np.isnan(floor).any()))
    k_par = n_params(model, cells.n_models, cells.n_items, shared)
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
        "bic": bic(mp.loglik, cells, model, mp.c if shared else None),
        "n_models": cells.n_models,
        "n_items": cells.n_items,
        "n_cells": int(cells.k.size),
        "n_all_solved": int(np.sum(bound == "all-solved")),
        "n_none_solved": int(np.sum(bound == "none-solved")),
        "layout": mp.layout,
        "curvature": mp.curvature,
    }
    if shared and mp.c is not None:
        diag["shared_floor"] = float(mp.c[np.isnan(floor)][0] if floor is not None else mp.c[0])
    draws_b = None
    theta, theta_se, a = mp.theta, mp.theta_se, mp.a
    b, b_se, b_low, b_high = axis_location(mp)
    if method == "nuts":
        if model == "3pl":
            diag["fallback_reason"] = "NUTS has no 3PL: MAP with Laplace intervals stands in"
        elif cells.k.size > settings.nuts_max_cells:
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
        settings={
            "method": used,
            "seed": seed,
            **settings.to_dict(used, model),
            # the floor a new item gets unless its record says (online calibration)
            **({NEW_ITEM_FLOOR: float(np.median(mp.c))} if mp.c is not None else {}),
        },
        benchmark=benchmark,
    )
    z_low, z_high = interval_z(calibration, b_low, b_high, bound)
    items = pl.DataFrame(
        {
            "item": pl.Series(cells.items, dtype=pl.String),
            "b": b,
            "se": b_se,
            "a": pl.Series(a if a is not None else [None] * cells.n_items, dtype=pl.Float64),
            "c": pl.Series(mp.c if mp.c is not None else [None] * cells.n_items, dtype=pl.Float64),
            "b_curve": pl.Series(
                mp.b if mp.c is not None else [None] * cells.n_items, dtype=pl.Float64
            ),
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
    floor: Mapping[str, float | None] | None = None,
    fitted: MapFit | None = None,
    **overrides: Any,
) -> FitResult:
    """Fit a 1PL, 2PL or 3PL model to one benchmark's responses.

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
    ``floor`` (3PL): item -> guessing floor (1/options; 0 for a free-response item;
    None or absent: unknown, and those items share one floor, estimated under the
    ``c_mean``/``c_strength`` Beta prior). Identification: mean ability 0, and for
    2PL/3PL mean log a = 0. ``fitted``: the MAP mode of the same cells, model, floors
    and settings already at hand (:attr:`ModelChoice.fits` of :func:`choose_model`),
    used as this fit's mode instead of solving again (a leaderboard's fit costs seconds
    to minutes).
    """
    check_choice("model", model, MODELS)
    check_choice("method", method, METHODS)
    check_choice("scale", scale, SCALES)
    s = FitSettings.of(settings, **overrides)
    cells = encode(responses)
    return fit_cells(
        cells,
        model=model,
        method=method,
        seed=seed,
        scale=scale,
        settings=s,
        benchmark=benchmark,
        floor=floor_array(cells.items, floor) if model == "3pl" else None,
        fitted=fitted,
    )


def floor_array(items: Sequence[str], floor: Mapping[str, float | None] | None) -> np.ndarray:
    """Floors in ``items`` order, NaN where unknown (absent, None or NaN)."""
    out = np.full(len(items), np.nan)
    if floor:
        for i, item in enumerate(items):
            v = floor.get(item)
            if v is not None:
                out[i] = float(v)
    return out
