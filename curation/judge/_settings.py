"""params.yaml ``judge``: the LLM judge of candidates.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``, and the judge reads this model itself. The
judge model entry has the fields of a panel model with the judge's defaults
(temperature 0, a shorter completion limit). The backend follows ``collect.backend``
(the one offline switch) unless ``judge.backend`` names one: a section cannot see
another, so :meth:`JudgeSettings.resolved` is where the two meet.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import Field, NonNegativeInt, field_validator

from curation.llm import PanelModel, with_role_defaults
from curation.settings import BackendName, PathSetting, Section, Unit

if TYPE_CHECKING:
    from curation.llm import Price

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

ResponseFormat = Literal["none", "json_object", "json_schema"]
"""Structured output asked of the endpoint (``judge.response_format``)."""
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = get_args(ResponseFormat)


class JudgeSimulationSettings(Section):
    """How the offline judge decides (``judge.simulation``).

    The simulated judge "solves" a candidate by taking its parent's reference answer (a
    simulated rewrite keeps it), so a candidate is judged correct when its answer equals
    the parent's; with probability ``false_reject_rate`` (a seeded draw per candidate) it
    errs and rejects a correct candidate, as a real judge sometimes does. Well-posed = a
    non-empty question; format kept = same answer type as the parent and an answer of
    that type's form.
    """

    false_reject_rate: Unit = 0.05
    """The simulated judge rejects a good item at this rate."""


class JudgeSettings(Section):
    """params.yaml ``judge``: the LLM judge of candidates (a missing section: enabled, with
    the defaults)."""

    enabled: bool = True
    """false: the judge stage copies the candidates unjudged, and BenchFill asks no judge."""
    backend: BackendName | None = None
    """simulate | openai; null = follow ``collect.backend`` (see :meth:`resolved`)."""
    model: PanelModel = Field(default_factory=lambda: PanelModel(**JUDGE_MODEL_DEFAULTS))
    """The judge's endpoint; keys not given take the judge's defaults
    (:data:`JUDGE_MODEL_DEFAULTS`: temperature 0, max_tokens 2048, …)."""
    response_format: ResponseFormat = "json_object"
    """Structured output asked of the endpoint; the answer is validated by JSON Schema
    anyway. An endpoint that refuses the setting (HTTP 400/422) is asked again without it."""
    seed: NonNegativeInt = 0
    """Sent to the endpoint (when ``llm.send_seed``) and used by the simulated judge."""
    simulation: JudgeSimulationSettings = JudgeSimulationSettings()
    """How the offline judge decides."""
    prompts: PathSetting | None = None
    """Folder overriding the built-in templates (system.txt, solve.txt, verdict.txt,
    repair.txt in curation/judge/prompts); null = the built-ins."""

    @field_validator("model", mode="before")
    @classmethod
    def _model_defaults(cls, value: Any) -> Any:
        if isinstance(value, dict):
            unused = [k for k in JUDGE_UNUSED if value.get(k) is not None]
            if unused:
                raise ValueError(f".{unused[0]}: not used by the judge; remove it")
        return with_role_defaults(value, JUDGE_MODEL_DEFAULTS)

    def resolved(self, collect_backend: BackendName) -> JudgeSettings:
        """This section with ``backend: null`` replaced by ``collect.backend``."""
        if self.backend is not None:
            return self
        return self.model_copy(update={"backend": collect_backend})

    @property
    def backend_name(self) -> BackendName:
        """The backend, once :meth:`resolved` (``ValueError`` before: null follows
        ``collect.backend``, which this section cannot see)."""
        if self.backend is None:
            raise ValueError(
                "judge.backend is null (follow collect.backend): resolve it first with "
                "JudgeSettings.resolved(params.collect.backend)"
            )
        return self.backend

    @property
    def simulated(self) -> bool:
        """The seeded simulated judge answers (its verdicts say so)."""
        from curation.llm import backend_kind  # the backend table, not at params-reading time

        return backend_kind(self.backend_name).simulated

    @property
    def model_label(self) -> str:
        """What verdicts record as the judge model."""
        return "simulated" if self.simulated else self.model.name

    def price(self) -> Price | None:
        """The judge model's token prices, when both are known (cost accounting)."""
        from curation.llm import Price

        m = self.model
        if m.input_price_per_1m is None or m.output_price_per_1m is None:
            return None
        return Price(m.input_price_per_1m, m.output_price_per_1m)
