"""What the ``subsets`` stage reports per subset: DDM, gaps and rank agreement, next to the
full benchmark's figures (SPEC §6)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from curation.measure import Gap, TargetLike, ddm, largest_gaps, max_gap, top_k_sum
from curation.subsets._match import Subset
from curation.subsets._ranking import RankAgreement, ReferenceRanking, rank_agreement


@dataclass(frozen=True)
class Coverage:
    """DDM and gaps of one set of difficulties."""

    n: int
    ddm_uniform: float
    ddm_target: float
    max_gap: float
    top_3_sum: float
    top_5_sum: float
    largest_gaps: tuple[Gap, ...]

    @classmethod
    def of(cls, z: ArrayLike, target: TargetLike) -> Coverage:
        zs = np.asarray(z, dtype=np.float64)
        return cls(
            n=int(zs.size),
            ddm_uniform=ddm(zs, "uniform"),
            ddm_target=ddm(zs, target),
            max_gap=max_gap(zs),
            top_3_sum=top_k_sum(zs, 3),
            top_5_sum=top_k_sum(zs, 5),
            largest_gaps=tuple(largest_gaps(zs, 3)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "ddm_uniform": self.ddm_uniform,
            "ddm_target": self.ddm_target,
            "max_gap": self.max_gap,
            "top_3_sum": self.top_3_sum,
            "top_5_sum": self.top_5_sum,
            "largest_gaps": [[g.z_left, g.z_right] for g in self.largest_gaps],
        }


@dataclass(frozen=True)
class SubsetReport:
    """One calibrated subset against the full benchmark, on the subset's target."""

    name: str
    target_label: str
    m: int
    subset: Coverage
    full: Coverage
    tau: RankAgreement
    full_tau: RankAgreement
    reference: str | None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def tau_gain(self) -> float | None:
        """τ(subset) − τ(full): positive when the subset agrees better with the reference."""
        if self.tau.tau is None or self.full_tau.tau is None:
            return None
        return self.tau.tau - self.full_tau.tau

    def to_metrics(self) -> dict[str, Any]:
        return {
            "target": self.target_label,
            "m": self.m,
            "ddm_target": self.subset.ddm_target,
            "full_ddm_target": self.full.ddm_target,
            "ddm_uniform": self.subset.ddm_uniform,
            "max_gap": self.subset.max_gap,
            "top_3_sum": self.subset.top_3_sum,
            "top_5_sum": self.subset.top_5_sum,
            "largest_gaps": [[g.z_left, g.z_right] for g in self.subset.largest_gaps],
            "tau": self.tau.to_dict(),
            "full_tau": self.full_tau.tau,
            "tau_gain": self.tau_gain,
        }


def evaluate_subset(
    subset: Subset,
    *,
    name: str,
    target: TargetLike,
    full_z: ArrayLike,
    scores: Mapping[str, float] | None,
    full_scores: Mapping[str, float] | None,
    reference: ReferenceRanking | None,
) -> SubsetReport:
    """Coverage of the subset and of the full benchmark on ``target``, and Kendall τ of
    the model ranking on each against ``reference`` (None τ when there is no reference)."""
    none = RankAgreement(None, None, 0, "no reference ranking")
    if reference is None or scores is None or full_scores is None:
        tau, full_tau = none, none
    else:
        tau = rank_agreement(scores, reference)
        full_tau = rank_agreement(full_scores, reference)
    return SubsetReport(
        name=name,
        target_label=subset.target_label,
        m=subset.m,
        subset=Coverage.of(subset.z_array(), target),
        full=Coverage.of(full_z, target),
        tau=tau,
        full_tau=full_tau,
        reference=reference.label if reference is not None else None,
    )
