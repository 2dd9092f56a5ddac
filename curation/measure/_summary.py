"""Everything the `gaps` stage reports for one benchmark, computed in one call.

The stage stays thin: it loads z (and optionally intervals — bootstrap or draws — the
axis resolution and model scores), calls :func:`measure_benchmark`, and writes
``to_metrics()``, plots and the report.

With a :class:`Resolution`, only *resolved* gaps (wider than one score step at their
edges) count as coverage gaps: the Max Gap and Top-5 flags and the blind intervals use
them alone, because a gap between two consecutive score levels says nothing about the
benchmark, only about how coarse single-trial data make the axis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from numpy.typing import ArrayLike

from curation.measure._blind import BlindInterval, blind_intervals
from curation.measure._certify import Certificate, top_pair_certificates
from curation.measure._ddm import ddm
from curation.measure._gaps import Gap, largest_gaps, top_k_sum
from curation.measure._linking import PanelLinking
from curation.measure._posterior import Interval, MetricIntervals, summarize_posterior
from curation.measure._resolution import Resolution
from curation.measure._selfcheck import SelfCheck
from curation.measure._targets import TargetLike, parse_target
from curation.measure._validate import as_draws, as_unit_sample

DDM_THRESHOLD = 0.10
MAX_GAP_THRESHOLD = 0.10
TOP5_THRESHOLD = 0.30
"""The paper's flag thresholds (SPEC §2)."""


@dataclass(frozen=True)
class Thresholds:
    """A benchmark is flagged when a metric reaches (≥) its threshold."""

    ddm: float = DDM_THRESHOLD
    max_gap: float = MAX_GAP_THRESHOLD
    top_5_sum: float = TOP5_THRESHOLD


@dataclass(frozen=True)
class Flags:
    """Which thresholds the benchmark reaches (DDM is the primary target's)."""

    ddm: bool
    max_gap: bool
    top_5_sum: bool

    @property
    def any(self) -> bool:
        return self.ddm or self.max_gap or self.top_5_sum


@dataclass(frozen=True)
class TargetDDM:
    """DDM of the benchmark to one target."""

    key: str
    """Metric key ("uniform", "beta_2_5", ...)."""
    label: str
    """Display label ("uniform", "Beta(2, 5)", ...)."""
    value: float


@dataclass(frozen=True)
class BenchmarkMeasures:
    """One benchmark's measures: input to the metrics file and the report."""

    name: str
    n: int
    ddms: tuple[TargetDDM, ...]
    """DDM to each target; the first is the primary target used for flags/certificates."""
    max_gap: Gap
    largest_gaps: tuple[Gap, ...]
    top_3_sum: float
    top_5_sum: float
    thresholds: Thresholds
    flags: Flags
    blind_width: float
    blind: tuple[BlindInterval, ...]
    lipschitz: float
    certificates: tuple[Certificate, ...] = ()
    n_models: int = 0
    intervals: MetricIntervals | None = None
    """Estimates with intervals of DDM (primary target) and the gap metrics, and their method."""
    resolution: Resolution | None = None
    resolved: tuple[bool, ...] = ()
    """Per entry of ``largest_gaps``: wider than one score step (all True without resolution)."""
    unresolved_blind: int = 0
    """Gaps of at least the blind width left out of ``blind``: no wider than one score step."""
    resolved_top_5_sum: float | None = None
    """Sum of the 5 widest resolved gaps (what the Top-5 flag uses when resolution is known)."""
    linkings: tuple[PanelLinking, ...] = ()
    """Other benchmarks sharing items with this one: linking and drift of z (panel dependence)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form context the stage wants in the report (domain, source, ...)."""

    @property
    def posterior(self) -> MetricIntervals | None:
        """The former name of :attr:`intervals`."""
        return self.intervals

    @property
    def largest_resolved_gap(self) -> Gap | None:
        """The widest gap the data resolve (None if none of the listed gaps is resolved)."""
        for g, ok in zip(self.largest_gaps, self.resolved, strict=True):
            if ok:
                return g
        return None

    @property
    def primary_target(self) -> str:
        return self.ddms[0].label

    @property
    def primary_ddm(self) -> float:
        return self.ddms[0].value

    def flag_reasons(self) -> list[str]:
        """Why the benchmark is flagged, e.g. "Max Gap 0.165 ≥ 0.10" (empty if not)."""
        t, f = self.thresholds, self.flags
        out = []
        if f.ddm:
            out.append(f"DDM ({self.primary_target}) {self.primary_ddm:.3f} ≥ {t.ddm:.2f}")
        if f.max_gap:
            g = self.largest_resolved_gap or self.max_gap
            out.append(f"Max Gap {g.width:.3f} ≥ {t.max_gap:.2f}")
        if f.top_5_sum:
            top5 = self.top_5_sum if self.resolved_top_5_sum is None else self.resolved_top_5_sum
            out.append(f"Top-5 Sum {top5:.3f} ≥ {t.top_5_sum:.2f}")
        return out

    def ddm_for(self, key: str) -> float:
        for d in self.ddms:
            if d.key == key or d.label == key:
                return d.value
        raise KeyError(f"no DDM for target {key!r}; have {[d.key for d in self.ddms]}")

    def to_metrics(self) -> dict[str, Any]:
        """JSON-ready (no NaN/inf) metrics for DVC, keys safe for DVC's '.' flattening."""
        out: dict[str, Any] = {
            "n": self.n,
            "ddm": {d.key: d.value for d in self.ddms},
            "max_gap": self.max_gap.width,
            "max_gap_left": self.max_gap.z_left,
            "max_gap_right": self.max_gap.z_right,
            "top_3_sum": self.top_3_sum,
            "top_5_sum": self.top_5_sum,
            "flags": {
                "ddm": self.flags.ddm,
                "max_gap": self.flags.max_gap,
                "top_5_sum": self.flags.top_5_sum,
                "any": self.flags.any,
            },
            "blind_width": self.blind_width,
            "n_blind_intervals": len(self.blind),
        }
        if self.certificates:
            out["lipschitz"] = self.lipschitz
            out["top_pairs_certified"] = sum(c.certified for c in self.certificates)
            out["top_pairs"] = len(self.certificates)
        if self.intervals is not None:
            p = self.intervals
            out["intervals"] = {
                name: _interval_dict(getattr(p, name), (p.self_check or {}).get(name))
                for name in ("ddm", "max_gap", "top_3_sum", "top_5_sum")
            }
            if p.panel is not None:
                out["intervals"]["panel"] = p.panel.to_metrics()
            out["intervals"].update(method=p.method, n_draws=p.n_draws, target=p.target)
            if p.replicates_requested is not None:
                out["intervals"].update(
                    replicates_requested=p.replicates_requested, monte_carlo_se=p.monte_carlo_se
                )
        if self.linkings:
            out["linking"] = [link.to_metrics() for link in self.linkings]
        if self.resolution is not None:
            out["resolution"] = {
                **self.resolution.to_metrics(),
                "largest_gaps_resolved": sum(self.resolved),
                "largest_gaps_listed": len(self.resolved),
            }
        return out


def _interval_dict(i: Interval, check: SelfCheck | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "estimate": i.point, "mean": i.mean, "low": i.low, "high": i.high, "level": i.level
    }  # fmt: skip
    if check is not None:
        out["self_check"] = check.to_metrics()
    return out


def measure_benchmark(
    z: ArrayLike,
    *,
    name: str = "benchmark",
    targets: Sequence[TargetLike] = ("uniform",),
    model_scores: Mapping[str, float] | None = None,
    lipschitz: float = 1.0,
    width: float = 0.10,
    z_draws: ArrayLike | None = None,
    level: float = 0.9,
    k_gaps: int = 5,
    n_pairs: int = 5,
    ddm_threshold: float = DDM_THRESHOLD,
    max_gap_threshold: float = MAX_GAP_THRESHOLD,
    top5_threshold: float = TOP5_THRESHOLD,
    intervals: MetricIntervals | None = None,
    draws_method: str = "posterior",
    resolution: Resolution | None = None,
    resolution_floor: bool = True,
) -> BenchmarkMeasures:
    """Compute every §2 measure of one benchmark.

    ``targets[0]`` is the primary target: its DDM is flagged and used by the certificates
    (uniform by default, the neutral choice). ``width`` is the progress width for blind
    intervals (default 0.10, the Max-Gap flag threshold). ``model_scores`` (model → score
    on this benchmark) gives certificates for leaderboard neighbours among the top
    ``n_pairs + 1`` models. ``intervals`` (e.g. :func:`summarize_bootstrap`) or
    ``z_draws`` (n_draws × n items, labelled ``draws_method``) add intervals.
    ``resolution`` (see :class:`Resolution`) is reported and, with ``resolution_floor``,
    restricts the gap flags and blind intervals to gaps wider than one score step;
    ``resolution_floor=False`` treats z as continuous (every gap counts), which suits data
    whose score lattice is fine (many trials per cell) or a 2PL fit.
    """
    zz = as_unit_sample(z)
    if isinstance(targets, str) or not isinstance(targets, Sequence):
        targets = (targets,)
    if len(targets) == 0:
        raise ValueError("targets: need at least one target (e.g. 'uniform')")
    parsed = [parse_target(t) for t in targets]
    ddms, seen = [], set()
    for tgt in parsed:
        key, i = tgt.key, 2
        while key in seen:
            key, i = f"{tgt.key}_{i}", i + 1
        seen.add(key)
        ddms.append(TargetDDM(key=key, label=tgt.label, value=ddm(zz, tgt)))
    top = largest_gaps(zz, k_gaps)
    top3, top5 = top_k_sum(zz, 3), top_k_sum(zz, 5)
    thresholds = Thresholds(ddm_threshold, max_gap_threshold, top5_threshold)
    blind = blind_intervals(zz, width)
    resolved: tuple[bool, ...] = tuple(True for _ in top)
    flag_gap, flag_top5, resolved_top5 = top[0].width, top5, None
    unresolved_blind = 0
    if resolution is not None and resolution.n_items != zz.size:
        raise ValueError(f"resolution: {resolution.n_items} items, z has {zz.size}")
    if resolution is not None and resolution_floor:
        every = largest_gaps(zz, zz.size + 1)
        ok = [g for g in every if resolution.resolves(g)]
        resolved = tuple(resolution.resolves(g) for g in top)
        flag_gap = ok[0].width if ok else 0.0
        flag_top5 = resolved_top5 = float(sum(g.width for g in ok[:5]))
        kept = [b for b in blind if resolution.resolves(Gap(b.left, b.right))]
        unresolved_blind, blind = len(blind) - len(kept), kept
    flags = Flags(
        ddm=ddms[0].value >= thresholds.ddm,
        max_gap=flag_gap >= thresholds.max_gap,
        top_5_sum=flag_top5 >= thresholds.top_5_sum,
    )
    certs: tuple[Certificate, ...] = ()
    n_models = 0
    if model_scores:
        n_models = len(model_scores)
        if n_models >= 2:
            certs = tuple(
                top_pair_certificates(
                    model_scores, ddm=ddms[0].value, lipschitz=lipschitz, n_pairs=n_pairs
                )
            )
    if intervals is None and z_draws is not None:
        draws = as_draws(z_draws)
        if draws.shape[1] != zz.size:
            raise ValueError(
                f"z_draws: expected shape (n_draws, {zz.size}) to match z, got {draws.shape}"
            )
        intervals = summarize_posterior(draws, target=parsed[0], level=level, method=draws_method)
    return BenchmarkMeasures(
        name=str(name),
        n=int(zz.size),
        ddms=tuple(ddms),
        max_gap=top[0],
        largest_gaps=tuple(top),
        top_3_sum=top3,
        top_5_sum=top5,
        thresholds=thresholds,
        flags=flags,
        blind_width=float(width),
        blind=tuple(blind),
        lipschitz=float(lipschitz),
        certificates=certs,
        n_models=n_models,
        intervals=intervals,
        resolution=resolution,
        resolved=resolved,
        resolved_top_5_sum=resolved_top5,
        unresolved_blind=unresolved_blind,
    )
