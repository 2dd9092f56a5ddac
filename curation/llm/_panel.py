"""The panel: ask every model k times per item, cached and resumable, then grade.

One code path for real endpoints and the simulation: a list of planned calls is
built from the items, the cache answers what it can, the backend answers the
rest (each answer committed to the cache the moment it returns), and grading and
table building run on the complete set. Because nothing is graded or written
until every call has an answer, a crash loses at most the calls in flight, and a
rerun repeats none that returned.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from curation.errors import ConfigError
from curation.grading import CodeSandbox, GradingSettings, grade, method_for
from curation.llm._accounting import Accounting, Price
from curation.llm._cache import CompletionCache
from curation.llm._prompt import render_prompt
from curation.llm._reply_version import reply_version, stored_key
from curation.llm._settings import CollectSettings, LLMSettings, PanelModel
from curation.llm._types import (
    Backend,
    CallResult,
    ChatRequest,
    Completion,
    Message,
    Sampling,
    ShardSpec,
)
from curation.schemas import conform, empty_frame


@dataclass(frozen=True)
class PlannedCall:
    """One call the panel needs, with what grading will need about its item."""

    request: ChatRequest
    key: str
    template_id: str
    answer_type: str
    reference: str | None
    choices: tuple[str, ...] | None


@dataclass(frozen=True)
class SkippedItem:
    """An item no model is asked about, and why."""

    item: str
    answer_type: str
    reason: str


@dataclass(frozen=True)
class RunStats:
    """What one run of the calls did."""

    requests: int
    """Calls made to the backend in this run."""
    cache_hits: int
    """Distinct calls served from the cache."""


@dataclass
class CollectResult:
    """Everything ``collect`` produces for one benchmark."""

    samples: pl.DataFrame
    """One row per (model, item, sample): raw output, extracted answer, verdict, usage."""
    responses: pl.DataFrame
    """One row per (model, item): n_trials, n_correct and the protocol."""
    accounting: Accounting
    stats: RunStats
    skipped: list[SkippedItem] = field(default_factory=list)


def prices_of(models: Iterable[PanelModel]) -> dict[str, Price]:
    """Prices per model name, for models that declare both prices."""
    return {
        m.name: Price(m.input_price_per_1m, m.output_price_per_1m)
        for m in models
        if m.input_price_per_1m is not None and m.output_price_per_1m is not None
    }


def plan_calls(
    items: pl.DataFrame,
    models: Sequence[PanelModel],
    *,
    collect: CollectSettings,
    llm: LLMSettings,
    namespace: str,
    grading: GradingSettings | None = None,
    sandbox: CodeSandbox | None = None,
    stage: str = "collect",
    first_sample: int = 0,
) -> tuple[list[PlannedCall], list[SkippedItem]]:
    """The calls to make: item-major, then sample, then model.

    Interleaving models spreads concurrent calls over all endpoints. Items that
    cannot be graded (code without a sandbox, free-form without a judge) are
    skipped here, before any call is paid for. ``first_sample`` plans only sample
    indices from there on (a later batch of an adaptive measurement): the earlier ones
    are never built or keyed.
    """
    calls: list[PlannedCall] = []
    skipped: list[SkippedItem] = []
    max_trials = max(m.trials for m in models)
    for row in items.iter_rows(named=True):
        item, answer_type = str(row["item"]), row["answer_type"]
        method = method_for(answer_type, grading)
        if method == "skip":
            skipped.append(SkippedItem(item, answer_type, "free-form answers need a judge"))
            continue
        if method == "code" and sandbox is None:
            skipped.append(
                SkippedItem(item, answer_type, "code items need a sandbox; none configured")
            )
            continue
        choices = tuple(row["choices"]) if row.get("choices") is not None else None
        per_model = []
        for m in models:
            template_id = collect.template_id(m, answer_type)
            template = collect.templates.get(template_id)
            if template is None:
                raise ConfigError(
                    f"panel model {m.name!r}: unknown prompt template {template_id!r}; "
                    f"known: {', '.join(sorted(collect.templates))}"
                )
            prompt: list[Message] = []
            if m.system_prompt:
                prompt.append(Message("system", m.system_prompt))
            prompt.append(
                Message("user", render_prompt(template, row["question"], list(choices or [])))
            )
            per_model.append((m, template_id, tuple(prompt)))
        for sample in range(first_sample, max_trials):
            for m, template_id, messages in per_model:
                if sample >= m.trials:
                    continue
                seed = collect.seed + sample if llm.send_seed else None
                request = ChatRequest(
                    model=m.name,
                    model_id=m.model_id,
                    messages=messages,
                    sampling=Sampling(m.temperature, m.max_tokens, m.top_p, seed),
                    sample=sample,
                    stream=m.stream,
                    stage=stage,
                    item=item,
                )
                calls.append(
                    PlannedCall(
                        request,
                        request.key(namespace),
                        template_id,
                        answer_type,
                        row.get("answer"),
                        choices,
                    )
                )
    return calls, skipped


async def run_calls(
    calls: Sequence[PlannedCall],
    backend: Backend,
    cache: CompletionCache,
    *,
    progress: bool = True,
    desc: str = "collect",
    on_commit: Callable[[int], None] | None = None,
) -> tuple[dict[str, CallResult], RunStats]:
    """Answer every call: cache first, then the backend, committing each answer at once.

    ``backend.max_in_flight()`` x 2 workers pull calls from one queue (the backend's
    own semaphores do the real limiting; the spare workers keep an endpoint busy
    while others sleep in a backoff), so a million planned calls never become a
    million tasks. Answers that return in the same event-loop turn are committed
    in one transaction before they count as done (at high concurrency they come
    back in waves; measured here, a one-row commit blocks the loop ~160 us, a row
    in a batch of 64 ~90 us). The first call that fails for good cancels the others and is
    raised; what returned before is in the cache for the rerun.

    A backend whose settings ask for ``processes`` > 1 answers through that many
    worker processes sharing the cache (:mod:`curation.llm._processes`); the answers
    are then read back from the cache. ``on_commit(k)`` is told each committed batch.
    """
    from tqdm.auto import tqdm

    unique: dict[str, PlannedCall] = {}
    for call in calls:
        unique.setdefault(call.key, call)
    version = reply_version(backend)  # simulated replies: keyed by the code too
    row_key = {key: stored_key(key, version) for key in unique}
    found = cache.get_many(row_key.values())
    hits = {key: found[row] for key, row in row_key.items() if row in found}
    results: dict[str, CallResult] = {
        key: CallResult(unique[key].request, key, completion, cached=True)
        for key, completion in hits.items()
    }
    todo = [call for key, call in unique.items() if key not in hits]
    limit = max(1, 2 * backend.max_in_flight())
    bar = tqdm(
        total=len(unique),
        initial=len(hits),
        desc=desc,
        unit="call",
        smoothing=0.05,
        mininterval=0.5,
        disable=not progress or os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true"),
        dynamic_ncols=True,
    )

    spec = getattr(backend, "shard_spec", None)
    processes = min(getattr(backend, "processes", 1), len(todo) // 4)
    if spec is not None and processes > 1:
        try:
            await _in_processes(todo, spec(str(cache.path)), processes, bar)
        finally:
            bar.close()
        # worker processes serve real endpoints only, whose rows are the request keys
        got = cache.get_many(row_key[call.key] for call in todo)
        missing = [call for call in todo if row_key[call.key] not in got]
        if missing:
            raise RuntimeError(f"{len(missing)} answers missing after the worker processes")
        for call in todo:
            completion = got[row_key[call.key]]
            results[call.key] = CallResult(call.request, call.key, completion, cached=False)
        return results, RunStats(requests=len(todo), cache_hits=len(hits))

    answered: list[tuple[PlannedCall, Completion]] = []
    """Answers returned but not yet committed (lost on a crash, like calls in flight)."""

    def commit() -> None:
        # one transaction for every answer waiting; only then do they count as done
        batch = answered[:]
        answered.clear()
        cache.put_many(
            [(row_key[call.key], call.request, completion) for call, completion in batch],
            namespace=backend.namespace,
        )
        for call, completion in batch:
            results[call.key] = CallResult(call.request, call.key, completion, cached=False)
        bar.update(len(batch))
        if on_commit is not None:
            on_commit(len(batch))

    async def one(call: PlannedCall) -> None:
        completion = await backend.complete(call.request)
        answered.append((call, completion))
        # yield one loop turn so the answers that arrived with this one join the batch;
        # the first worker back commits them all, the others find nothing to do
        await asyncio.sleep(0)
        if answered:
            commit()

    pending = iter(todo)

    async def worker() -> None:
        # workers share one iterator: no per-call task, no O(in-flight) bookkeeping
        for call in pending:
            await one(call)

    workers = [asyncio.create_task(worker()) for _ in range(min(limit, len(todo)))]
    try:
        if workers:
            done, _ = await asyncio.wait(workers, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                if task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
    finally:
        for task in workers:
            task.cancel()
        if workers:
            await asyncio.gather(*workers, return_exceptions=True)
        if answered:
            commit()  # answers that returned before a failure are kept for the rerun
        bar.close()
    return results, RunStats(requests=len(todo), cache_hits=len(hits))


async def _in_processes(todo: list[PlannedCall], spec: ShardSpec, n: int, bar: Any) -> None:
    import threading

    from curation.llm._processes import run_shards

    stop = threading.Event()
    try:
        await asyncio.to_thread(
            run_shards, spec, todo, n, run_calls=run_calls, on_progress=bar.update, stop=stop
        )
    except BaseException:
        stop.set()  # cancelled: the thread stops the children
        raise


def grade_calls(
    calls: Sequence[PlannedCall],
    results: Mapping[str, CallResult],
    *,
    benchmark: str,
    source: str,
    grading: GradingSettings | None = None,
    sandbox: CodeSandbox | None = None,
) -> pl.DataFrame:
    """The per-sample log: raw output, extracted answer, verdict and usage per call."""
    rows: list[dict[str, Any]] = []
    for call in calls:
        result = results[call.key]
        c = result.completion
        g = grade(
            c.text,
            call.reference,
            call.answer_type,
            choices=call.choices,
            settings=grading,
            sandbox=sandbox,
            item=call.request.item,
            truncated=c.finish_reason == "length",
        )
        rows.append(
            {
                "benchmark": benchmark,
                "model": call.request.model,
                "item": call.request.item,
                "sample": call.request.sample,
                "source": source,
                "answer_type": call.answer_type,
                "grader": g.method,
                "prompt_template": call.template_id,
                "cache_key": call.key,
                "raw_output": c.text,
                "extracted": g.extracted,
                "correct": g.correct,
                "skipped": g.skipped,
                "finish_reason": c.finish_reason,
                "prompt_tokens": c.prompt_tokens,
                "completion_tokens": c.completion_tokens,
                "latency_s": c.latency_s,
                "ttft_s": c.ttft_s,
                "retries": c.retries,
                "served_model": c.served_model,
            }
        )
    if not rows:
        return empty_frame("sample")
    return conform(pl.DataFrame(rows, infer_schema_length=None), "sample")


def responses_from_samples(
    samples: pl.DataFrame,
    models: Sequence[PanelModel],
    *,
    seed: int | None,
) -> pl.DataFrame:
    """Aggregate graded samples into response cells with the protocol that made them."""
    graded = samples.filter(pl.col("correct").is_not_null())
    if graded.height == 0:
        return empty_frame("response")
    cells = graded.group_by("benchmark", "model", "item", maintain_order=True).agg(
        pl.len().cast(pl.Int64).alias("n_trials"),
        pl.col("correct").cast(pl.Int64).sum().alias("n_correct"),
        pl.col("source").first(),
        pl.col("prompt_template").first(),
        pl.col("served_model").first(),
        pl.when(pl.col("prompt_tokens").is_not_null().any())
        .then(pl.col("prompt_tokens").sum())
        .alias("prompt_tokens"),
        pl.when(pl.col("completion_tokens").is_not_null().any())
        .then(pl.col("completion_tokens").sum())
        .alias("completion_tokens"),
        pl.col("latency_s").sum().alias("latency_s"),
    )
    protocol = pl.DataFrame(
        {
            "model": [m.name for m in models],
            "system_prompt": [m.system_prompt for m in models],
            "temperature": [float(m.temperature) for m in models],
            "max_tokens": [m.max_tokens for m in models],
            "revision": [m.revision for m in models],
            "model_id": [m.model_id for m in models],
        },
        schema={
            "model": pl.String,
            "system_prompt": pl.String,
            "temperature": pl.Float64,
            "max_tokens": pl.Int64,
            "revision": pl.String,
            "model_id": pl.String,
        },
    )
    table = cells.join(protocol, on="model", how="left").with_columns(
        pl.lit(seed, dtype=pl.Int64).alias("seed"),
        pl.coalesce(
            pl.col("revision"),
            pl.when(
                (pl.col("served_model") != pl.col("model_id")) & (pl.col("source") != "simulated")
            ).then(pl.col("served_model")),
        ).alias("model_revision"),
    )
    return conform(table, "response").sort("model", "item")


async def acollect(
    items: pl.DataFrame,
    *,
    benchmark: str,
    models: Sequence[PanelModel],
    backend: Backend,
    cache: CompletionCache,
    collect: CollectSettings,
    llm: LLMSettings,
    grading: GradingSettings | None = None,
    sandbox: CodeSandbox | None = None,
    stage: str = "collect",
) -> CollectResult:
    """Collect, grade and tabulate one benchmark's responses from the panel.

    Items that cannot be graded are not asked; they are listed in
    ``result.skipped`` for the caller to warn about.
    """
    calls, skipped = plan_calls(
        items,
        models,
        collect=collect,
        llm=llm,
        namespace=backend.namespace,
        grading=grading,
        sandbox=sandbox,
        stage=stage,
    )
    results, stats = await run_calls(
        calls,
        backend,
        cache,
        progress=collect.progress,
        desc=f"{benchmark} [{backend.name}]",
    )
    source = "simulated" if backend.name == "simulated" else "collected"
    samples = grade_calls(
        calls, results, benchmark=benchmark, source=source, grading=grading, sandbox=sandbox
    )
    seed = collect.seed if (llm.send_seed or source == "simulated") else None
    responses = responses_from_samples(samples, models, seed=seed)
    accounting = Accounting(prices_of(models))
    for call in calls:
        accounting.record(results[call.key])
    return CollectResult(samples, responses, accounting, stats, skipped)
