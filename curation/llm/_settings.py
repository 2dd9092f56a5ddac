"""params.yaml ``panel``, ``collect`` and ``llm``: the models, the collection switch, the client.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
)

from curation.settings import BackendName, Section, Unit


class PanelModelSettings(Section):
    """A model at an endpoint (``schemas/panel_model.schema.json`` holds the finer checks)."""

    name: str = Field(min_length=1)
    model_id: str = Field(min_length=1)
    base_url_env: str | None = None
    api_key_env: str | None = None
    revision: str | None = None
    temperature: NonNegativeFloat | None = None
    max_tokens: PositiveInt | None = None
    trials: PositiveInt | None = None
    system_prompt: str | None = None
    prompt_templates: dict[str, str] | None = None
    concurrency: PositiveInt | None = None
    top_p: Unit | None = None
    stream: bool | None = None
    input_price_per_1m: NonNegativeFloat | None = None
    output_price_per_1m: NonNegativeFloat | None = None
    ability: float | None = None


class RoleModelSettings(PanelModelSettings):
    """A panel-model entry whose name and model id have defaults (rewriter, judge)."""

    name: str = Field("model", min_length=1)
    model_id: str = Field("model", min_length=1)


class PanelSettings(Section):
    """params.yaml ``panel``: the answering panel, weakest first."""

    models: list[PanelModelSettings] = Field(min_length=1)


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
