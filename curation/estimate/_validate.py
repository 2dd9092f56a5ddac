"""Leave-models-out validation of a design and its estimators, the way a user uses them.

K folds over the panel's models: calibrate on the other folds' models (MAP, the
project's ``curation.irt.fit``), select the subset from that calibration, then estimate
each held-out model's full score from its responses on the subset alone and compare
with its true full score (its mean success rate over every item of the bank, as
``curation.subsets.model_scores`` scores it). Errors, rank agreement and interval
coverage are pooled over all held-out models; the same figures for random subsets of
the same size (``random_draws`` per fold) give the baseline, as the median over draws.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import polars as pl

from curation.estimate._adaptive import run_adaptive
from curation.estimate._bank import FloatArray, ItemBank
from curation.estimate._design import Design, select
from curation.estimate._estimate import (
    Observed,
    interval,
    observed_of,
    point_estimate,
    predict,
    theta_posterior,
)
from curation.estimate._settings import DesignName, EstimationSettings, EstimatorName
from curation.progress import progress

if TYPE_CHECKING:
    from curation.irt import FitSettings
    from curation.measure import TargetLike

IrtModel = Literal["1pl", "2pl", "3pl"]


@dataclass(frozen=True)
class Fold:
    """One fold: the models held out, the bank calibrated without them, and how long
    that calibration took."""

    index: int
    train: tuple[str, ...]
    test: tuple[str, ...]
    bank: ItemBank
    fit_seconds: float
    train_responses: pl.DataFrame = field(repr=False)
    test_observed: Mapping[str, Observed] = field(repr=False)
    """Each held-out model's responses on every item of the bank."""


def make_folds(
    responses: pl.DataFrame,
    *,
    model: IrtModel = "1pl",
    folds: int = 5,
    seed: int = 0,
    fit_settings: FitSettings | None = None,
    benchmark: str | None = None,
    scale: Literal["panel", "items", "logistic"] = "panel",
    max_test_models: int | None = None,
) -> list[Fold]:
    """Split the models into ``folds`` groups at random (seeded) and calibrate the bank
    on the rest of each: ``curation.irt.fit`` (MAP, ``fit_settings``, ``scale``: the
    benchmark's ``annotate.scale``, which maps b to z). ``max_test_models``: score at
    most that many held-out models in all (:func:`scored_models`); a fold's calibration
    still leaves out its whole group."""
    from curation.irt import fit
    from curation.subsets import model_scores

    models = sorted(responses["model"].cast(pl.String).unique().to_list())
    if folds > len(models) - 2 and folds != len(models):
        raise ValueError(
            f"{folds} folds over {len(models)} models would calibrate on fewer than 2 models"
        )
    rng = np.random.default_rng(seed)
    order = [models[i] for i in rng.permutation(len(models))]
    groups = [sorted(g.tolist()) for g in np.array_split(np.array(order, dtype=object), folds)]
    scored = scored_models(groups, max_test_models, seed=seed)
    out = []
    for f, test in progress(list(enumerate(groups)), desc="validation folds", unit="fold"):
        train = sorted(set(models) - set(test))
        train_resp = responses.filter(pl.col("model").is_in(train))
        started = time.perf_counter()
        result = fit(
            train_resp, model=model, method="map", seed=seed, scale=scale, settings=fit_settings
        )
        bank = ItemBank.from_fit(result, benchmark=benchmark)
        fit_seconds = time.perf_counter() - started
        in_bank = train_resp.filter(pl.col("item").is_in(list(bank.items)))
        bank = bank.with_panel_scores(model_scores(in_bank))
        test_resp = responses.filter(
            pl.col("model").is_in(scored[f]) & pl.col("item").is_in(list(bank.items))
        )
        by_model = test_resp.partition_by("model", as_dict=True, include_key=True)
        empty = test_resp.clear()
        observed = {name: observed_of(bank, by_model.get((name,), empty)) for name in scored[f]}
        observed = {k: v for k, v in observed.items() if v.idx.size}
        out.append(Fold(f, tuple(train), tuple(observed), bank, fit_seconds, train_resp, observed))
    return out


def scored_models(
    groups: Sequence[Sequence[str]], cap: int | None, *, seed: int = 0
) -> list[list[str]]:
    """The held-out models each fold scores: all of them, or with more than ``cap`` in
    all a seeded sample of ``cap`` spread over the folds in proportion to their size
    (largest remainders), each fold's sample in its own order."""
    total = sum(len(g) for g in groups)
    if cap is None or total <= cap:
        return [list(g) for g in groups]
    share = np.array([len(g) for g in groups], dtype=np.float64) * cap / total
    take = np.floor(share).astype(int)
    for f in np.argsort(-(share - take), kind="stable")[: cap - int(take.sum())]:
        take[f] += 1
    rng = np.random.default_rng([seed, 1])
    return [
        [g[i] for i in sorted(rng.choice(len(g), size=int(t), replace=False))]
        for g, t in zip(groups, take, strict=True)
    ]


def ideal_folds(folds: Sequence[Fold], seed: int = 0, grid_points: int = 401) -> list[Fold]:
    """The folds with every held-out model's responses redrawn from its fold's bank: at
    the model's ability on all its items (posterior mean, item parameters fixed), the same
    cells and trials. A world where the IRT model is the truth and the calibration exact,
    so the error left is the subset's own sampling noise: what no estimator of the IRT
    family can beat with that subset. Beside the real figures it says whether a
    benchmark's error comes from the data's noise or from the method."""
    rng = np.random.default_rng(seed)
    out = []
    for f in folds:
        redrawn = {}
        for name, full in f.test_observed.items():
            grid, w = theta_posterior(f.bank, full, grid_points)
            theta = float(w @ grid)
            p = f.bank.p_of(f.bank.a[full.idx] * (theta - f.bank.b[full.idx]), full.idx)
            k = rng.binomial(full.n.astype(np.int64), p).astype(np.float64)
            redrawn[name] = Observed(idx=full.idx, k=k, n=full.n)
        out.append(replace(f, test_observed=redrawn))
    return out


def _subset(obs: Observed, positions: np.ndarray) -> Observed:
    keep = np.isin(obs.idx, positions)
    return Observed(idx=obs.idx[keep], k=obs.k[keep], n=obs.n[keep])


@dataclass(frozen=True)
class Metrics:
    """Errors (percentage points), rank agreement and coverage over held-out models."""

    mae_pp: float
    max_ae_pp: float
    p90_ae_pp: float
    """90% of held-out models are within this many points."""
    rmse_pp: float
    spearman: float | None
    kendall: float | None
    coverage: float
    """Share of held-out models whose true score lies in the interval a user gets: the
    model's interval widened by the conformal scale of the other folds' models."""
    fold_mae_pp: tuple[float, ...]
    n_models: int
    model_coverage: float = float("nan")
    """The same for the IRT posterior's own interval (no conformal scale): below the
    level where the IRT model misses what the data hold (misfit, calibration error)."""
    interval_scale: float = 1.0
    """The conformal scale over every held-out model: the factor by which the
    posterior's interval (both sides, around the estimate) must widen to hold
    ``level`` of them; ``curate estimate --subset`` applies it."""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["fold_mae_pp"] = list(self.fold_mae_pp)
        return d


def _corr(x: FloatArray, y: FloatArray) -> tuple[float | None, float | None]:
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None, None
    from scipy import stats

    rho = float(stats.spearmanr(x, y).statistic)
    tau = float(stats.kendalltau(x, y).statistic)
    return (None if math.isnan(rho) else rho), (None if math.isnan(tau) else tau)


def conformal_score(
    true: FloatArray, est: FloatArray, low: FloatArray, high: FloatArray
) -> FloatArray:
    """How far each truth lies out, in units of its interval's side: |truth - est| over
    (high - est) above the estimate, over (est - low) below (0 at the estimate, 1 at the
    interval's end, inf beyond a side of zero width)."""
    side = np.where(true >= est, high - est, est - low)
    gap = np.abs(true - est)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.where(
            side > 0, gap / np.where(side > 0, side, 1.0), np.where(gap > 1e-12, np.inf, 0.0)
        )
    out: FloatArray = u
    return out


def conformal_scale(scores: FloatArray, level: float) -> float:
    """The split-conformal quantile of ``scores``: the ceil((n + 1) level)-th smallest
    (the largest finite one when n is too small for that), so that a new model's
    interval widened by it holds its truth with probability >= level, models being
    exchangeable. 1.0 without scores."""
    finite = np.sort(scores[np.isfinite(scores)])
    if scores.size == 0 or finite.size == 0:
        return 1.0
    rank = math.ceil((scores.size + 1) * level)
    if rank > scores.size:
        return float(finite[-1])
    value = np.sort(scores)[rank - 1]
    return float(value if np.isfinite(value) else finite[-1])


def widen(
    est: FloatArray, low: FloatArray, high: FloatArray, scale: FloatArray | float
) -> tuple[FloatArray, FloatArray]:
    """The interval (low, high) around ``est`` with both sides times ``scale``, in [0, 1]."""
    lo: FloatArray = np.clip(est - scale * (est - low), 0.0, 1.0)
    hi: FloatArray = np.clip(est + scale * (high - est), 0.0, 1.0)
    return np.minimum(lo, est), np.maximum(hi, est)


def cross_conformal(
    true: FloatArray,
    est: FloatArray,
    low: FloatArray,
    high: FloatArray,
    fold: np.ndarray,
    level: float,
) -> tuple[FloatArray, FloatArray, float]:
    """Each fold's intervals widened by the scale of the OTHER folds' held-out models (so
    no model's own error sets its interval: the coverage this gives is an honest figure),
    and the scale over every model (what a new model gets)."""
    u = conformal_score(true, est, low, high)
    lo2, hi2 = low.copy(), high.copy()
    for f in np.unique(fold):
        here = fold == f
        s = conformal_scale(u[~here], level) if (~here).any() else 1.0
        lo2[here], hi2[here] = widen(est[here], low[here], high[here], s)
    return lo2, hi2, conformal_scale(u, level)


def metrics_of(
    true: FloatArray,
    est: FloatArray,
    low: FloatArray,
    high: FloatArray,
    fold: np.ndarray,
    level: float | None = None,
) -> Metrics:
    """The figures of one estimator over the pooled held-out models. ``level``: calibrate
    the intervals by cross-conformal scaling (:func:`cross_conformal`) at this level;
    None: the intervals as given."""
    ae = 100.0 * np.abs(est - true)
    rho, tau = _corr(est, true)
    eps = 1e-9
    model_cover = float(np.mean((low - eps <= true) & (true <= high + eps)))
    scale = 1.0
    if level is not None:
        low, high, scale = cross_conformal(true, est, low, high, fold, level)
    cover = float(np.mean((low - eps <= true) & (true <= high + eps)))
    folds = tuple(float(ae[fold == f].mean()) for f in np.unique(fold))
    return Metrics(
        mae_pp=float(ae.mean()),
        max_ae_pp=float(ae.max()),
        p90_ae_pp=float(np.quantile(ae, 0.9)),
        rmse_pp=float(np.sqrt(np.mean(ae**2))),
        spearman=rho,
        kendall=tau,
        coverage=cover,
        fold_mae_pp=folds,
        n_models=int(true.size),
        model_coverage=model_cover,
        interval_scale=scale,
    )


@dataclass(frozen=True)
class ModelResult:
    """One held-out model under the design's IRT estimator."""

    model: str
    fold: int
    true: float
    estimate: float
    low: float
    high: float
    subset_accuracy: float
    floor: float


@dataclass(frozen=True)
class Validation:
    """Leave-models-out figures of one design at one size, beside random subsets'."""

    design: str
    m: int
    level: float
    folds: int
    n_models: int
    estimators: Mapping[str, Metrics]
    """irt, raw, and weighted when the design has weights."""
    random: Mapping[str, Metrics]
    """The same estimators on random subsets of size m: the median over draws of each
    figure (``fold_mae_pp``: the median per fold)."""
    random_draws: int
    floor_pp: float
    """Mean over held-out models of the Bernoulli floor sqrt(sum_unseen p(1-p))/N."""
    seconds_per_fold: float
    """Calibration, selection and estimation of one fold (the random baseline aside)."""
    rows: tuple[ModelResult, ...]

    def beats_random(self, estimator: EstimatorName = "irt") -> bool:
        """The design's mean error is below random's median (same estimator)."""
        mine = self.estimators[estimator].mae_pp
        other = self.random.get(estimator if estimator != "weighted" else "raw")
        return other is not None and mine < other.mae_pp

    def to_dict(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "m": self.m,
            "level": self.level,
            "folds": self.folds,
            "n_models": self.n_models,
            "estimators": {k: v.to_dict() for k, v in self.estimators.items()},
            "random": {k: v.to_dict() for k, v in self.random.items()},
            "random_draws": self.random_draws,
            "floor_pp": self.floor_pp,
            "seconds_per_fold": self.seconds_per_fold,
            "beats_random": {k: self.beats_random(k) for k in self.estimators},  # type: ignore[arg-type]
            "models": [asdict(r) for r in self.rows],
        }


def _positions(
    fold: Fold, design: Design, full: Observed, fixed: np.ndarray, grid: int
) -> np.ndarray:
    """The items a held-out model answers: the design's, or its own adaptive test's."""
    if not design.adaptive:
        return fixed
    return run_adaptive(
        fold.bank, full, fixed, design.total, design.block or design.total, grid_points=grid
    )


def _run(
    folds: Sequence[Fold],
    designs: Sequence[Design],
    estimators: Sequence[EstimatorName],
    settings: EstimationSettings,
) -> tuple[dict[str, Metrics], list[ModelResult], list[float]]:
    """Every held-out model of every fold on its fold's design → per-estimator metrics
    (intervals calibrated by cross-conformal scaling at ``settings.level``)."""
    cols: dict[str, list[list[float]]] = {e: [[], [], []] for e in estimators}
    true: list[float] = []
    fold_of: list[int] = []
    names: list[str] = []
    extra: list[tuple[float, float]] = []
    seconds: list[float] = []
    for fold, design in zip(folds, designs, strict=True):
        started = time.perf_counter()
        bank = fold.bank
        index = bank.index()
        fixed = np.array([index[i] for i in design.items], dtype=np.int64)
        weights = design.weight_map()
        for name, full in fold.test_observed.items():
            obs = _subset(full, _positions(fold, design, full, fixed, settings.grid))
            pred = predict(
                bank,
                obs,
                level=settings.level,
                draws=settings.draws,
                grid_points=settings.grid,
                rng=np.random.default_rng(settings.seed),
            )
            true.append(float(full.rates.mean()))
            fold_of.append(fold.index)
            names.append(name)
            extra.append((float(obs.rates.mean()) if obs.idx.size else 0.0, pred.floor))
            for e in estimators:
                est = point_estimate(bank, obs, pred, e, weights)
                lo, hi = interval(pred, est, settings.level)
                for col, v in zip(cols[e], (est, lo, hi), strict=True):
                    col.append(v)
        seconds.append(time.perf_counter() - started)
    t = np.array(true)
    f = np.array(fold_of)
    arrays: dict[str, tuple[FloatArray, FloatArray, FloatArray]] = {
        e: (np.array(cols[e][0]), np.array(cols[e][1]), np.array(cols[e][2])) for e in estimators
    }
    out: dict[str, Metrics] = {
        e: metrics_of(t, a[0], a[1], a[2], f, settings.level) for e, a in arrays.items()
    }
    rows: list[ModelResult] = []
    if "irt" in arrays:
        est_a, lo_a, hi_a = arrays["irt"]
        lo_a, hi_a, _ = cross_conformal(t, est_a, lo_a, hi_a, f, settings.level)
        rows = [
            ModelResult(
                names[i],
                int(f[i]),
                float(t[i]),
                float(est_a[i]),
                float(lo_a[i]),
                float(hi_a[i]),
                extra[i][0],
                extra[i][1],
            )
            for i in range(t.size)
        ]
    return out, rows, seconds


def _median(ms: Sequence[Metrics]) -> Metrics:
    def med(vals: Sequence[float | None]) -> float | None:
        xs = [v for v in vals if v is not None]
        return float(np.median(xs)) if xs else None

    n_f = len(ms[0].fold_mae_pp)
    return Metrics(
        mae_pp=float(np.median([m.mae_pp for m in ms])),
        max_ae_pp=float(np.median([m.max_ae_pp for m in ms])),
        p90_ae_pp=float(np.median([m.p90_ae_pp for m in ms])),
        rmse_pp=float(np.median([m.rmse_pp for m in ms])),
        spearman=med([m.spearman for m in ms]),
        kendall=med([m.kendall for m in ms]),
        coverage=float(np.median([m.coverage for m in ms])),
        fold_mae_pp=tuple(float(np.median([m.fold_mae_pp[i] for m in ms])) for i in range(n_f)),
        n_models=ms[0].n_models,
        model_coverage=float(np.median([m.model_coverage for m in ms])),
        interval_scale=float(np.median([m.interval_scale for m in ms])),
    )


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def random_baseline(
    folds: Sequence[Fold], m: int, settings: EstimationSettings | None = None
) -> dict[str, Metrics]:
    """irt and raw on ``settings.random_draws`` random subsets of size m per fold: the
    median over draws of each figure."""
    s = settings or EstimationSettings()
    per_draw: dict[str, list[Metrics]] = {"irt": [], "raw": []}
    for r in progress(range(s.random_draws), desc=f"random-{m} baseline", unit="draw"):
        designs = [select("random", f.bank, m, seed=_seed(s.seed, r, f.index)) for f in folds]
        got, _, _ = _run(folds, designs, ("irt", "raw"), s)
        for e, v in got.items():
            per_draw[e].append(v)
    return {e: _median(v) for e, v in per_draw.items()}


def validate(
    responses: pl.DataFrame,
    m: int,
    *,
    design: DesignName | None = None,
    settings: EstimationSettings | None = None,
    model: IrtModel = "1pl",
    fit_settings: FitSettings | None = None,
    folds: Sequence[Fold] | None = None,
    baseline: Mapping[str, Metrics] | None = None,
    benchmark: str | None = None,
    target: TargetLike = "uniform",
) -> Validation:
    """Leave-models-out validation of ``design`` (default ``settings.design``) at size m.

    ``responses``: the panel's long table (model, item, n_trials, n_correct). ``model``:
    the IRT model the folds are calibrated with (the benchmark's, e.g.
    ``Calibration.model``). ``folds`` (from :func:`make_folds`) and ``baseline`` (from
    :func:`random_baseline`) may be passed to share them between designs and sizes.
    ``target``: what the ``quantile`` design matches (a calibrated subset's target).
    """
    s = settings or EstimationSettings()
    name: DesignName = design or s.design
    if folds is None:
        folds = make_folds(
            responses,
            model=model,
            folds=s.folds,
            seed=s.seed,
            fit_settings=fit_settings,
            benchmark=benchmark,
            max_test_models=s.max_test_models,
        )
    select_seconds = []
    designs = []
    for f in folds:
        started = time.perf_counter()
        designs.append(
            select(
                name,
                f.bank,
                m,
                seed=s.seed + f.index,
                responses=f.train_responses,
                embedding=s.embedding,
                strata=s.strata,
                target=target,
                start=s.adaptive_start,
                block=s.adaptive_block,
            )
        )
        select_seconds.append(time.perf_counter() - started)
    estimators: tuple[EstimatorName, ...] = (
        ("irt", "raw", "weighted") if designs[0].weights is not None else ("irt", "raw")
    )
    got, rows, est_seconds = _run(folds, designs, estimators, s)
    base = dict(baseline) if baseline is not None else random_baseline(folds, m, s)
    per_fold = [
        f.fit_seconds + a + b for f, a, b in zip(folds, select_seconds, est_seconds, strict=True)
    ]
    return Validation(
        design=name,
        m=m,
        level=s.level,
        folds=len(folds),
        n_models=len(rows),
        estimators=got,
        random=base,
        random_draws=s.random_draws,
        floor_pp=100.0 * float(np.mean([r.floor for r in rows])),
        seconds_per_fold=float(np.mean(per_fold)),
        rows=tuple(rows),
    )
