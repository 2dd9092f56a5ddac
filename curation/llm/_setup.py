"""Building a backend from settings, and single cached calls (for BenchFill and the judge).

:func:`backend_for` is the one place ``simulate`` vs ``openai`` is decided; each caller
brings its own simulation (the collect panel here, the calibration panel in
:mod:`curation.calibrate`, the judge in :mod:`curation.judge`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from curation.llm._cache import CompletionCache
from curation.llm._config import BACKENDS, CollectSettings, LLMSettings
from curation.llm._reply_version import reply_version, stored_key
from curation.llm._settings import PanelModel
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


def backend_for(
    name: str,
    models: Sequence[PanelModel],
    llm: LLMSettings,
    *,
    simulate: Callable[[], Backend],
    environ: Mapping[str, str] | None = None,
) -> Backend:
    """The backend a ``backend:`` setting names: ``openai`` — one
    :class:`~curation.llm.OpenAIBackend` serving ``models``; ``simulate`` — what
    ``simulate()`` builds (the caller's seeded simulation, whose records say
    ``source = simulated``). Call it inside the event loop that will use it."""
    if name == "openai":
        from curation.llm._client import OpenAIBackend  # the SDK only when it is used

        return OpenAIBackend(list(models), llm, environ=environ)
    if name == "simulate":
        return simulate()
    raise ValueError(f"backend {name!r} is not one of {', '.join(BACKENDS)}")


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
        if collect.simulation.difficulties is not None:
            difficulties = load_difficulties(collect.simulation.difficulties)
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
