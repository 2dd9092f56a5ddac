"""params.yaml ``panel``, ``collect`` and ``llm``: the models, the collection switch, the client.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    field_validator,
)

from curation.settings import BackendName, Section, Unit

AnswerType = Literal["numeric", "exact", "choice", "code", "free"]
"""How a benchmark's answers are compared (``benchmarks.<b>.items.answer_type``)."""


class PanelModel(Section):
    """A model at an OpenAI-compatible endpoint: a ``panel.models`` entry, the rewriter, the
    judge. Keys are never stored, only the names of the environment variables that hold
    them. The record the LLM layer itself uses (``schemas/panel_model.schema.json`` is
    generated from it)."""

    name: str = Field(min_length=1)
    """Name used in response tables."""
    model_id: str = Field(min_length=1)
    """Model id sent to the endpoint."""
    base_url_env: str = "OPENAI_BASE_URL"
    """Environment variable holding the OpenAI-compatible base URL."""
    api_key_env: str = "OPENAI_API_KEY"
    """Environment variable holding the API key."""
    revision: str | None = None
    """Model revision or snapshot."""
    temperature: NonNegativeFloat = 0.6
    """Sampling temperature (the model's recommended one)."""
    max_tokens: PositiveInt = 4096
    """Completion token limit."""
    trials: PositiveInt = 4
    """Samples per item (k)."""
    system_prompt: str | None = None
    """System prompt, if any."""
    prompt_templates: dict[AnswerType, str] = Field(default_factory=dict)
    """Prompt template id per answer type (else ``collect.template_for``)."""
    concurrency: PositiveInt | None = None
    """Concurrent requests to this endpoint; null = ``llm.default_concurrency``."""
    top_p: Unit | None = None
    """Nucleus sampling parameter (null: the endpoint's default)."""
    stream: bool = False
    """Stream answers (records time to first token)."""
    input_price_per_1m: NonNegativeFloat | None = None
    """Price of 1M prompt tokens (USD), for cost accounting; null if unknown."""
    output_price_per_1m: NonNegativeFloat | None = None
    """Price of 1M completion tokens (USD), for cost accounting; null if unknown."""
    ability: float | None = None
    """Simulation backend only: the model's latent ability θ (logit scale); null spreads
    the panel evenly from weakest (first) to strongest (last)."""


def with_role_defaults(value: Any, defaults: Mapping[str, Any]) -> Any:
    """A role's model entry (``fill.rewriter``, ``judge.model``) over that role's defaults:
    the keys a user sets replace the role's, the rest keep them (a ``field_validator``
    with ``mode="before"`` calls this)."""
    if value is None:
        return dict(defaults)
    if isinstance(value, Mapping):
        return {**defaults, **{k: v for k, v in value.items() if v is not None}}
    return value


class PanelSettings(Section):
    """params.yaml ``panel``: the answering panel, weakest first."""

    models: list[PanelModel] = Field(min_length=1)
    """Weakest first (the simulation spreads abilities in this order); names are unique."""

    @field_validator("models")
    @classmethod
    def _unique_names(cls, models: list[PanelModel]) -> list[PanelModel]:
        first: dict[str, int] = {}
        for i, model in enumerate(models):
            if model.name in first:
                raise ValueError(
                    f"[{i}].name: duplicate {model.name!r} (also [{first[model.name]}].name)"
                )
            first[model.name] = i
        return models


class CollectSimulationSettings(Section):
    difficulties: str | None = None
    """File item -> b (JSON, or CSV/parquet with item, b); null = hash-based."""
    difficulty_scale: PositiveFloat = 1.5


class CollectSettings(Section):
    """params.yaml ``collect``: import (false) or ask the panel (true)."""

    enabled: bool = False
    backend: BackendName = "simulate"
    seed: NonNegativeInt = 0
    progress: bool = True
    simulation: CollectSimulationSettings = CollectSimulationSettings()
    templates: dict[str, str] = Field(default_factory=dict)
    template_for: dict[str, str] = Field(default_factory=dict)
    sandbox: None = None


class LLMSettings(Section):
    """params.yaml ``llm``: client, retries and cache."""

    timeout_s: PositiveFloat = 120.0
    connect_timeout_s: PositiveFloat = 10.0
    max_retries: NonNegativeInt = 6
    backoff_base_s: NonNegativeFloat = 0.5
    backoff_max_s: NonNegativeFloat = 30.0
    max_retry_after_s: NonNegativeFloat = 120.0
    cache: str = ".llm-cache/completions.sqlite"
    send_seed: bool = True
    stream_usage: bool = True
    default_concurrency: PositiveInt = 8
    processes: PositiveInt = 1
    """Worker processes answering calls (each a share of every endpoint's concurrency)."""
