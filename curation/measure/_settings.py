"""params.yaml ``gaps``: DDM, gaps, certificates, blind intervals and their intervals.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
)

from curation.settings import Section, TargetSpec, Unit, default_targets


class ThresholdSettings(Section):
    """``gaps.thresholds``: when a benchmark is flagged (SPEC §2)."""

    ddm: Unit = 0.10
    max_gap: Unit = 0.10
    top_5_sum: Annotated[float, Field(ge=0, le=5)] = 0.30


class IntervalSettings(Section):
    """``gaps.intervals``: where the intervals of DDM and the gap metrics come from."""

    method: Literal["bootstrap", "draws", "none"] = "bootstrap"
    """bootstrap: parametric bootstrap of the MAP fit (calibrated on simulation); draws: the
    annotate stage's draws (NUTS posterior, or Laplace draws for MAP, which do not cover);
    none: no intervals. A NUTS fit always uses its posterior draws."""
    replicates: Annotated[int, Field(ge=2)] = 200
    """Bootstrap replicates per benchmark (each is one refit of the whole matrix)."""
    seed: NonNegativeInt = 0


class GapsSettings(Section):
    """params.yaml ``gaps``: DDM, gaps, certificates and blind intervals."""

    targets: list[TargetSpec] = Field(default_factory=default_targets, min_length=1)
    """The first is primary (flags, certificates); also "benchmark:<name>"."""
    lipschitz: PositiveFloat = 1.0
    blind_width: Annotated[float, Field(gt=0, le=1)] = 0.10
    k_gaps: PositiveInt = 5
    n_pairs: NonNegativeInt = 5
    level: Annotated[float, Field(gt=0, lt=1)] = 0.9
    """Credible level of the intervals from the draws of z."""
    thresholds: ThresholdSettings = ThresholdSettings()
    intervals: IntervalSettings = IntervalSettings()
    resolution_floor: bool = True
    """Gaps no wider than one score step are not flagged; false treats z as continuous."""
