"""A new model's full-benchmark score from its responses on any items (gp-IRT style).

The item parameters are fixed (the stored calibration, no refit). The model's ability
gets a grid posterior (exact in 1-D) under a normal prior fitted to the panel's
abilities; the full-benchmark accuracy is then

    (sum over seen items of n_correct/n_trials + sum over unseen items of E[p_i(theta)]) / N

with N the bank's items: the per-item success rate averaged over items, which is how
``curation.subsets.model_scores`` scores a model. Its interval comes from Monte Carlo
draws of theta from the posterior followed by the unseen items' outcomes (binomial draws
at ``unseen_trials`` trials each, Bernoulli at one; above :data:`NORMAL_ABOVE` unseen
items their sum is drawn from its normal approximation, exact mean and variance given
theta), so it holds
both the ability's uncertainty and the unseen items' Bernoulli noise. A full run has no
unseen item: the estimate is the observed score and the interval has zero width.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from curation.errors import InputError
from curation.estimate._bank import FloatArray, ItemBank
from curation.estimate._settings import ESTIMATORS, EstimationSettings, EstimatorName

NORMAL_ABOVE = 100
"""Above this many unseen items their summed outcome is drawn from its normal
approximation (exact mean and variance given theta) instead of one binomial per item."""
_PRIOR_SD_MIN = 0.05
_PREDICT_POINTS = 80
_TAIL = 1e-12  # grid refinement keeps the range where the posterior exceeds this x its max


@dataclass(frozen=True)
class Observed:
    """One model's responses as positions in a bank: seen items, successes, trials."""

    idx: np.ndarray
    k: FloatArray
    n: FloatArray

    @property
    def rates(self) -> FloatArray:
        out: FloatArray = self.k / self.n
        return out


@dataclass(frozen=True)
class Prediction:
    """The posterior of one model's ability and of its full score (internal currency of
    :func:`estimate` and the validation: every estimator reads the same draws)."""

    n_items: int
    n_seen: int
    observed: float
    """Sum of the seen items' success rates."""
    irt: float
    """(observed + sum of E[p_i] over unseen items) / N."""
    draws: FloatArray
    """Draws of the full score."""
    floor: float
    """sqrt(sum over unseen items of p(1-p)) / N at the posterior-mean p: the spread the
    unseen items' own outcomes leave, whatever theta is."""
    theta_mean: float
    theta_low: float
    theta_high: float


@dataclass(frozen=True)
class ScoreEstimate:
    """One model's estimated full-benchmark accuracy with its intervals (``level``)."""

    benchmark: str | None
    model: str | None
    estimator: str
    """irt (the default: observed + IRT prediction of the unseen items), weighted (the
    design's weighted subset accuracy) or raw (plain subset accuracy)."""
    level: float
    n_items: int
    """Items of the benchmark (N)."""
    n_seen: int
    n_unseen: int
    subset_accuracy: float | None
    """Plain mean success rate over the seen items (None when none is seen)."""
    estimate: float
    low: float
    high: float
    exact: bool
    """Every item was seen: the estimate is the score itself, with zero width."""
    theta: float
    """Posterior mean ability (logits, the calibration's scale)."""
    theta_low: float
    theta_high: float
    z: float | None
    """theta on the benchmark's z axis (Calibration.to_z: the difficulty the model
    solves half the time; clipped to [0, 1] by the panel scale)."""
    z_low: float | None
    z_high: float | None
    rank: int
    """1 + number of panel models whose full score is higher than the estimate."""
    rank_low: int
    rank_high: int
    n_panel: int
    """Panel models ranked against (a panel model of the same name is left out)."""
    bernoulli_floor: float
    """sqrt(sum_unseen p(1-p)) / N: the error no estimator of the unseen items avoids."""
    draws: int
    seed: int
    interval_scale: float = 1.0
    """The factor the posterior interval's sides were widened by (a subset's conformal
    scale from its held-out validation; 1: the IRT posterior's own interval)."""

    @property
    def width(self) -> float:
        return self.high - self.low

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (schemas/estimate.schema.json: one entry of ``estimates``)."""
        return asdict(self)


def observed_of(
    bank: ItemBank,
    responses: pl.DataFrame | Mapping[str, tuple[int, int]],
    *,
    source: str = "responses",
) -> Observed:
    """Responses (a frame with item, n_trials, n_correct, or item -> (n_trials,
    n_correct)) as positions in ``bank``; duplicate items are summed, zero-trial rows
    dropped. An item the bank does not hold is an :class:`InputError` naming it."""
    if isinstance(responses, pl.DataFrame):
        missing = [c for c in ("item", "n_trials", "n_correct") if c not in responses.columns]
        if missing:
            raise InputError(f"responses lack column(s) {missing}", file=source)
        items = responses["item"].cast(pl.String).to_list()
        n_raw = responses["n_trials"].to_numpy()
        k_raw = responses["n_correct"].to_numpy()
    else:
        items = [str(i) for i in responses]
        n_raw = np.array([responses[i][0] for i in responses])
        k_raw = np.array([responses[i][1] for i in responses])
    n_raw = np.asarray(n_raw, dtype=np.float64)
    k_raw = np.asarray(k_raw, dtype=np.float64)
    index = bank.index()
    unknown = [i for i in items if i not in index]
    if unknown:
        where = f" ({bank.source})" if bank.source else ""
        raise InputError(
            f"item {unknown[0]!r} is not an item of benchmark {bank.benchmark or '?'}"
            f"{where}; {len(set(unknown))} unknown item(s) in all: estimate only items "
            "the calibration holds",
            file=source,
            field="item",
        )
    bad = ~np.isfinite(n_raw) | ~np.isfinite(k_raw) | (k_raw < 0) | (k_raw > n_raw) | (n_raw < 0)
    if bad.any():
        r = int(np.argmax(bad))
        raise InputError(
            f"item {items[r]!r}: n_correct {k_raw[r]} must lie in [0, n_trials = {n_raw[r]}]",
            file=source,
            record=f"row {r + 1}",
        )
    pos = np.array([index[i] for i in items], dtype=np.int64)
    nb = bank.n_items
    n = np.bincount(pos, weights=n_raw, minlength=nb).astype(np.float64)
    k = np.bincount(pos, weights=k_raw, minlength=nb).astype(np.float64)
    seen = np.flatnonzero(n > 0)
    return Observed(idx=seen, k=k[seen], n=n[seen])


def _prior(bank: ItemBank) -> tuple[float, float]:
    th = bank.theta
    return float(np.mean(th)), max(float(np.std(th, ddof=1)), _PRIOR_SD_MIN)


def _log_post(bank: ItemBank, obs: Observed, grid: FloatArray, mu: float, sd: float) -> FloatArray:
    lp: FloatArray = -0.5 * ((grid - mu) / sd) ** 2
    if obs.idx.size:
        eta = bank.a[obs.idx] * (grid[:, None] - bank.b[obs.idx])
        log_p, log_q = bank.log_p_of(eta, obs.idx)
        lp = lp + log_p @ obs.k + log_q @ (obs.n - obs.k)
    return lp


def _weights(lp: FloatArray) -> FloatArray:
    w = np.exp(lp - lp.max())
    out: FloatArray = w / w.sum()
    return out


def theta_posterior(bank: ItemBank, obs: Observed, points: int) -> tuple[FloatArray, FloatArray]:
    """(grid, posterior weights) of the ability: a coarse pass over the prior's +-8 sd,
    then ``points`` points over where the posterior has mass."""
    mu, sd = _prior(bank)
    grid = np.linspace(mu - 8 * sd, mu + 8 * sd, points)
    lp = _log_post(bank, obs, grid, mu, sd)
    keep = np.flatnonzero(lp >= lp.max() + np.log(_TAIL))
    step = grid[1] - grid[0]
    lo, hi = grid[keep[0]] - step, grid[keep[-1]] + step
    grid = np.linspace(lo, hi, points)
    return grid, _weights(_log_post(bank, obs, grid, mu, sd))


def _quadrature(grid: FloatArray, w: FloatArray, coarse: FloatArray, p: FloatArray) -> FloatArray:
    """E[p_i] under the posterior (``w`` on ``grid``) from p_i known on ``coarse``: each
    fine point's weight goes to its two coarse neighbours, linearly."""
    j = np.clip(np.searchsorted(coarse, grid, side="right") - 1, 0, coarse.size - 2)
    frac = np.clip((grid - coarse[j]) / (coarse[j + 1] - coarse[j]), 0.0, 1.0)
    wc = np.bincount(j, weights=w * (1 - frac), minlength=coarse.size)
    wc += np.bincount(j + 1, weights=w * frac, minlength=coarse.size)
    out: FloatArray = wc @ p
    return out


def _draw_theta(
    grid: FloatArray, w: FloatArray, draws: int, rng: np.random.Generator
) -> FloatArray:
    """Draws from the grid posterior: a grid point by its weight, spread uniformly over
    its cell (a piecewise-constant density)."""
    g = rng.choice(grid.size, size=draws, p=w)
    half = 0.5 * (grid[1] - grid[0]) if grid.size > 1 else 0.0
    out: FloatArray = grid[g] + rng.uniform(-half, half, size=draws)
    return out


def _quantiles(grid: FloatArray, w: FloatArray, qs: Sequence[float]) -> list[float]:
    cdf = np.cumsum(w)
    return [float(np.interp(q, cdf, grid)) for q in qs]


def predict(
    bank: ItemBank,
    obs: Observed,
    *,
    level: float,
    draws: int,
    grid_points: int,
    rng: np.random.Generator,
    unseen_trials: int | None = None,
) -> Prediction:
    """The posterior of the ability and of the full score (see the module docstring)."""
    n_items = bank.n_items
    grid, w = theta_posterior(bank, obs, grid_points)
    alpha = (1.0 - level) / 2.0
    t_low, t_high = _quantiles(grid, w, (alpha, 1.0 - alpha))
    theta_mean = float(w @ grid)
    observed = float(obs.rates.sum()) if obs.idx.size else 0.0
    unseen = np.ones(n_items, dtype=bool)
    unseen[obs.idx] = False
    u_idx = np.flatnonzero(unseen)
    if u_idx.size == 0:
        score = observed / n_items
        return Prediction(
            n_items, int(obs.idx.size), observed, score, np.full(draws, score), 0.0,
            theta_mean, t_low, t_high,
        )  # fmt: skip
    if unseen_trials is None:
        if obs.idx.size:
            values, counts = np.unique(obs.n, return_counts=True)
            unseen_trials = int(values[np.argmax(counts)])
        else:
            unseen_trials = 1
    t = float(max(unseen_trials, 1))
    a_u, b_u = bank.a[u_idx], bank.b[u_idx]
    # the unseen items' predictions on every `stride`-th grid point: smooth in theta, so
    # the quadrature (E[p_i]) and the interpolation (draws) lose nothing visible
    stride = max(1, grid.size // _PREDICT_POINTS)
    coarse = grid[::stride]
    if coarse[-1] != grid[-1]:
        coarse = np.append(coarse, grid[-1])
    p = bank.p_of(a_u * (coarse[:, None] - b_u), u_idx)  # coarse grid x unseen
    p_mean = _quadrature(grid, w, coarse, p)
    theta = _draw_theta(grid, w, draws, rng)
    if u_idx.size > NORMAL_ABOVE:
        mean_c = p.sum(axis=1)
        var_c = (p * (1.0 - p)).sum(axis=1) / t
        u = np.interp(theta, coarse, mean_c)
        u = u + np.sqrt(np.interp(theta, coarse, var_c)) * rng.standard_normal(draws)
        u = np.clip(u, 0.0, float(u_idx.size))
    else:
        p_draw = bank.p_of(a_u * (theta[:, None] - b_u), u_idx)
        if t == 1.0:  # Bernoulli: a uniform below p, ~20x cheaper than binomial(1, p)
            u = (rng.random(p_draw.shape) < p_draw).sum(axis=1).astype(np.float64)
        else:
            u = (rng.binomial(int(t), p_draw) / t).sum(axis=1)
    floor = float(np.sqrt(np.sum(p_mean * (1.0 - p_mean)) / t)) / n_items
    return Prediction(
        n_items=n_items,
        n_seen=int(obs.idx.size),
        observed=observed,
        irt=(observed + float(p_mean.sum())) / n_items,
        draws=(observed + u) / n_items,
        floor=floor,
        theta_mean=theta_mean,
        theta_low=t_low,
        theta_high=t_high,
    )


def point_estimate(
    bank: ItemBank,
    obs: Observed,
    pred: Prediction,
    estimator: EstimatorName,
    weights: Mapping[str, float] | None = None,
) -> float:
    """The full-score estimate of ``estimator`` from a prediction."""
    if estimator == "irt":
        return pred.irt
    if obs.idx.size == 0:
        raise InputError(f"estimator {estimator!r} needs at least one answered item")
    rates = obs.rates
    if estimator == "raw" or weights is None:
        return float(rates.mean())
    w = np.array([float(weights.get(bank.items[i], 0.0)) for i in obs.idx])
    if not w.sum() > 0:
        raise InputError(
            "estimator 'weighted' needs responses on the design's weighted items; none "
            "of the answered items has a weight"
        )
    return float(w @ rates / w.sum())


def interval(pred: Prediction, estimate: float, level: float) -> tuple[float, float]:
    """The full score's interval: the predictive draws' quantiles, re-centred on
    ``estimate`` when it is not the IRT estimate (the predictive spread, around the
    estimator's own point), within [0, 1]."""
    alpha = (1.0 - level) / 2.0
    shift = estimate - pred.irt
    lo, hi = np.quantile(pred.draws + shift, [alpha, 1.0 - alpha])
    return max(0.0, min(float(lo), estimate)), min(1.0, max(float(hi), estimate))


def _rank(
    bank: ItemBank, model: str | None, estimate: float, draws: FloatArray, level: float
) -> tuple[int, int, int, int]:
    keep = np.array([name != model for name in bank.panel])
    others = np.sort(bank.panel_scores[keep])
    n = others.size

    def above(x: FloatArray) -> np.ndarray:
        return n - np.searchsorted(others, x, side="right")

    ranks = 1 + above(draws)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(ranks, [alpha, 1.0 - alpha], method="inverted_cdf")
    point = int(1 + above(np.array([estimate]))[0])
    return point, int(min(lo, point)), int(max(hi, point)), n


def estimate_observed(
    bank: ItemBank,
    obs: Observed,
    *,
    model: str | None = None,
    estimator: EstimatorName = "irt",
    weights: Mapping[str, float] | None = None,
    settings: EstimationSettings | None = None,
    unseen_trials: int | None = None,
    interval_scale: float = 1.0,
) -> ScoreEstimate:
    """:func:`estimate` on responses already placed in the bank (:func:`observed_of`).
    ``interval_scale``: widen the score interval's sides around the estimate by this
    factor (a subset's conformal scale, measured on held-out models)."""
    if not (interval_scale > 0 and np.isfinite(interval_scale)):
        raise ValueError(f"interval_scale must be positive and finite, got {interval_scale}")
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {list(ESTIMATORS)}, got {estimator!r}")
    s = settings or EstimationSettings()
    rng = np.random.default_rng(s.seed)
    pred = predict(
        bank,
        obs,
        level=s.level,
        draws=s.draws,
        grid_points=s.grid,
        rng=rng,
        unseen_trials=unseen_trials,
    )
    est = point_estimate(bank, obs, pred, estimator, weights)
    low, high = interval(pred, est, s.level)
    if interval_scale != 1.0:
        low = max(0.0, min(est, est - interval_scale * (est - low)))
        high = min(1.0, max(est, est + interval_scale * (high - est)))
    rank, rank_low, rank_high, n_panel = _rank(bank, model, est, pred.draws, s.level)
    z, z_low, z_high = (bank.z_of(v) for v in (pred.theta_mean, pred.theta_low, pred.theta_high))
    exact = pred.n_seen == bank.n_items
    return ScoreEstimate(
        benchmark=bank.benchmark,
        model=model,
        estimator=estimator,
        level=s.level,
        n_items=bank.n_items,
        n_seen=pred.n_seen,
        n_unseen=bank.n_items - pred.n_seen,
        subset_accuracy=float(obs.rates.mean()) if obs.idx.size else None,
        estimate=est,
        low=est if exact and estimator == "irt" else low,
        high=est if exact and estimator == "irt" else high,
        exact=exact,
        theta=pred.theta_mean,
        theta_low=pred.theta_low,
        theta_high=pred.theta_high,
        z=z,
        z_low=z_low,
        z_high=z_high,
        rank=rank,
        rank_low=rank_low,
        rank_high=rank_high,
        n_panel=n_panel,
        bernoulli_floor=pred.floor,
        draws=s.draws,
        seed=s.seed,
        interval_scale=interval_scale,
    )


def estimate(
    bank: ItemBank,
    responses: pl.DataFrame | Mapping[str, tuple[int, int]],
    *,
    model: str | None = None,
    estimator: EstimatorName = "irt",
    weights: Mapping[str, float] | None = None,
    settings: EstimationSettings | None = None,
    unseen_trials: int | None = None,
    source: str = "responses",
    interval_scale: float = 1.0,
) -> ScoreEstimate:
    """One model's full-benchmark accuracy from its responses on any of ``bank``'s items.

    ``responses``: a frame with item, n_trials, n_correct (one model; a ``model`` column
    names it when ``model`` is not given) or item -> (n_trials, n_correct).
    ``estimator``: irt (default), weighted (``weights``: item -> weight, a design's) or
    raw. ``unseen_trials``: trials an unseen item would get (default: the most common
    trial count of the seen items). ``interval_scale``: see :func:`estimate_observed`.
    An item the bank does not hold is an :class:`InputError` naming it.
    """
    if isinstance(responses, pl.DataFrame) and "model" in responses.columns:
        names = responses["model"].unique().to_list()
        if len(names) > 1:
            raise InputError(
                f"responses of {len(names)} models ({', '.join(map(str, names[:3]))}, ...): "
                "estimate one at a time, or use estimate_models",
                file=source,
                field="model",
            )
        model = model if model is not None else (str(names[0]) if names else None)
    obs = observed_of(bank, responses, source=source)
    return estimate_observed(
        bank,
        obs,
        model=model,
        estimator=estimator,
        weights=weights,
        settings=settings,
        unseen_trials=unseen_trials,
        interval_scale=interval_scale,
    )


def estimate_models(
    bank: ItemBank,
    responses: pl.DataFrame,
    *,
    estimator: EstimatorName = "irt",
    weights: Mapping[str, float] | None = None,
    settings: EstimationSettings | None = None,
    source: str = "responses",
    interval_scale: float = 1.0,
) -> list[ScoreEstimate]:
    """:func:`estimate` for every model of a long frame (model, item, n_trials,
    n_correct), in the order of the models' names."""
    if "model" not in responses.columns:
        raise InputError("responses lack column 'model'", file=source, field="model")
    out = []
    for name in sorted(responses["model"].cast(pl.String).unique().to_list()):
        part = responses.filter(pl.col("model").cast(pl.String) == name)
        out.append(
            estimate(
                bank,
                part,
                model=name,
                estimator=estimator,
                weights=weights,
                settings=settings,
                source=source,
                interval_scale=interval_scale,
            )
        )
    return out
