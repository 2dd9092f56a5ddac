"""Stage `collect`: responses from the panel (or imported), per benchmark.

The one switch is ``collect.enabled`` in params.yaml:

* false (default): the benchmark's bundled responses are imported exactly as the
  ``responses`` stage does, so the pipeline keeps annotating real data;
* true: every panel model answers every item k times through ``collect.backend``
  (``simulate``: the offline, seeded IRT panel; ``openai``: the endpoints named in
  ``panel.models``), answers are graded, and the cells are tabulated.

Either way it writes the same three outputs, so one DVC stage can declare them:
``data/responses/<b>.parquet`` (schema ``response``), the per-sample log
``data/collect/<b>.samples.parquet`` (schema ``sample``; empty when imported) and
``metrics/collect/<b>.json`` (schema ``collect_metrics``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import ConfigError
from curation.grading import METHODS, GradingSettings
from curation.io.atomic import write_json
from curation.llm import (
    Accounting,
    CollectResult,
    CompletionCache,
    acollect,
    build_backend,
    collect_settings,
    llm_settings,
    panel_models,
)
from curation.params import benchmark_spec
from curation.schemas import empty_frame, validate_records
from curation.stages import responses as responses_stage
from curation.stages._paths import items_path, responses_path
from curation.stages._write import read_table, write_table


def samples_path(benchmark: str) -> Path:
    return Path("data/collect") / f"{benchmark}.samples.parquet"


def collect_metrics_path(benchmark: str) -> Path:
    return Path("metrics/collect") / f"{benchmark}.json"


def grading_settings(raw: Any, *, where: str) -> GradingSettings:
    """Parse ``benchmarks.<b>.grading`` (method override, regex pattern, tolerances)."""
    if raw is None:
        return GradingSettings()
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    unknown = set(raw) - {"method", "pattern", "rel_tol", "abs_tol"}
    if unknown:
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown setting")
    method = raw.get("method")
    if method is not None and method not in METHODS:
        raise ConfigError(f"{where}.method: {method!r} is not one of {', '.join(METHODS)}")
    if method == "regex" and not raw.get("pattern"):
        raise ConfigError(f"{where}.pattern: the regex grader needs a pattern")
    return GradingSettings(
        method=method,
        pattern=raw.get("pattern"),
        rel_tol=float(raw.get("rel_tol", 1e-4)),
        abs_tol=float(raw.get("abs_tol", 1e-9)),
    )


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
    requests: int,
    cache_hits: int,
    usage: dict[str, Any],
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
        "requests": requests,
        "cache_hits": cache_hits,
        "usage": usage,
    }


def _write_metrics(benchmark: str, metrics: dict[str, Any]) -> None:
    out = collect_metrics_path(benchmark)
    validate_records([metrics], "collect_metrics", file=str(out))
    write_json(out, metrics)


def _imported(params: dict[str, Any], benchmark: str, *, params_file: str) -> str:
    text = responses_stage.run(params, benchmark, params_file=params_file)
    table = pl.read_parquet(responses_path(benchmark))
    items = read_table(items_path(benchmark), produced_by=f"ingest --benchmark {benchmark}")
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
            requests=0,
            cache_hits=0,
            usage=Accounting().to_metrics(),
        ),
    )
    return text + " (collect.enabled is false: imported)"


def run(params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml") -> str:
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    settings = collect_settings(params, params_file=params_file)
    if not settings.enabled:
        return _imported(params, benchmark, params_file=params_file)
    models = panel_models(params, params_file=params_file)
    llm = llm_settings(params, params_file=params_file)
    grading = grading_settings(
        spec.extra.get("grading"), where=f"{params_file}: benchmarks.{benchmark}.grading"
    )
    items = read_table(items_path(benchmark), produced_by=f"ingest --benchmark {benchmark}")

    async def main() -> CollectResult:
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

    result = asyncio.run(main())
    samples, responses = result.samples, result.responses
    source = "simulated" if settings.backend == "simulate" else "collected"
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
            backend="simulated" if source == "simulated" else "openai",
            n_models=len(models),
            n_items=items.height,
            skipped=skipped,
            n_samples=samples.height,
            correct_by_model=by_model,
            requests=result.stats.requests,
            cache_hits=result.stats.cache_hits,
            usage=result.accounting.to_metrics(),
        ),
    )
    out = responses_path(benchmark)
    write_table(responses, out, "response")
    tag = " [simulated]" if source == "simulated" else ""
    text = (
        f"{benchmark}{tag}: {samples.height} samples from {len(models)} models "
        f"({responses.height} cells), {result.stats.requests} requests, "
        f"{result.stats.cache_hits} cached -> {out}"
    )
    for reason, n in skipped.items():
        text += f"\n  warning: {n} items skipped ({reason}); they get no responses"
    return text
