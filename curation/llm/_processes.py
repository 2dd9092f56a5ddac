"""Collection spread over worker processes that share the SQLite cache.

Why: the openai SDK alone spends ~1 ms of CPU per request (request options,
header merging, URL parsing, response wrapping: measured with no network at all
in benchmarks/bench_llm.py), so one process cannot send more than ~1000
requests a second whatever the server does, and at 64 concurrent calls against
a 50 ms server the bound is 1280 a second. ``LLMSettings.processes = N`` splits
the calls into N shards, each answered by its own process with its own event
loop, SDK client and a 1/N share of every endpoint's concurrency (so the limits
in params still hold in total).

The guarantees stay those of one process: every child commits each answer to
the shared cache (SQLite/WAL serialises the writers) before it counts, the
parent reads the answers back from the cache, the first call that fails for
good stops every child and is raised, and a child whose parent dies (``kill -9``)
exits within ~50 ms, so a crash loses at most the calls that were in flight.
Children start from a forkserver that has imported this package once, so a
run pays the import once, not per child.
"""

from __future__ import annotations

import asyncio
import multiprocessing as mp
import os
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol, cast

from curation.llm._cache import CompletionCache
from curation.llm._types import Backend, ShardSpec

_PARENT_POLL_S = 0.05


class ShardRunner(Protocol):
    """Answers one shard's calls through ``backend`` and ``cache`` (``run_calls``).

    Handed to :func:`run_shards` by its caller, so this module imports no panel code.
    """

    def __call__(
        self,
        calls: Sequence[Any],
        backend: Backend,
        cache: CompletionCache,
        *,
        progress: bool = ...,
        on_commit: Callable[[int], None] | None = ...,
    ) -> Awaitable[object]: ...


def share(limit: int, index: int, n: int) -> int:
    """Child ``index``'s part of ``limit`` slots split over ``n`` children (sums to limit)."""
    return limit // n + (1 if index < limit % n else 0)


def _watch_parent(parent: int) -> None:
    """Exit at once when the parent is gone (``kill -9`` of the stage)."""
    while True:
        time.sleep(_PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(1)


def _child(
    spec: ShardSpec,
    run_calls: ShardRunner,
    calls: Sequence[Any],
    index: int,
    n: int,
    conn: Connection,
) -> None:
    """One shard in its own process; reports ("progress", k) ... then ("done"|"error", x)."""
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    models = [
        m.model_copy(update={"concurrency": share(spec.limits[m.name], index, n)})
        for m in spec.models
    ]
    settings = spec.settings.model_copy(update={"processes": 1})

    async def run() -> None:
        backend = spec.factory(models, settings, environ=spec.environ)
        try:
            with CompletionCache(spec.cache_path) as cache:
                await run_calls(
                    calls, backend, cache, progress=False, on_commit=lambda k: conn.send(k)
                )
        finally:
            await backend.aclose()

    try:
        asyncio.run(run())
    except BaseException as exc:  # noqa: BLE001 - everything goes back to the parent
        conn.send(("error", _portable(exc)))
    else:
        conn.send(("done", None))
    finally:
        conn.close()


def _portable(exc: BaseException) -> BaseException:
    """The exception itself when it pickles, else a CurationError with its message."""
    import pickle

    from curation.errors import CurationError

    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # noqa: BLE001
        return CurationError(f"{type(exc).__name__}: {exc}")


def _context() -> Any:
    try:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["curation.llm"])
        return ctx
    except ValueError:  # no forkserver on this platform
        return mp.get_context("spawn")


def run_shards(
    spec: ShardSpec,
    calls: Sequence[Any],
    n: int,
    *,
    run_calls: ShardRunner,
    on_progress: Callable[[int], None],
    stop: threading.Event,
) -> None:
    """Answer ``calls`` in ``n`` child processes (blocking; run it in a thread).

    Each child rebuilds the backend with ``spec.factory`` and answers its shard with
    ``run_calls`` (both pickled by reference, so module-level).

    Returns when every child is done; raises the first child's error after
    stopping the others; stops them all when ``stop`` is set (the caller was
    cancelled).
    """
    n = max(1, min(n, *spec.limits.values()))  # every child needs at least one slot
    ctx = _context()
    shards = [list(calls[k::n]) for k in range(n)]
    procs: list[Any] = []
    conns: dict[Connection, int] = {}
    try:
        for k, shard in enumerate(shards):
            if not shard:
                continue
            parent_end, child_end = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=_child, args=(spec, run_calls, shard, k, n, child_end), name=f"collect-{k}"
            )
            proc.start()
            child_end.close()
            procs.append(proc)
            conns[parent_end] = k
        while conns and not stop.is_set():
            for ready in wait(list(conns), timeout=0.2):
                conn = cast(Connection, ready)
                try:
                    msg: Any = conn.recv()
                except EOFError:
                    k = conns.pop(conn)
                    raise RuntimeError(f"collection worker {k} died without a result") from None
                if isinstance(msg, int):
                    on_progress(msg)
                    continue
                conns.pop(conn)
                kind, payload = msg
                if kind == "error" and isinstance(payload, BaseException):
                    raise payload
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
        for proc in procs:
            proc.join(10)
