"""params.yaml ``fill``: BenchFill (SPEC §4).

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
)

from curation.llm import RoleModelSettings
from curation.settings import BackendName, Section, Unit


class AdaptiveSettings(Section):
    """``fill.adaptive``: stop collecting trials once SE(z) is small enough."""

    enabled: bool = True
    first_batch: PositiveInt = 2
    batch: PositiveInt = 2
    max_trials: PositiveInt = 32
    se_accept: PositiveFloat = 0.03
    reject_k: PositiveFloat = 2.0


class RewriteSimulationSettings(Section):
    skill: Literal["none", "weak", "good"] | None = None
    eta: float = 0.7
    sigma: NonNegativeFloat = 0.25
    free_sigma: NonNegativeFloat = 1.0


class WorldSettings(Section):
    """``fill.world``: how far the simulated truth sits from the fitted calibration."""

    theta_sd: NonNegativeFloat = 0.15
    a_sd: NonNegativeFloat = 0.2
    b_sd: NonNegativeFloat = 0.1
    interaction_sd: NonNegativeFloat = 0.4


class RefineSettings(Section):
    """``fill.refine``: sequential re-measurement of each round's best children."""

    finalists: NonNegativeInt = 3
    batch: PositiveInt = 8
    max_trials: NonNegativeInt = 96
    screen_trials: PositiveInt = 8


class FillSettings(Section):
    """params.yaml ``fill``: BenchFill (SPEC §4); curation.fill parses the details."""

    backend: BackendName | None = None
    seed: NonNegativeInt = 0
    panel: list[str] | None = None
    adaptive: AdaptiveSettings = AdaptiveSettings()
    tolerance: Annotated[float, Field(ge=0, le=1)] = 0.01
    insertions: NonNegativeInt = 3
    targets: Literal["largest", "top_k"] | list[Unit] = "largest"
    rounds: PositiveInt = 8
    parents: PositiveInt = 4
    children: PositiveInt = 4
    references: NonNegativeInt = 16
    reference_chars: PositiveInt = 600
    duplicate_similarity: Unit = 0.9
    rewriter: RoleModelSettings | None = None
    simulation: RewriteSimulationSettings = RewriteSimulationSettings()
    confirm_trials: NonNegativeInt = 16
    refine: RefineSettings = RefineSettings()
    world: WorldSettings = WorldSettings()
    judge: str | None = None
    baseline: bool = True
    oracle: bool = True
    prompts: dict[str, str] = Field(default_factory=dict)
