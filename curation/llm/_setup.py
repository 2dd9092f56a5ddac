"""Building a backend from settings, and single cached calls (for BenchFill and the judge).

:data:`BACKEND_KINDS` is the one table of ``backend:`` values (lm-eval's model registry,
inspect_ai's ``@modelapi``): what each builds and whether its answers are simulated.
:func:`backend_for` builds from it, and :func:`backend_kind` answers the other questions
a stage asks about a name (is it simulated, what do its metrics call it), so no caller
compares backend names. Each caller brings its own simulation (the collect panel here,
the calibration panel in :mod:`curation.calibrate`, the judge in :mod:`curation.judge`,
BenchFill's rewriter in :mod:`curation.fill`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

import polars as pl

from curation.llm._cache import CompletionCache
from curation.llm._reply_version import SIMULATED, reply_version, stored_key
from curation.llm._settings import CollectSettings, LLMSettings, PanelModel
from curation.llm._simulate import (
    ItemTruth,
    SimulatedBackend,
    default_abilities,
    load_difficulties,
)
from curation.llm._types import Backend, CallResult, ChatRequest


def item_truths(items: pl.DataFrame) -> dict[str, ItemTruth]:
    """What the simulation must know per item (reference, answer type, choices)."""
    return {
        str(row["item"]): ItemTruth(
            reference=row.get("answer"),
            answer_type=row["answer_type"],
            choices=tuple(row["choices"]) if row.get("choices") is not None else None,
        )
        for row in items.iter_rows(named=True)
    }


class BackendBuilder(Protocol):
    """Builds the backend of one :class:`BackendKind` (see :func:`backend_for`)."""

    def __call__(
        self,
        models: Sequence[PanelModel],
        llm: LLMSettings,
        *,
        simulate: Callable[[], Backend],
        environ: Mapping[str, str] | None,
    ) -> Backend: ...


@dataclass(frozen=True)
class BackendKind:
    """One value of a ``backend:`` setting (``collect``, ``fill``, ``judge``)."""

    name: str
    """The value in params.yaml."""
    simulated: bool
    """Answers are seeded draws, not a model's: their records say ``source = simulated``
    and never reach a published dataset (ARCHITECTURE invariant 4)."""
    answered_by: str
    """``Backend.name`` of what it builds: the ``backend`` a stage's metrics record."""
    description: str
    build: BackendBuilder


# the builders' signature is BackendBuilder's: backend_for calls each with every argument
def _openai(
    models: Sequence[PanelModel],
    llm: LLMSettings,
    *,
    simulate: Callable[[], Backend],  # noqa: ARG001 (a real endpoint does not simulate)
    environ: Mapping[str, str] | None,
) -> Backend:
    from curation.llm._client import OpenAIBackend  # the SDK only when it is used

    return OpenAIBackend(list(models), llm, environ=environ)


def _simulated(  # the caller's simulate() already holds its models and settings
    models: Sequence[PanelModel],  # noqa: ARG001
    llm: LLMSettings,  # noqa: ARG001
    *,
    simulate: Callable[[], Backend],
    environ: Mapping[str, str] | None,  # noqa: ARG001
) -> Backend:
    return simulate()


BACKEND_KINDS: Mapping[str, BackendKind] = MappingProxyType(
    {
        "simulate": BackendKind(
            name="simulate",
            simulated=True,
            answered_by=SIMULATED,
            description="offline, seeded: the caller's simulation answers (no network)",
            build=_simulated,
        ),
        "openai": BackendKind(
            name="openai",
            simulated=False,
            answered_by="openai",
            description="OpenAI-compatible endpoints named in panel.models (base URL, key)",
            build=_openai,
        ),
    }
)
"""Every ``backend:`` value, by name (the params model's ``BackendName`` lists the same)."""


def backend_kind(name: str) -> BackendKind:
    """The registry entry of ``name``; ``ValueError`` naming the valid ones otherwise."""
    try:
        return BACKEND_KINDS[name]
    except KeyError:
        raise ValueError(f"backend {name!r} is not one of {', '.join(BACKEND_KINDS)}") from None


def backend_for(
    name: str,
    models: Sequence[PanelModel],
    llm: LLMSettings,
    *,
    simulate: Callable[[], Backend],
    environ: Mapping[str, str] | None = None,
) -> Backend:
    """The backend a ``backend:`` setting names (:data:`BACKEND_KINDS`): ``openai`` — one
    :class:`~curation.llm.OpenAIBackend` serving ``models``; ``simulate`` — what
    ``simulate()`` builds (the caller's seeded simulation, whose records say
    ``source = simulated``). Call it inside the event loop that will use it."""
    return backend_kind(name).build(models, llm, simulate=simulate, environ=environ)


def build_backend(
    collect: CollectSettings,
    llm: LLMSettings,
    models: Sequence[PanelModel],
    *,
    benchmark: str,
    items: pl.DataFrame,
    environ: Mapping[str, str] | None = None,
) -> Backend:
    """The backend ``collect.backend`` names: ``simulate`` (offline, seeded) or ``openai``.

    Call it inside the event loop that will use it: the real backend's semaphores
    and connection pools belong to one loop.
    """

    def simulate() -> Backend:
        difficulties = None
        if collect.simulation.difficulties_path is not None:
            difficulties = load_difficulties(collect.simulation.difficulties_path)
        return SimulatedBackend(
            benchmark=benchmark,
            truths=item_truths(items),
            abilities=default_abilities(models),
            seed=collect.seed,
            difficulties=difficulties,
            difficulty_scale=collect.simulation.difficulty_scale,
        )

    return backend_for(collect.backend, models, llm, simulate=simulate, environ=environ)


async def cached_complete(
    backend: Backend, cache: CompletionCache, request: ChatRequest
) -> CallResult:
    """One call through the cache: served from it if answered before (by the same code,
    for a simulated backend), else asked and stored."""
    key = request.key(backend.namespace)
    row = stored_key(key, reply_version(backend))
    hit = cache.get(row)
    if hit is not None:
        return CallResult(request, key, hit, cached=True)
    completion = await backend.complete(request)
    cache.put(row, request, completion, namespace=backend.namespace)
    return CallResult(request, key, completion, cached=False)
