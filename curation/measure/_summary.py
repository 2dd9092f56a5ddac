"""Everything the `gaps` stage reports for one benchmark, computed in one call.

The stage stays thin: it loads z (and optionally posterior draws and model scores),
calls :func:`measure_benchmark`, and writes ``to_metrics()``, plots and the report.
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
from curation.measure._posterior import Interval, PosteriorSummary, summarize_posterior
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
    posterior: PosteriorSummary | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Free-form context the stage wants in the report (domain, source, ...)."""

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
            out.append(f"Max Gap {self.max_gap.width:.3f} ≥ {t.max_gap:.2f}")
        if f.top_5_sum:
            out.append(f"Top-5 Sum {self.top_5_sum:.3f} ≥ {t.top_5_sum:.2f}")
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
        if self.posterior is not None:
            p = self.posterior
            out["posterior"] = {
                name: _interval_dict(getattr(p, name))
                for name in ("ddm", "max_gap", "top_3_sum", "top_5_sum")
            }
            out["posterior"]["n_draws"] = p.n_draws
        return out


def _interval_dict(i: Interval) -> dict[str, float]:
    return {"mean": i.mean, "low": i.low, "high": i.high, "level": i.level}


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
) -> BenchmarkMeasures:
    """Compute every §2 measure of one benchmark.

    ``targets[0]`` is the primary target: its DDM is flagged and used by the certificates
    (uniform by default, the neutral choice). ``width`` is the progress width for blind
    intervals (default 0.10, the Max-Gap flag threshold). ``model_scores`` (model → score
    on this benchmark) gives certificates for leaderboard neighbours among the top
    ``n_pairs + 1`` models. ``z_draws`` (n_draws × n items) adds posterior intervals.
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
    flags = Flags(
        ddm=ddms[0].value >= thresholds.ddm,
        max_gap=top[0].width >= thresholds.max_gap,
        top_5_sum=top5 >= thresholds.top_5_sum,
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
    posterior = None
    if z_draws is not None:
        draws = as_draws(z_draws)
        if draws.shape[1] != zz.size:
            raise ValueError(
                f"z_draws: expected shape (n_draws, {zz.size}) to match z, got {draws.shape}"
            )
        posterior = summarize_posterior(draws, target=parsed[0], level=level)
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
        blind=tuple(blind_intervals(zz, width)),
        lipschitz=float(lipschitz),
        certificates=certs,
        n_models=n_models,
        posterior=posterior,
    )
