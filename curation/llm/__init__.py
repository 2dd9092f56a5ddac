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

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.llm._accounting import Accounting, Price, Tally
    from curation.llm._cache import CompletionCache
    from curation.llm._client import SAMPLE_HEADER, OpenAIBackend
    from curation.llm._config import (
        BACKENDS,
        DEFAULT_TEMPLATE_FOR,
        DEFAULT_TEMPLATES,
        BackendName,
        CollectSettings,
        LLMSettings,
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
    from curation.llm._settings import (
        AnswerType,
        CollectSimulationSettings,
        PanelModel,
        PanelSettings,
        with_role_defaults,
    )
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

_EXPORTS = {
    "AnswerType": "_settings",
    "CollectSimulationSettings": "_settings",
    "PanelModel": "_settings",
    "PanelSettings": "_settings",
    "with_role_defaults": "_settings",
    "BACKENDS": "_config",
    "BACKEND_KINDS": "_setup",
    "DEFAULT_TEMPLATES": "_config",
    "DEFAULT_TEMPLATE_FOR": "_config",
    "SAMPLE_HEADER": "_client",
    "SIMULATED_PREFIX": "_simulate",
    "Accounting": "_accounting",
    "Backend": "_types",
    "BackendKind": "_setup",
    "BackendName": "_config",
    "CallResult": "_types",
    "ChatRequest": "_types",
    "CollectResult": "_panel",
    "CollectSettings": "_config",
    "Completion": "_types",
    "CompletionCache": "_cache",
    "ItemTruth": "_simulate",
    "LLMCallError": "_errors",
    "LLMSettings": "_config",
    "Message": "_types",
    "OpenAIBackend": "_client",
    "PlannedCall": "_panel",
    "Price": "_accounting",
    "RetryPolicy": "_config",
    "RunStats": "_panel",
    "Sampling": "_types",
    "Secrets": "_scrub",
    "SimulatedBackend": "_simulate",
    "SimulationSettings": "_config",
    "SkippedItem": "_panel",
    "Tally": "_accounting",
    "acollect": "_panel",
    "backend_for": "_setup",
    "backend_kind": "_setup",
    "build_backend": "_setup",
    "cached_complete": "_setup",
    "collect_settings": "_config",
    "default_abilities": "_simulate",
    "grade_calls": "_panel",
    "hashed_difficulty": "_simulate",
    "item_truths": "_setup",
    "llm_settings": "_config",
    "load_difficulties": "_simulate",
    "panel_models": "_config",
    "plan_calls": "_panel",
    "redact_url": "_scrub",
    "render_prompt": "_config",
    "responses_from_samples": "_panel",
    "run_calls": "_panel",
}

__all__ = [
    "AnswerType",
    "CollectSimulationSettings",
    "PanelModel",
    "PanelSettings",
    "with_role_defaults",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
