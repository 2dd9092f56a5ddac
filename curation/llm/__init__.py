"""The LLM layer: every model call in benchcurate goes through here.

Client (OpenAI-compatible endpoints, retries, per-endpoint limits), cache (SQLite,
content-addressed, crash-safe), accounting (tokens, latency, TTFT, retries, cost),
the panel that collects graded responses, and the seeded simulation backend that
stands in for endpoints offline. Nothing outside this package imports ``openai``.

Typical use (what the ``collect`` stage does)::

    models = panel_models(params)
    backend = build_backend(collect_settings(params), llm_settings(params), models, ...)
    with CompletionCache(path) as cache:
        result = await acollect(items, benchmark=..., models=models, backend=backend, ...)
"""

from typing import TYPE_CHECKING, Any

from curation.llm._accounting import Accounting, Price, Tally
from curation.llm._cache import CompletionCache
from curation.llm._config import (
    BACKENDS,
    DEFAULT_TEMPLATE_FOR,
    DEFAULT_TEMPLATES,
    BackendName,
    CollectSettings,
    LLMSettings,
    PanelModel,
    RetryPolicy,
    SimulationSettings,
    collect_settings,
    llm_settings,
    panel_models,
    render_prompt,
)
from curation.llm._errors import LLMCallError
from curation.llm._panel import (
    CollectResult,
    PlannedCall,
    RunStats,
    SkippedItem,
    acollect,
    grade_calls,
    plan_calls,
    responses_from_samples,
    run_calls,
)
from curation.llm._scrub import Secrets, redact_url
from curation.llm._setup import (
    BACKEND_KINDS,
    BackendKind,
    backend_for,
    backend_kind,
    build_backend,
    cached_complete,
    item_truths,
)
from curation.llm._simulate import (
    SIMULATED_PREFIX,
    ItemTruth,
    SimulatedBackend,
    default_abilities,
    hashed_difficulty,
    load_difficulties,
)
from curation.llm._types import Backend, CallResult, ChatRequest, Completion, Message, Sampling

if TYPE_CHECKING:
    from curation.llm._client import SAMPLE_HEADER, OpenAIBackend


def __getattr__(name: str) -> Any:
    # the openai SDK costs ~1 s to import: loaded only by code that talks to an endpoint
    if name in ("OpenAIBackend", "SAMPLE_HEADER"):
        from curation.llm import _client

        return getattr(_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BACKENDS",
    "BACKEND_KINDS",
    "DEFAULT_TEMPLATES",
    "DEFAULT_TEMPLATE_FOR",
    "SAMPLE_HEADER",
    "SIMULATED_PREFIX",
    "Accounting",
    "Backend",
    "BackendKind",
    "BackendName",
    "CallResult",
    "ChatRequest",
    "CollectResult",
    "CollectSettings",
    "Completion",
    "CompletionCache",
    "ItemTruth",
    "LLMCallError",
    "LLMSettings",
    "Message",
    "OpenAIBackend",
    "PanelModel",
    "PlannedCall",
    "Price",
    "RetryPolicy",
    "RunStats",
    "Sampling",
    "Secrets",
    "SimulatedBackend",
    "SimulationSettings",
    "SkippedItem",
    "Tally",
    "acollect",
    "backend_for",
    "backend_kind",
    "build_backend",
    "cached_complete",
    "collect_settings",
    "default_abilities",
    "grade_calls",
    "hashed_difficulty",
    "item_truths",
    "llm_settings",
    "load_difficulties",
    "panel_models",
    "plan_calls",
    "redact_url",
    "render_prompt",
    "responses_from_samples",
    "run_calls",
]
