"""Do the intervals cover? Simulated worlds with a known truth, the fit, and each method.

The estimand is the metric of the *true* z on the *true* scale anchors: with the panel
scale, z_i = clip((b_i − θ_min)/(θ_max − θ_min), 0, 1) where θ_min, θ_max are the weakest
and strongest true abilities of the panel. That is what the fitted z estimates (the fit
re-derives both anchors from its own abilities), so an interval for DDM or a gap metric
is right when it contains that value in about ``level`` of the worlds.

The worlds are not the fit's model of them: abilities are spread evenly with jitter (so
some models nearly tie at the ends, which biases an estimated maximum), and difficulties
are a two-part mixture — a block of items easier than the weakest model (they clip to
z = 0, as most of GSM8K does) and a bulk inside the panel — neither of which is the fit's
normal prior nor the bootstrap's smooth prior family.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from scipy.special import expit

from curation.irt import (
    BootstrapReplicates,
    Cells,
    FitSettings,
    Truth,
    bounded_items,
    fit_map,
    kernel_threads,
    parametric_bootstrap,
    z_on_fitted_scale,
)
from curation.measure._bootstrap import GAP_METRICS, summarize_bootstrap
from curation.measure._posterior import (
    METRIC_NAMES,
    MetricIntervals,
    _per_draw,
    summarize_posterior,
)

METHODS: tuple[str, ...] = (
    "laplace",
    "bootstrap-plugin",
    "bootstrap",
    "bootstrap-corrected",
    "bootstrap-uncorrected",
    "bootstrap-gaps-corrected",
)
"""``laplace``: normal draws of b around the MAP mode, abilities fixed (the annotate stage's
draws); ``bootstrap-plugin``: parametric bootstrap with the MAP estimates as the truth;
``bootstrap``: parametric bootstrap with a smooth empirical-Bayes truth (the default: a
metric's median error is removed when it exceeds half the errors' SD);
``bootstrap-corrected`` / ``-uncorrected`` / ``-gaps-corrected``: the same replicates with
every / no / only the gap metrics bias-corrected (to compare the constructions)."""


@dataclass(frozen=True)
class World:
    """How a simulated benchmark's truth is drawn (see the module docstring)."""

    n_models: int = 12
    n_items: int = 150
    n_trials: int = 1
    theta_low: float = -3.0
    theta_high: float = 1.5
    theta_jitter: float = 0.25
    easy_share: float = 0.3
    """Share of items drawn below the weakest model (most clip to z = 0)."""
    missing: float = 0.0

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        theta = np.linspace(self.theta_low, self.theta_high, self.n_models)
        theta = theta + rng.normal(0.0, self.theta_jitter, self.n_models)
        lo, hi = theta.min(), theta.max()
        easy = rng.random(self.n_items) < self.easy_share
        b = np.where(
            easy,
            rng.normal(lo - 1.0, 1.0, self.n_items),
            rng.normal(0.5 * (lo + hi), 0.3 * (hi - lo), self.n_items),
        )
        shift = theta.mean()
        return theta - shift, b - shift

    def responses(self, theta: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> Cells:
        m, n = theta.size, b.size
        keep = rng.random((m, n)) >= self.missing
        keep[rng.integers(0, m, n), np.arange(n)] = True  # every item keeps a response
        mi, ii = np.nonzero(keep)
        k = rng.binomial(self.n_trials, expit(theta[mi] - b[ii])).astype(np.float64)
        trials = np.full(mi.size, float(self.n_trials))
        return Cells(
            tuple(f"m{j}" for j in range(m)), tuple(f"i{i}" for i in range(n)), mi, ii, k, trials
        )


def true_z(theta: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The estimand's z: the true b on the true panel anchors."""
    lo, hi = float(theta.min()), float(theta.max())
    return np.clip((b - lo) / (hi - lo), 0.0, 1.0)


def intervals_for(
    method: str,
    cells: Cells,
    *,
    replicates: int,
    seed: int,
    level: float = 0.9,
    cache: dict[str, BootstrapReplicates] | None = None,
) -> tuple[MetricIntervals, np.ndarray]:
    """One method's intervals for one data set (1PL MAP fit, panel scale), and the fit's z.

    ``replicates`` is the number of bootstrap replicates, or of Laplace draws; ``cache``
    shares one set of replicates between the bootstrap constructions.
    """
    s = FitSettings()
    if method == "laplace":
        mp = fit_map(cells, "1pl", s)
        bound = bounded_items(cells, cells.k)
        rng = np.random.default_rng(seed)
        b = mp.b + mp.b_se * rng.standard_normal((replicates, mp.b.size))
        z_draws = z_on_fitted_scale("1pl", "panel", mp.theta, b, bound)
        z_hat = z_on_fitted_scale("1pl", "panel", mp.theta, mp.b, bound)
        return summarize_posterior(z_draws, level=level, method="laplace"), z_hat
    if method not in METHODS:
        raise ValueError(f"method must be one of {list(METHODS)}, got {method!r}")
    truth: Truth = "plugin" if method == "bootstrap-plugin" else "smooth"
    cache = {} if cache is None else cache
    if truth not in cache:
        cache[truth] = parametric_bootstrap(
            cells, settings=s, replicates=replicates, seed=seed, truth=truth
        )
    reps = cache[truth]
    corrected: frozenset[str] | None = None
    if method == "bootstrap-gaps-corrected":
        corrected = GAP_METRICS
    elif method == "bootstrap-corrected":
        corrected = frozenset(METRIC_NAMES)
    elif method == "bootstrap-uncorrected":
        corrected = frozenset()
    out = summarize_bootstrap(
        reps.z_hat, reps.z_true, reps.z_refit, level=level, bias_corrected=corrected
    )
    return out, reps.z_hat


@dataclass
class CoverageResult:
    """Per method and metric: share of worlds covered, mean width, mean error of the point."""

    world: World
    n_worlds: int
    replicates: int
    level: float
    rows: list[dict[str, Any]] = field(default_factory=list)

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame(self.rows)

    def coverage(self, method: str, metric: str) -> float:
        for r in self.rows:
            if r["method"] == method and r["metric"] == metric:
                return float(r["coverage"])
        raise KeyError((method, metric))


def _score_worlds(
    world: World,
    n_worlds: int,
    replicates: int,
    methods: Sequence[str],
    level: float,
    seed: int,
) -> dict[tuple[str, str], list[float]]:
    """Per (method, metric): covered, width, point error, plug-in error, truth per world."""
    hits: dict[tuple[str, str], list[float]] = {}
    for w in range(int(n_worlds)):
        rng = np.random.default_rng([seed, w])
        theta, b = world.draw(rng)
        cells = world.responses(theta, b, rng)
        truth = np.sort(true_z(theta, b))[None, :]
        true_values = {m: float(_per_draw(truth, m, "uniform")[0]) for m in METRIC_NAMES}
        cache: dict[str, BootstrapReplicates] = {}
        for method in methods:
            out, z_hat = intervals_for(
                method,
                cells,
                replicates=replicates,
                seed=seed * 1_000_003 + w,
                level=level,
                cache=cache,
            )
            zh = np.sort(z_hat)[None, :]
            for metric in METRIC_NAMES:
                iv = getattr(out, metric)
                t = true_values[metric]
                plug = float(_per_draw(zh, metric, "uniform")[0])
                hits.setdefault((method, metric), []).extend(
                    [float(iv.low <= t <= iv.high), iv.high - iv.low, iv.point - t, plug - t, t]
                )
    return hits


def coverage_experiment(
    world: World,
    *,
    n_worlds: int,
    replicates: int,
    methods: Sequence[str] = ("bootstrap",),
    level: float = 0.9,
    seed: int = 0,
) -> CoverageResult:
    """Draw ``n_worlds`` truths and data sets from ``world`` and score each method's intervals.

    Deterministic given ``seed``. ``replicates`` is the number of bootstrap replicates (or
    Laplace draws) per data set.
    """
    with kernel_threads():
        hits = _score_worlds(world, n_worlds, replicates, methods, level, seed)
    result = CoverageResult(world, int(n_worlds), int(replicates), level)
    for (method, name), vals in hits.items():
        arr = np.array(vals).reshape(-1, 5)
        result.rows.append(
            {
                "method": method,
                "metric": name,
                "coverage": float(arr[:, 0].mean()),
                "mean_width": float(arr[:, 1].mean()),
                "point_bias": float(arr[:, 2].mean()),
                "plugin_bias": float(arr[:, 3].mean()),
                "truth_mean": float(arr[:, 4].mean()),
            }
        )
    return result
