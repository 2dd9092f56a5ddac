"""Every metric with an interval: evaluate it on each posterior draw of the item z.

The Bayesian IRT fit (SPEC §3.3) keeps draws of b, hence of z. A DDM of 0.11 means little
if its 90% interval is [0.07, 0.15], so the report carries the interval next to the point
estimate (SPEC §9). Intervals are equal-tailed quantiles of the per-draw metric, and the
point reported with them is the per-draw median: the metric of the mean z can sit outside
the draws' interval (a gap metric is not linear in z), and a report that prints a point
outside its own interval contradicts itself. The parametric bootstrap
(:mod:`curation.measure._bootstrap`) fills the same :class:`MetricIntervals`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from curation.measure._ddm import _ddm_beta_sorted, _ddm_uniform_sorted, ddm
from curation.measure._gaps import gap_widths_sorted
from curation.measure._targets import Beta, Histogram, TargetLike, parse_target
from curation.measure._validate import as_draws, check_level
from curation.report.format import with_interval

if TYPE_CHECKING:
    from curation.measure._panel import PanelUncertainty
    from curation.measure._selfcheck import SelfCheck

MetricName = Literal["ddm", "max_gap", "top_3_sum", "top_5_sum"]
METRIC_NAMES: tuple[MetricName, ...] = ("ddm", "max_gap", "top_3_sum", "top_5_sum")


@dataclass(frozen=True)
class Interval:
    """A point ``estimate`` with its interval [low, high] at ``level`` (and a ``mean``).

    Over draws: ``estimate`` is the median and ``mean`` the mean of the per-draw metric.
    From a bootstrap: ``estimate`` is the bias-corrected value (median error removed) and
    ``mean`` the mean-bias-corrected one. ``estimate`` defaults to ``mean``. A point
    outside its own interval is rejected, so no report can print one.
    """

    mean: float
    low: float
    high: float
    level: float = 0.9
    estimate: float | None = None

    def __post_init__(self) -> None:
        if self.estimate is None:
            object.__setattr__(self, "estimate", self.mean)
        if not self.low <= self.point <= self.high:
            raise ValueError(
                f"point {self.point!r} outside its own interval [{self.low!r}, {self.high!r}]"
            )

    @property
    def point(self) -> float:
        """The value reported beside the interval (always inside it)."""
        assert self.estimate is not None  # set in __post_init__
        return self.estimate

    def label(self, digits: int = 3) -> str:
        return with_interval(self.point, self.low, self.high, digits)


@dataclass(frozen=True)
class MetricIntervals:
    """DDM (to ``target``), Max Gap, Top-3 and Top-5 sums, each with an interval.

    ``method`` says where the intervals come from: ``posterior`` (NUTS draws),
    ``laplace`` (normal draws around a MAP fit) or ``bootstrap`` (parametric bootstrap,
    :func:`curation.measure.summarize_bootstrap`); ``n_draws`` counts draws or replicates.
    """

    target: str
    n_draws: int
    ddm: Interval
    max_gap: Interval
    top_3_sum: Interval
    top_5_sum: Interval
    method: str = "posterior"
    replicates_requested: int | None = None
    """A bootstrap cut below ``gaps.intervals.replicates`` by ``max_refit_cells``: the
    replicates asked for (None: every one was run)."""
    monte_carlo_se: float | None = None
    """With ``replicates_requested``: the largest Monte Carlo standard error of an interval
    end over the four metrics (:func:`curation.measure.monte_carlo_se`)."""
    self_check: Mapping[str, SelfCheck] | None = None
    """Per metric, the interval's coverage at the benchmark's own shape and whether it was
    rescaled or withheld (:mod:`curation.measure._selfcheck`); None: not checked."""
    panel: PanelUncertainty | None = None
    """What another panel of as many similar models would give (:mod:`curation.measure._panel`)."""

    def printed(self, name: str) -> bool:
        """Whether metric ``name``'s interval may be printed (not withheld by its self-check)."""
        check = (self.self_check or {}).get(name)
        return check is None or check.printed


PosteriorSummary = MetricIntervals
"""The former name (every interval used to come from draws of b)."""


def _per_draw(
    zs: NDArray[np.float64], metric: MetricName, target: TargetLike
) -> NDArray[np.float64]:
    """A built-in metric on every row of sorted draws ``zs``, vectorised over rows."""
    if metric == "ddm":
        tgt = parse_target(target)
        if isinstance(tgt, Histogram) and tgt.is_uniform:
            return _ddm_uniform_sorted(zs)
        if isinstance(tgt, Beta):
            return _ddm_beta_sorted(zs, tgt)
        return np.array([ddm(row, tgt) for row in zs])
    widths = gap_widths_sorted(zs)
    k = min({"max_gap": 1, "top_3_sum": 3, "top_5_sum": 5}[metric], widths.shape[1])
    # Only the k widest are needed: a partition, not a full sort.
    top_k: NDArray[np.float64] = -np.partition(-widths, k - 1, axis=1)[:, :k].sum(axis=1)
    return top_k


def _interval(values: NDArray[np.float64], level: float) -> Interval:
    if not np.isfinite(values).all():
        raise ValueError("metric returned a non-finite value on some draw")
    tail = 0.5 * (1.0 - level)
    low, mid, high = np.quantile(values, [tail, 0.5, 1.0 - tail])
    return Interval(float(values.mean()), float(low), float(high), level, float(mid))


def summarize_draws(
    z_draws: ArrayLike,
    metric: Callable[[NDArray[np.float64]], float] | MetricName,
    *,
    level: float = 0.9,
    target: TargetLike = "uniform",
) -> Interval:
    """Mean and ``level`` equal-tailed interval of ``metric`` over draws.

    ``z_draws`` has shape (n_draws, n_items), one row per posterior draw of the items' z.
    ``metric`` is a name in ``ddm | max_gap | top_3_sum | top_5_sum`` (``target`` applies to
    ``ddm``) or any callable mapping one row of z to a float.
    """
    draws = as_draws(z_draws)
    level = check_level(level)
    if callable(metric):
        values = np.array([float(metric(row)) for row in draws], dtype=np.float64)
    elif metric in METRIC_NAMES:
        values = _per_draw(np.sort(draws, axis=1), metric, target)
    else:
        raise ValueError(f"unknown metric {metric!r}: use one of {METRIC_NAMES} or a callable")
    return _interval(values, level)


def summarize_posterior(
    z_draws: ArrayLike,
    *,
    target: TargetLike = "uniform",
    level: float = 0.9,
    method: str = "posterior",
) -> MetricIntervals:
    """DDM to ``target``, Max Gap, Top-3 and Top-5 sums over draws, each with an interval.

    ``method`` labels the draws (``posterior`` or ``laplace``).
    """
    zs = np.sort(as_draws(z_draws), axis=1)
    level = check_level(level)
    parts = {name: _interval(_per_draw(zs, name, target), level) for name in METRIC_NAMES}
    return MetricIntervals(
        target=parse_target(target).label,
        n_draws=zs.shape[0],
        ddm=parts["ddm"],
        max_gap=parts["max_gap"],
        top_3_sum=parts["top_3_sum"],
        top_5_sum=parts["top_5_sum"],
        method=method,
    )
