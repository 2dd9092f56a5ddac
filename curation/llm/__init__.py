"""The LLM layer: every model call in benchcurate goes through here.

Client (OpenAI-compatible endpoints, retries, per-endpoint limits), cache (SQLite,
content-addressed, crash-safe), accounting (tokens, latency, TTFT, retries, cost),
the panel that collects graded responses, and the seeded simulation backend that
stands in for endpoints offline. Nothing outside this package imports ``openai``.

Typical use (what the ``collect`` stage does)::

    models = params.panel.models                      # params: the validated ParamsFile
    backend = build_backend(params.collect, params.llm, models, ...)
    with CompletionCache(path) as cache:
        result = await acollect(items, benchmark=..., models=models, backend=backend, ...)
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.llm._accounting import Accounting, Price, Tally
    from curation.llm._cache import CompletionCache
    from curation.llm._client import SAMPLE_HEADER, OpenAIBackend
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
    from curation.llm._prompt import render_prompt
    from curation.llm._scrub import Secrets, redact_url
    from curation.llm._settings import (
        BACKENDS,
        DEFAULT_TEMPLATE_FOR,
        DEFAULT_TEMPLATES,
        NO_PANEL,
        AnswerType,
        CollectSettings,
        CollectSimulationSettings,
        HttpTransport,
        LLMSettings,
        PanelModel,
        PanelSettings,
        require_panel,
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
    from curation.settings import BackendName

_EXPORTS = {
    "AnswerType": "_settings",
    "CollectSimulationSettings": "_settings",
    "PanelModel": "_settings",
    "PanelSettings": "_settings",
    "HttpTransport": "_settings",
    "NO_PANEL": "_settings",
    "require_panel": "_settings",
    "with_role_defaults": "_settings",
    "BACKENDS": "_settings",
    "BACKEND_KINDS": "_setup",
    "DEFAULT_TEMPLATES": "_settings",
    "DEFAULT_TEMPLATE_FOR": "_settings",
    "SAMPLE_HEADER": "_client",
    "SIMULATED_PREFIX": "_simulate",
    "Accounting": "_accounting",
    "Backend": "_types",
    "BackendKind": "_setup",
    "BackendName": "curation.settings",
    "CallResult": "_types",
    "ChatRequest": "_types",
    "CollectResult": "_panel",
    "CollectSettings": "_settings",
    "Completion": "_types",
    "CompletionCache": "_cache",
    "ItemTruth": "_simulate",
    "LLMCallError": "_errors",
    "LLMSettings": "_settings",
    "Message": "_types",
    "OpenAIBackend": "_client",
    "PlannedCall": "_panel",
    "Price": "_accounting",
    "RunStats": "_panel",
    "Sampling": "_types",
    "Secrets": "_scrub",
    "SimulatedBackend": "_simulate",
    "SkippedItem": "_panel",
    "Tally": "_accounting",
    "acollect": "_panel",
    "backend_for": "_setup",
    "backend_kind": "_setup",
    "build_backend": "_setup",
    "cached_complete": "_setup",
    "default_abilities": "_simulate",
    "grade_calls": "_panel",
    "hashed_difficulty": "_simulate",
    "item_truths": "_setup",
    "load_difficulties": "_simulate",
    "plan_calls": "_panel",
    "redact_url": "_scrub",
    "render_prompt": "_prompt",
    "responses_from_samples": "_panel",
    "run_calls": "_panel",
}

__all__ = [
    "AnswerType",
    "CollectSimulationSettings",
    "PanelModel",
    "PanelSettings",
    "HttpTransport",
    "NO_PANEL",
    "require_panel",
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
    "RunStats",
    "Sampling",
    "Secrets",
    "SimulatedBackend",
    "SkippedItem",
    "Tally",
    "acollect",
    "backend_for",
    "backend_kind",
    "build_backend",
    "cached_complete",
    "default_abilities",
    "grade_calls",
    "hashed_difficulty",
    "item_truths",
    "load_difficulties",
    "plan_calls",
    "redact_url",
    "render_prompt",
    "responses_from_samples",
    "run_calls",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
