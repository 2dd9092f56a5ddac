"""Settings of the LLM layer, read from params.yaml sections ``panel``, ``collect``, ``llm``.

Panel entries are validated against ``schemas/panel_model.schema.json`` and take
their defaults from it, so the schema stays the one description of a panel model.
Everything is parsed into frozen dataclasses before any call is made, so a typo
fails in a second, not after an hour of collection.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from curation.errors import ConfigError
from curation.llm._settings import PanelModel, PanelSettings
from curation.settings import parse_section

BackendName = Literal["simulate", "openai"]
"""simulate: the seeded offline simulation; openai: OpenAI-compatible endpoints."""
BACKENDS: tuple[BackendName, ...] = ("simulate", "openai")
HttpTransport = Literal["aiohttp", "httpx"]

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


def _where(params_file: str, key: str) -> str:
    return f"{params_file}: {key}"


def _section(params: Mapping[str, Any], name: str, params_file: str) -> dict[str, Any]:
    value = params.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(f"{_where(params_file, name)}: expected a mapping")
    return value


def _opt(
    section: Mapping[str, Any], key: str, where: str, default: Any, kind: type | tuple[type, ...]
) -> Any:
    value = section.get(key)
    if value is None:
        return default
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise ConfigError(f"{where}.{key}: expected a number, got {value!r}")
    if not isinstance(value, kind):
        name = getattr(kind, "__name__", "number")
        raise ConfigError(f"{where}.{key}: expected {name}, got {type(value).__name__}")
    return value


# ---- panel --------------------------------------------------------------------------------


def panel_models(
    params: Mapping[str, Any], *, params_file: str = "params.yaml"
) -> list[PanelModel]:
    """Parse ``panel.models`` (:class:`PanelSettings`: defaults, types, unique names)."""
    if params.get("panel") is None:
        raise ConfigError(
            f"{_where(params_file, 'panel.models')}: list at least one model "
            "(name, model_id, and for real endpoints base_url_env / api_key_env)"
        )
    return list(
        parse_section(PanelSettings, params.get("panel"), where=_where(params_file, "panel")).models
    )


# ---- llm (client) -------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter; Retry-After is honoured (up to a cap).

    Jitter uses an unseeded RNG on purpose: it only spreads retries in time and
    never changes an output, so it does not need a seed from params.
    """

    max_retries: int = 6
    """Retries after the first attempt (7 attempts in all by default)."""
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    max_retry_after_s: float = 120.0
    """Longest Retry-After honoured; a longer one is cut to this."""

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based).

        "Equal jitter": half the exponential step is fixed, half random, so delays
        still grow while concurrent clients spread out. A server's Retry-After is a
        floor, never shortened by jitter.
        """
        step = min(self.backoff_max_s, self.backoff_base_s * (2**retry))
        wait = step / 2 + rng.uniform(0, step / 2)
        if retry_after is not None and math.isfinite(retry_after) and retry_after > 0:
            wait = max(wait, min(retry_after, self.max_retry_after_s))
        return wait


@dataclass(frozen=True)
class LLMSettings:
    """Client, retry and cache settings (params.yaml ``llm``)."""

    timeout_s: float = 120.0
    """Read timeout per request (between bytes when streaming)."""
    connect_timeout_s: float = 10.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    cache_path: Path = Path(".llm-cache/completions.sqlite")
    send_seed: bool = True
    """Send ``seed = collect.seed + sample index`` (reproducible draws where supported)."""
    stream_usage: bool = True
    """Ask for usage in streamed answers (``stream_options.include_usage``)."""
    default_concurrency: int = 8
    clients_per_connections: int = 8
    """httpx transport only: one HTTP client per this many concurrent requests (keeps
    httpcore's connection pools short)."""
    http_transport: HttpTransport = "aiohttp"
    """The SDK's HTTP transport: ``aiohttp`` (less client CPU per request, see
    benchmarks/bench_llm.py) or ``httpx`` (the SDK's default; kept for comparison and
    as a fallback, not a params.yaml key)."""
    processes: int = 1
    """Worker processes answering the calls (each with a share of every endpoint's
    concurrency, all writing to the one cache); > 1 lifts the one-core ceiling of
    the SDK's per-request CPU (curation/llm/_processes.py)."""


def llm_settings(params: Mapping[str, Any], *, params_file: str = "params.yaml") -> LLMSettings:
    section = _section(params, "llm", params_file)
    where = _where(params_file, "llm")
    num = (int, float)
    retry = RetryPolicy(
        max_retries=_opt(section, "max_retries", where, 6, int),
        backoff_base_s=float(_opt(section, "backoff_base_s", where, 0.5, num)),
        backoff_max_s=float(_opt(section, "backoff_max_s", where, 30.0, num)),
        max_retry_after_s=float(_opt(section, "max_retry_after_s", where, 120.0, num)),
    )
    if retry.max_retries < 0:
        raise ConfigError(f"{where}.max_retries: must be 0 or more")
    settings = LLMSettings(
        timeout_s=float(_opt(section, "timeout_s", where, 120.0, num)),
        connect_timeout_s=float(_opt(section, "connect_timeout_s", where, 10.0, num)),
        retry=retry,
        cache_path=Path(_opt(section, "cache", where, ".llm-cache/completions.sqlite", str)),
        send_seed=_opt(section, "send_seed", where, True, bool),
        stream_usage=_opt(section, "stream_usage", where, True, bool),
        default_concurrency=_opt(section, "default_concurrency", where, 8, int),
        processes=_opt(section, "processes", where, 1, int),
    )
    if settings.timeout_s <= 0:
        raise ConfigError(f"{where}.timeout_s: must be positive")
    if settings.processes < 1:
        raise ConfigError(f"{where}.processes: must be 1 or more")
    return settings


# ---- collect ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SimulationSettings:
    """Where the simulation backend's latent abilities and difficulties come from.

    Abilities: ``panel.models[].ability``; models without one are spread evenly
    over [-2, 2] in panel order (first = weakest). Difficulties: ``difficulties``
    names a file mapping item -> b (a JSON object ``{item: b}``, a JSON object with
    an ``items`` or ``b`` mapping, or a CSV/parquet with columns ``item`` and ``b``,
    e.g. a calibration from ``annotate``); items it does not list, or every item
    when it is null, get a deterministic hash-based difficulty ~ N(0, scale²).
    """

    difficulties: Path | None = None
    difficulty_scale: float = 1.5


@dataclass(frozen=True)
class CollectSettings:
    """params.yaml ``collect``: the switch, the backend, the seed, the templates."""

    enabled: bool = False
    """The one switch: false = import responses; true = collect from the panel."""
    backend: BackendName = "simulate"
    seed: int = 0
    templates: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_TEMPLATES))
    template_for: Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_TEMPLATE_FOR))
    simulation: SimulationSettings = field(default_factory=SimulationSettings)
    progress: bool = True
    sandbox: str | None = None
    """Code sandbox kind; none is built in yet, so code items are skipped."""


def collect_settings(
    params: Mapping[str, Any], *, params_file: str = "params.yaml"
) -> CollectSettings:
    section = _section(params, "collect", params_file)
    where = _where(params_file, "collect")
    backend = _opt(section, "backend", where, "simulate", str)
    if backend not in BACKENDS:
        raise ConfigError(f"{where}.backend: {backend!r} is not one of {', '.join(BACKENDS)}")
    templates = dict(DEFAULT_TEMPLATES)
    templates.update(_opt(section, "templates", where, {}, dict))
    template_for = dict(DEFAULT_TEMPLATE_FOR)
    template_for.update(_opt(section, "template_for", where, {}, dict))
    for answer_type, template_id in template_for.items():
        if template_id not in templates:
            raise ConfigError(
                f"{where}.template_for.{answer_type}: unknown template {template_id!r}; "
                f"known: {', '.join(sorted(templates))}"
            )
    sim = _opt(section, "simulation", where, {}, dict)
    sim_where = f"{where}.simulation"
    difficulties = _opt(sim, "difficulties", sim_where, None, str)
    sandbox = _opt(section, "sandbox", where, None, str)
    if sandbox is not None:
        raise ConfigError(
            f"{where}.sandbox: {sandbox!r}: no code sandbox is built in yet; remove the "
            "setting (code items are then skipped with a warning, never executed)"
        )
    return CollectSettings(
        enabled=_opt(section, "enabled", where, False, bool),
        backend=backend,
        seed=_opt(section, "seed", where, 0, int),
        templates=templates,
        template_for=template_for,
        simulation=SimulationSettings(
            difficulties=Path(difficulties) if difficulties else None,
            difficulty_scale=float(_opt(sim, "difficulty_scale", sim_where, 1.5, (int, float))),
        ),
        progress=_opt(section, "progress", where, True, bool),
        sandbox=sandbox,
    )


def template_id_for(model: PanelModel, answer_type: str, settings: CollectSettings) -> str:
    """The prompt template a model uses for an answer type (model's own, else collect's)."""
    own = next((t for kind, t in model.prompt_templates.items() if kind == answer_type), None)
    return own or settings.template_for.get(answer_type, "free")


def render_prompt(template: str, question: str, choices: list[str] | None) -> str:
    """Fill ``{question}`` and ``{choices}`` (``A. ...`` lines) into a template.

    Plain replacement, not ``str.format``: questions and templates are full of
    LaTeX braces.
    """
    listed = ""
    if choices:
        listed = "\n".join(f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(choices))
    return template.replace("{question}", question).replace("{choices}", listed)
