"""Stage `responses`: the response matrix, imported or collected from the panel, per benchmark.

The one switch is ``collect.enabled`` in params.yaml:

* false (default): the benchmark's bundled responses are imported from the file
  ``benchmarks.<b>.responses`` names, so the pipeline keeps annotating real data;
* true: every panel model answers every item k times through ``collect.backend``
  (``simulate``: the offline, seeded IRT panel; ``openai``: the endpoints named in
  ``panel.models``), answers are graded, and the cells are tabulated.

Either way it writes the same three outputs, so one DVC stage can declare them:
``data/responses/<b>.parquet`` (schema ``response``), the per-sample log
``data/collect/<b>.samples.parquet`` (schema ``sample``; empty when imported) and
``metrics/collect/<b>.json`` (schema ``collect_metrics``).

Responses imported by hand (`curate responses import`) live in ``data/raw/<b>/imports/``,
a dep of this stage: each imported model's cells replace that model's cells (or add the
model), so an import survives every ``dvc repro``.
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import asyncio
from collections import Counter
from typing import Any

import polars as pl

from curation.io.atomic import write_json
from curation.io.tables import read_table, write_table
from curation.items import ingest_benchmark
from curation.llm import (
    Accounting,
    CollectResult,
    CompletionCache,
    acollect,
    backend_kind,
    build_backend,
    require_panel,
)
from curation.params_model import ParamsFile
from curation.paths import (
    collect_metrics_path,
    imports_dir,
    items_path,
    responses_path,
    samples_path,
)
from curation.responses import import_responses, overlay, read_imports, replaces_base
from curation.schemas import empty_frame, validate_records
from curation.stage_main import stage_main


def _metrics(
    *,
    benchmark: str,
    mode: str,
    backend: str | None,
    n_models: int,
    n_items: int,
    skipped: Counter[str],
    n_samples: int,
    correct_by_model: dict[str, tuple[int, int]],
    usage: dict[str, Any],
    output: dict[str, Any] | None = None,
) -> dict[str, Any]:
    graded = sum(t for t, _ in correct_by_model.values())
    correct = sum(c for _, c in correct_by_model.values())
    return {
        "benchmark": benchmark,
        "mode": mode,
        "backend": backend,
        "n_models": n_models,
        "n_items": n_items,
        "n_items_skipped": sum(skipped.values()),
        "skipped_reasons": dict(skipped),
        "n_samples": n_samples,
        "n_graded": graded,
        "accuracy": round(correct / graded, 6) if graded else None,
        "accuracy_by_model": {
            m: round(c / t, 6) for m, (t, c) in sorted(correct_by_model.items()) if t
        },
        "usage": usage,
        "output": output if output is not None else _output_stats(empty_frame("sample")),
    }


def _output_stats(samples: pl.DataFrame) -> dict[str, Any]:
    """What the generations looked like: answers found, truncations, ungraded by reason.

    ``parsed`` = an answer was extracted (an empty extraction is no answer);
    ``truncated`` = the generation hit max_tokens (finish_reason "length"); a truncated
    sample without an explicit final answer is not graded (see curation.grading.grade).
    """
    n = samples.height
    has = samples.filter(pl.col("extracted").is_not_null() & (pl.col("extracted") != ""))
    cut = samples.filter(pl.col("finish_reason") == "length")
    ungraded = samples.filter(pl.col("correct").is_null())
    per_model: dict[str, dict[str, int]] = {}
    for model, total, parsed, trunc in (
        samples.group_by("model")
        .agg(
            pl.len(),
            (pl.col("extracted").is_not_null() & (pl.col("extracted") != "")).sum(),
            (pl.col("finish_reason") == "length").sum(),
        )
        .sort("model")
        .iter_rows()
    ):
        per_model[model] = {"samples": total, "parsed": parsed, "truncated": trunc}
    return {
        "n_parsed": has.height,
        "parsed_share": round(has.height / n, 6) if n else None,
        "n_truncated": cut.height,
        "truncated_share": round(cut.height / n, 6) if n else None,
        "ungraded": dict(
            sorted(Counter(str(r) for r in ungraded.get_column("skipped").to_list()).items())
        ),
        "by_model": per_model,
    }


def _write_metrics(benchmark: str, metrics: dict[str, Any]) -> None:
    out = collect_metrics_path(benchmark)
    validate_records([metrics], "collect_metrics", file=str(out))
    write_json(out, metrics)


def _imported(params: ParamsFile, benchmark: str, *, params_file: str) -> str:
    spec = params.benchmark(benchmark, params_file=params_file)
    items_file = items_path(benchmark)
    items = read_table(items_file, produced_by=f"ingest@{benchmark}")
    known = items.get_column("item").to_list()
    imported = read_imports(benchmark, known_items=known, items_file=str(items_file))
    base = None
    notes: list[str] = []
    if not replaces_base(benchmark) and (spec.responses is not None or imported is None):
        limited = spec.limit is not None
        # with benchmarks.<b>.limit the matrix still names every source item: check
        # against all of them, keep the slice's
        allowed = (
            ingest_benchmark(benchmark, spec, params_file=params_file).get_column("item").to_list()
            if limited
            else known
        )
        base = import_responses(
            benchmark,
            spec,
            known_items=allowed,
            items_file=str(items_file),
            params_file=params_file,
            notes=notes,
        )
        if limited:
            base = base.filter(pl.col("item").is_in(known))
    table = overlay(base, imported)
    out = responses_path(benchmark)
    write_table(table, out, "response")
    n_models = table.get_column("model").n_unique()
    n_items = table.get_column("item").n_unique()
    text = f"{benchmark}: {table.height} responses ({n_models} models x {n_items} items) -> {out}"
    if imported is not None:
        text += (
            f"\n  {imported.get_column('model').n_unique()} model(s) from "
            f"{imports_dir(benchmark)}/"
            + (" (replacing the configured matrix)" if base is None else "")
        )
    for note in notes:
        text += f"\n  warning: {note}"
    write_table(empty_frame("sample"), samples_path(benchmark), "sample")
    by_model = {
        m: (int(t), int(c))
        for m, t, c in table.group_by("model")
        .agg(pl.col("n_trials").sum(), pl.col("n_correct").sum())
        .iter_rows()
    }
    _write_metrics(
        benchmark,
        _metrics(
            benchmark=benchmark,
            mode="imported",
            backend=None,
            n_models=len(by_model),
            n_items=items.height,
            skipped=Counter(),
            n_samples=int(table["n_trials"].sum()) if table.height else 0,
            correct_by_model=by_model,
            usage=Accounting().to_metrics(),
        ),
    )
    return text + " (collect.enabled is false: imported)"


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `responses` for one benchmark on the validated params: the line stage_main prints."""
    settings, llm = params.collect, params.llm
    if not settings.enabled:
        return _imported(params, benchmark, params_file=params_file)
    models = require_panel(params.panel)  # validate_params: collecting needs a panel
    grading = params.benchmark(benchmark, params_file=params_file).grading
    items = read_table(items_path(benchmark), produced_by=f"ingest@{benchmark}")

    async def _run_async() -> CollectResult:
        backend = build_backend(settings, llm, models, benchmark=benchmark, items=items)
        try:
            with CompletionCache(llm.cache_path) as cache:
                return await acollect(
                    items,
                    benchmark=benchmark,
                    models=models,
                    backend=backend,
                    cache=cache,
                    collect=settings,
                    llm=llm,
                    grading=grading,
                )
        finally:
            await backend.aclose()

    result = asyncio.run(_run_async())
    samples, responses = result.samples, result.responses
    kind = backend_kind(settings.backend)
    source = "simulated" if kind.simulated else "collected"
    graded = samples.filter(pl.col("correct").is_not_null())
    by_model = {
        m: (int(t), int(c))
        for m, t, c in graded.group_by("model")
        .agg(pl.len(), pl.col("correct").cast(pl.Int64).sum())
        .iter_rows()
    }
    skipped = Counter(s.reason for s in result.skipped)
    write_table(samples, samples_path(benchmark), "sample")
    _write_metrics(
        benchmark,
        _metrics(
            benchmark=benchmark,
            mode=source,
            backend=kind.answered_by,
            n_models=len(models),
            n_items=items.height,
            skipped=skipped,
            n_samples=samples.height,
            correct_by_model=by_model,
            usage=result.accounting.to_metrics(),
            output=_output_stats(samples),
        ),
    )
    items_file = items_path(benchmark)
    imported = read_imports(
        benchmark, known_items=items.get_column("item").to_list(), items_file=str(items_file)
    )
    responses = overlay(
        None if replaces_base(benchmark) and imported is not None else responses, imported
    )
    out = responses_path(benchmark)
    write_table(responses, out, "response")
    tag = " [simulated]" if source == "simulated" else ""
    text = (
        f"{benchmark}{tag}: {samples.height} samples from {len(models)} models "
        f"({responses.height} cells), {result.stats.requests} requests, "
        f"{result.stats.cache_hits} cached -> {out}"
    )
    out_stats = _output_stats(samples)
    if samples.height:
        text += (
            f"\n  answers parsed {out_stats['n_parsed']}/{samples.height}, "
            f"hit max_tokens {out_stats['n_truncated']}"
        )
        for reason, n in out_stats["ungraded"].items():
            text += f"; ungraded {n} ({reason})"
    for reason, n in skipped.items():
        text += f"\n  warning: {n} items skipped ({reason}); they get no responses"
    return text


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.responses``): validate params once, run, exit 0/2/3."""
    return stage_main("responses", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
