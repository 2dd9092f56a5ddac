"""params.yaml ``panel``, ``collect`` and ``llm``: the models, the collection switch, the client.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``. These models are what the LLM layer itself
reads: everything is checked before any call is made, so a typo fails in a second, not
after an hour of collection.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationInfo,
    field_validator,
)

from curation.settings import BackendName, Section, Transport, Unit

BACKENDS: tuple[BackendName, ...] = get_args(BackendName)
"""Every ``backend:`` value (``collect``, ``fill``, ``judge``), in the schema's order."""
HttpTransport = Literal["aiohttp", "httpx"]
"""The SDK's HTTP transport (:class:`curation.llm.OpenAIBackend`; not a params key)."""

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
    concurrency: Annotated[PositiveInt | None, Transport] = None
    """Concurrent requests to this endpoint; null = ``llm.default_concurrency``
    (transport: never changes an answer)."""
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


NO_PANEL = (
    ".panel.models: list at least one model (name, model_id, and for real endpoints "
    "base_url_env / api_key_env)"
)
"""Why a params file that collects (``collect.enabled: true``) but has no ``panel`` fails."""


def require_panel(panel: PanelSettings | None) -> list[PanelModel]:
    """The panel's models; ``ValueError`` (:data:`NO_PANEL`) when params.yaml has none."""
    if panel is None:
        raise ValueError(NO_PANEL)
    return list(panel.models)


DEFAULT_TEMPLATES: dict[str, str] = {
    "numeric-boxed": (
        "Solve the following problem. Reason step by step, then give the final answer "
        "as a number in \\boxed{}.\n\n{question}"
    ),
    "exact-answer-tags": (
        "{question}\n\nGive your final answer between [ANSWER] and [/ANSWER] tags."
    ),
    "choice-letter": (
        "{question}\n\n{choices}\n\nAnswer with the letter of the correct option, "
        "in the form 'Answer: X'."
    ),
    "code-block": "{question}\n\nWrite your solution in a single ```python code block.",
    "free": "{question}",
}
"""Built-in prompt templates; ``{question}`` and ``{choices}`` are filled in verbatim."""

DEFAULT_TEMPLATE_FOR: dict[str, str] = {
    "numeric": "numeric-boxed",
    "exact": "exact-answer-tags",
    "choice": "choice-letter",
    "code": "code-block",
    "free": "free",
}
"""The built-in template of each answer type."""


class CollectSimulationSettings(Section):
    """Where the simulation backend's latent abilities and difficulties come from.

    Abilities: ``panel.models[].ability``; models without one are spread evenly over
    [-2, 2] in panel order (first = weakest). Difficulties: ``difficulties`` names a file
    mapping item -> b (a JSON object ``{item: b}``, a JSON object with an ``items`` or
    ``b`` mapping, or a CSV/parquet with columns ``item`` and ``b``, e.g. a calibration
    from ``annotate``); items it does not list, or every item when it is null, get a
    deterministic hash-based difficulty ~ N(0, scale²).
    """

    difficulties: str | None = None
    """File item -> b (JSON, or CSV/parquet with item, b); null = hash-based."""
    difficulty_scale: PositiveFloat = 1.5
    """Standard deviation of the hash-based difficulties (logit scale)."""

    @property
    def difficulties_path(self) -> Path | None:
        """``difficulties`` as a path (None: hash-based)."""
        return Path(self.difficulties) if self.difficulties else None


class CollectSettings(Section):
    """params.yaml ``collect``: import (false) or ask the panel (true), and how to ask."""

    enabled: bool = False
    """The one switch: false = import the bundled responses; true = collect from the panel."""
    backend: BackendName = "simulate"
    """simulate (offline, seeded; records say source=simulated) | openai (the endpoints)."""
    seed: NonNegativeInt = 0
    """Simulation draws; sent to endpoints as seed + sample index (``llm.send_seed``)."""
    progress: Annotated[bool, Transport] = True
    """Progress bar with rate and ETA (stderr; transport: never changes an output)."""
    simulation: CollectSimulationSettings = CollectSimulationSettings()
    """The simulation backend's abilities and difficulties."""
    templates: dict[str, str] = dict(DEFAULT_TEMPLATES)
    """Prompt templates by id, over the built-ins: an entry adds a template or replaces the
    built-in of that id (``{question}`` and ``{choices}`` are filled in verbatim)."""
    template_for: dict[str, str] = dict(DEFAULT_TEMPLATE_FOR)
    """Template id per answer type, over the built-ins; every id must be a template."""
    sandbox: None = None
    """Code sandbox kind: none is built in yet, so code items are skipped (never executed)."""

    @field_validator("templates")
    @classmethod
    def _over_builtin_templates(cls, value: dict[str, str]) -> dict[str, str]:
        return {**DEFAULT_TEMPLATES, **value}

    @field_validator("template_for")
    @classmethod
    def _known_templates(cls, value: dict[str, str], info: ValidationInfo) -> dict[str, str]:
        merged = {**DEFAULT_TEMPLATE_FOR, **value}
        templates = info.data.get("templates")
        if templates is None:  # templates itself is invalid: reported on its own
            return merged
        for answer_type, template_id in merged.items():
            if template_id not in templates:
                raise ValueError(
                    f".{answer_type}: unknown template {template_id!r}; "
                    f"known: {', '.join(sorted(templates))}"
                )
        return merged

    @field_validator("sandbox", mode="before")
    @classmethod
    def _no_sandbox(cls, value: Any) -> Any:
        if value is not None:
            raise ValueError(
                f"{value!r}: no code sandbox is built in yet; remove the setting (code items "
                "are then skipped with a warning, never executed)"
            )
        return value

    def template_id(self, model: PanelModel, answer_type: str) -> str:
        """The prompt template ``model`` uses for ``answer_type``: its own, else collect's."""
        own = next((t for kind, t in model.prompt_templates.items() if kind == answer_type), None)
        return own or self.template_for.get(answer_type, "free")

    def unknown_templates(self, models: Sequence[PanelModel]) -> str | None:
        """``[i].prompt_templates.<type>: why`` for the first panel model naming a template
        that is not in :attr:`templates` (None when every one is known)."""
        for i, model in enumerate(models):
            for answer_type, template_id in model.prompt_templates.items():
                if template_id not in self.templates:
                    return (
                        f"[{i}].prompt_templates.{answer_type}: unknown prompt template "
                        f"{template_id!r}; known: {', '.join(sorted(self.templates))}"
                    )
        return None


class LLMSettings(Section):
    """params.yaml ``llm``: client, retries and cache of every model call.

    Most keys are transport (:data:`curation.settings.Transport`): DVC stages depend on
    ``cache``, ``send_seed`` and ``stream_usage`` only.

    Retries back off exponentially with jitter (:meth:`retry_delay`); a server's
    Retry-After is honoured up to ``max_retry_after_s``.
    """

    timeout_s: Annotated[PositiveFloat, Transport] = 120.0
    """Read timeout per request (between chunks when streaming), seconds (transport)."""
    connect_timeout_s: Annotated[PositiveFloat, Transport] = 10.0
    """Connect (and connection-pool) timeout, seconds (transport)."""
    max_retries: Annotated[NonNegativeInt, Transport] = 6
    """Retries after the first attempt (7 attempts in all by default), on 429, 5xx,
    timeouts, resets and malformed JSON (transport)."""
    backoff_base_s: Annotated[NonNegativeFloat, Transport] = 0.5
    """First backoff step, seconds; it doubles with each retry (transport)."""
    backoff_max_s: Annotated[NonNegativeFloat, Transport] = 30.0
    """Largest backoff step, seconds (transport)."""
    max_retry_after_s: Annotated[NonNegativeFloat, Transport] = 120.0
    """Longest Retry-After honoured, seconds; a longer one is cut to this (transport)."""
    cache: str = ".llm-cache/completions.sqlite"
    """The completion cache (SQLite/WAL): every answered call, kept across runs (not
    transport: another cache holds other answers, and the metrics count its hits)."""
    send_seed: bool = True
    """Send ``seed = collect.seed + sample index`` (reproducible draws where supported)."""
    stream_usage: bool = True
    """Ask for usage in streamed answers (``stream_options.include_usage``)."""
    default_concurrency: Annotated[PositiveInt, Transport] = 8
    """Concurrent requests to an endpoint whose models set no ``concurrency`` (transport)."""
    processes: Annotated[PositiveInt, Transport] = 1
    """Worker processes answering the calls (each with a share of every endpoint's
    concurrency, all writing to the one cache); > 1 lifts the one-core ceiling of the
    SDK's per-request CPU (curation/llm/_processes.py; transport: the parent reads each
    answer back from the cache by its call, whichever process answered it)."""

    @property
    def cache_path(self) -> Path:
        """``cache`` as a path."""
        return Path(self.cache)

    def retry_delay(
        self, retry: int, rng: random.Random, retry_after: float | None = None
    ) -> float:
        """Seconds to wait before retry number ``retry`` (0-based).

        "Equal jitter": half the exponential step is fixed, half random, so delays still
        grow while concurrent clients spread out. A server's Retry-After is a floor, never
        shortened by jitter. The jitter's RNG is unseeded on purpose: it only spreads
        retries in time and never changes an output, so it needs no seed from params.
        """
        step = min(self.backoff_max_s, self.backoff_base_s * (2**retry))
        wait = step / 2 + rng.uniform(0, step / 2)
        if retry_after is not None and math.isfinite(retry_after) and retry_after > 0:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait
