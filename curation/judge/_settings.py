"""params.yaml ``judge``: the LLM judge of candidates.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    NonNegativeInt,
    field_validator,
)

from curation.llm import PanelModel, with_role_defaults
from curation.settings import BackendName, Section, Unit

JUDGE_MODEL_DEFAULTS: dict[str, Any] = {
    "name": "judge",
    "model_id": "Qwen/Qwen2.5-72B-Instruct",
    "base_url_env": "BENCHCURATE_BASE_URL",
    "api_key_env": "BENCHCURATE_API_KEY",
    "temperature": 0.0,
    "max_tokens": 2048,
}
"""What ``judge.model`` keys the file leaves out default to (a judge answers at 0)."""
JUDGE_UNUSED: tuple[str, ...] = ("trials", "prompt_templates", "ability", "system_prompt")
"""Panel-model keys the judge never reads: setting one is an error, not a silent no-op."""


class JudgeSimulationSettings(Section):
    false_reject_rate: Unit = 0.05


class JudgeSettings(Section):
    """params.yaml ``judge``: the LLM judge of candidates."""

    enabled: bool = True
    backend: BackendName | None = None
    model: PanelModel = Field(default_factory=lambda: PanelModel(**JUDGE_MODEL_DEFAULTS))
    """The judge's endpoint; keys not given take the judge's defaults
    (:data:`JUDGE_MODEL_DEFAULTS`: temperature 0, max_tokens 2048, …)."""
    response_format: Literal["none", "json_object", "json_schema"] = "json_object"
    seed: NonNegativeInt = 0
    simulation: JudgeSimulationSettings = JudgeSimulationSettings()
    prompts: str | None = None

    @field_validator("model", mode="before")
    @classmethod
    def _model_defaults(cls, value: Any) -> Any:
        if isinstance(value, dict):
            unused = [k for k in JUDGE_UNUSED if value.get(k) is not None]
            if unused:
                raise ValueError(f"{unused[0]}: not used by the judge; remove it")
        return with_role_defaults(value, JUDGE_MODEL_DEFAULTS)
