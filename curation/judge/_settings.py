"""params.yaml ``judge``: the LLM judge of candidates.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import (
    NonNegativeInt,
)

from curation.llm import RoleModelSettings
from curation.settings import BackendName, Section, Unit


class JudgeSimulationSettings(Section):
    false_reject_rate: Unit = 0.05


class JudgeSettings(Section):
    """params.yaml ``judge``: the LLM judge of candidates."""

    enabled: bool = True
    backend: BackendName | None = None
    model: RoleModelSettings | None = None
    response_format: Literal["none", "json_object", "json_schema"] = "json_object"
    seed: NonNegativeInt = 0
    simulation: JudgeSimulationSettings = JudgeSimulationSettings()
    prompts: str | None = None
