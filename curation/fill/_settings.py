"""params.yaml ``fill``: BenchFill (SPEC §4).

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

from curation.llm import PanelModel, with_role_defaults
from curation.settings import BackendName, Section, Unit

REWRITER_DEFAULTS: dict[str, Any] = {
    "name": "rewriter",
    "model_id": "Qwen/Qwen2.5-72B-Instruct",
    "base_url_env": "BENCHCURATE_BASE_URL",
    "api_key_env": "BENCHCURATE_API_KEY",
    "temperature": 1.0,
    "max_tokens": 2048,
}
"""What ``fill.rewriter`` keys the file leaves out default to (a rewriter samples at 1.0)."""


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
    rewriter: PanelModel = Field(default_factory=lambda: PanelModel(**REWRITER_DEFAULTS))
    """The rewriter's endpoint; keys not given take the rewriter's defaults
    (:data:`REWRITER_DEFAULTS`: temperature 1.0, max_tokens 2048, …)."""
    simulation: RewriteSimulationSettings = RewriteSimulationSettings()
    confirm_trials: NonNegativeInt = 16
    refine: RefineSettings = RefineSettings()
    world: WorldSettings = WorldSettings()
    judge: str | None = None
    baseline: bool = True
    oracle: bool = True
    prompts: dict[str, str] = Field(default_factory=dict)

    @field_validator("rewriter", mode="before")
    @classmethod
    def _rewriter_defaults(cls, value: Any) -> Any:
        return with_role_defaults(value, REWRITER_DEFAULTS)
