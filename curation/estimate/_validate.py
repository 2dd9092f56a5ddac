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
) -> list[Fold]:
    """Split the models into ``folds`` groups at random (seeded) and calibrate the bank
    on the rest of each: ``curation.irt.fit`` (MAP, ``fit_settings``, ``scale``: the
    benchmark's ``annotate.scale``, which maps b to z)."""
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
    out = []
    for f, test in enumerate(groups):
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
            pl.col("model").is_in(list(test)) & pl.col("item").is_in(list(bank.items))
        )
        observed = {
            name: observed_of(bank, test_resp.filter(pl.col("model") == name)) for name in test
        }
        observed = {k: v for k, v in observed.items() if v.idx.size}
        out.append(Fold(f, tuple(train), tuple(observed), bank, fit_seconds, train_resp, observed))
    return out


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
    """Share of held-out models whose true score lies in the interval."""
    fold_mae_pp: tuple[float, ...]
    n_models: int

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


def metrics_of(
    true: FloatArray, est: FloatArray, low: FloatArray, high: FloatArray, fold: np.ndarray
) -> Metrics:
    """The figures of one estimator over the pooled held-out models."""
    ae = 100.0 * np.abs(est - true)
    rho, tau = _corr(est, true)
    eps = 1e-9
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


def _run(
    folds: Sequence[Fold],
    designs: Sequence[Design],
    estimators: Sequence[EstimatorName],
    settings: EstimationSettings,
) -> tuple[dict[str, Metrics], list[ModelResult], list[float]]:
    """Every held-out model of every fold on its fold's design → per-estimator metrics."""
    cols: dict[str, list[list[float]]] = {e: [[], [], []] for e in estimators}
    true: list[float] = []
    fold_of: list[int] = []
    rows: list[ModelResult] = []
    seconds: list[float] = []
    for fold, design in zip(folds, designs, strict=True):
        started = time.perf_counter()
        bank = fold.bank
        index = bank.index()
        positions = np.array([index[i] for i in design.items])
        weights = design.weight_map()
        for name, full in fold.test_observed.items():
            obs = _subset(full, positions)
            pred = predict(
                bank,
                obs,
                level=settings.level,
                draws=settings.draws,
                grid_points=settings.grid,
                rng=np.random.default_rng(settings.seed),
            )
            truth = float(full.rates.mean())
            true.append(truth)
            fold_of.append(fold.index)
            for e in estimators:
                est = point_estimate(bank, obs, pred, e, weights)
                lo, hi = interval(pred, est, settings.level)
                for col, v in zip(cols[e], (est, lo, hi), strict=True):
                    col.append(v)
            if "irt" in estimators:
                i = len(true) - 1
                rows.append(
                    ModelResult(
                        name,
                        fold.index,
                        truth,
                        cols["irt"][0][i],
                        cols["irt"][1][i],
                        cols["irt"][2][i],
                        float(obs.rates.mean()) if obs.idx.size else 0.0,
                        pred.floor,
                    )  # fmt: skip
                )
        seconds.append(time.perf_counter() - started)
    t = np.array(true)
    f = np.array(fold_of)
    out = {
        e: metrics_of(t, np.array(c[0]), np.array(c[1]), np.array(c[2]), f) for e, c in cols.items()
    }
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
    for r in range(s.random_draws):
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
