"""Stage `fill`: BenchFill, the uniform-parent baseline and the oracle, per benchmark.

Reads data/items/<b>.parquet, data/difficulty/<b>.parquet and data/calibration/<b>.json;
writes, under data/fill/<b>/, candidates.parquet (schema ``candidate``: every candidate
of every method, with its status and lineage) and memory.parquet (schema
``fill_memory``); metrics/fill/<b>.json (schema ``fill_metrics``) and plots/fill/<b>.png,
all at once when the run has finished. The search journal (resume state) is appended
as rounds finish in .curate-state/fill/<b>/, outside every output: a killed run leaves
the outputs as they were and the rerun resumes from the journal.

Offline by default: ``calibrate.backend`` follows ``collect.backend`` (``simulate``), so the
rewriter and the panel are the seeded simulation and every candidate says
``source = simulated``. The simulated rewriter (and the judge) go through the real
call path (prompts, cache, parser); the simulated *panel* draws its answers directly
(the same seeded draws the call path would grade, so every count, z and figure is
identical; measured on math-l5, only the simulated panel token counts differ, now 0):
a default run would otherwise put ~140,000 made-up panel answers (~475 MB) in the
completion cache and spend most of its time doing so. Resuming needs no cache: the
draws are deterministic and the journal holds each finished round.
``calibrate.backend: openai`` uses ``fill.rewriter`` and the ``panel.models`` that are in
the benchmark's calibration (``calibrate.panel``, when given, picks among them).
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import asyncio
import sys
from collections.abc import Sequence

from curation.calibrate import panel_setup
from curation.candidates import BASELINE, BENCHFILL, ORACLE, SIMULATED
from curation.fill import FillResult, afill, load_judge_factory
from curation.io.atomic import replaces_dir, write_json
from curation.io.tables import read_table, write_table
from curation.items import write_skipped_metrics
from curation.llm import CompletionCache
from curation.params_model import ParamsFile
from curation.paths import (
    candidates_path,
    difficulty_path,
    fill_dir,
    fill_journal_dir,
    fill_metrics_path,
    fill_plot_path,
    items_path,
    memory_path,
)
from curation.plots import new_figure, save_figure
from curation.plots.fill import plot_fill
from curation.schemas import empty_frame, validate_records
from curation.stage_main import stage_main


def _summary(benchmark: str, result: FillResult) -> str:
    m = result.metrics
    bf = m["methods"][BENCHFILL]
    tag = " [simulated]" if m["source"] == SIMULATED else ""
    post = bf.get("top_3_reduction")
    parts = [
        f"{benchmark}{tag}: BenchFill {bf['n_inserted']}/{bf['n_targets']} inserted, "
        + (
            f"estimated z: Top-3 -{post['estimate']:.1f}% (90%: -{post['low']:.1f} to "
            f"-{post['high']:.1f}%, with the panel's ability error "
            f"{m['ability_error']['sd']:.2f}; plug-in on the confirmations "
            f"-{bf['top_3_reduction_pct']:.1f}%)"
            if post is not None
            else f"estimated z: Top-3 -{bf['top_3_reduction_pct']:.1f}%"
        )
    ]
    others = [
        f"{name} -{m['methods'][name]['top_3_reduction_pct']:.1f}%"
        for name in (ORACLE, BASELINE)
        if name in m["methods"]
    ]
    if others:
        parts.append(f" ({', '.join(others)})")
    if bf["target_dev"] is not None:
        se = f" ± {bf['target_dev_se']:.4f}" if bf.get("target_dev_se") is not None else ""
        parts.append(
            f", target dev {bf['target_dev']:.4f}{se} (confirmation), "
            f"{bf['n_on_target']}/{bf['n_inserted']} on target within ±{m['tolerance']:g}"
        )
    if m.get("true") is not None:
        true = [
            f"{name} -{m['methods'][name]['true_top_3_reduction_pct']:.1f}%"
            for name in (ORACLE, BASELINE)
            if m["methods"].get(name, {}).get("true_top_3_reduction_pct") is not None
        ]
        t_red, t_dev = bf.get("true_top_3_reduction_pct"), bf.get("true_target_dev")
        parts.append(
            "; TRUE z (simulated world): Top-3 "
            + (f"-{t_red:.1f}%" if t_red is not None else "n/a")
            + (f" ({', '.join(true)})" if true else "")
            + (f", target dev {t_dev:.4f}" if t_dev is not None else "")
        )
    if bf["trials_per_insertion"] is not None:
        parts.append(
            f", {bf['trials_per_insertion']:,.0f} panel trials per item "
            f"({100 * bf['trials_vs_fixed']:.1f}% of the fixed {m['fixed_budget_per_insertion']:,})"
        )
    parts.append(
        f", {bf['rewriter_calls']} rewrites; this run: {result.run.requests} calls"
        + (f" ({result.run.judge_requests} by the judge)" if result.run.judge_requests else "")
        + f", {result.run.cache_hits} cached"
    )
    if result.run.resumed:
        parts.append(" (resumed)")
    parts.append(f" -> {candidates_path(benchmark)}")
    text = "".join(parts)
    if result.run.restarted:
        text += (
            "\n  note: params or inputs changed since the last run; the old journal was set aside "
            "(discarded: its rounds cannot serve these inputs)"
        )
    return text


def _skip(benchmark: str, formats: Sequence[str]) -> str:
    """A matrix-only benchmark: no candidates, a metrics record saying why (ingest said so)."""
    write_table(empty_frame("candidate"), candidates_path(benchmark), "candidate")
    write_table(empty_frame("fill_memory"), memory_path(benchmark), "fill_memory")
    fig, ax = new_figure(width=6.4, height=1.6)  # the plot is a declared output
    ax.axis("off")
    ax.text(0.5, 0.5, f"{benchmark}: fill skipped, no item texts", ha="center", va="center")
    save_figure(fig, fill_plot_path(benchmark), formats=formats)
    write_skipped_metrics("fill", benchmark, fill_metrics_path(benchmark))
    return f"{benchmark}: skipped (no item texts)"


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `fill` for one benchmark on the validated params: the line stage_main prints."""
    # the output folder is this run's files alone (an older layout's journal.jsonl goes)
    replaces_dir(fill_dir(benchmark))
    if not params.benchmark(benchmark, params_file=params_file).items.texts:
        return _skip(benchmark, params.plots.format)
    settings = params.fill
    settings.prompt_files(params_file=params_file)  # before any work: each override is a file
    setup = panel_setup(benchmark, params=params, params_file=params_file)
    llm, collect = setup.llm, setup.collect
    items = read_table(items_path(benchmark), produced_by=f"ingest@{benchmark}")
    difficulty = read_table(difficulty_path(benchmark), produced_by=f"annotate@{benchmark}")
    factory = (
        load_judge_factory(settings.judge, where=f"{params_file}: fill.judge")
        if settings.judge
        else None
    )

    def log(text: str) -> None:
        if collect.progress:
            print(text, file=sys.stderr, flush=True)

    async def _run_async() -> FillResult:
        judge = factory(params, params_file=params_file, benchmark=benchmark) if factory else None
        try:
            with CompletionCache(llm.cache_path) as cache:
                result = await afill(
                    benchmark=benchmark,
                    items=items,
                    difficulty=difficulty,
                    setup=setup,
                    settings=settings,
                    cache=cache,
                    workdir=fill_journal_dir(benchmark),
                    judge=judge,
                    log=log,
                    direct_panel=True,  # applies to a simulated panel only
                )
            # the judge's calls are part of what this fill run cost (it owns its accounting)
            made, hits = getattr(judge, "requests", 0), getattr(judge, "cache_hits", 0)
            result.run.requests += made
            result.run.cache_hits += hits
            result.run.judge_requests = made
            return result
        finally:
            close = getattr(judge, "aclose", None)
            if close is not None:
                await close()

    result = asyncio.run(_run_async())
    metrics_file = fill_metrics_path(benchmark)
    validate_records([result.metrics], "fill_metrics", file=str(metrics_file))
    write_table(result.candidates, candidates_path(benchmark), "candidate")
    write_table(result.memory, memory_path(benchmark), "fill_memory")
    plot_fill(
        result.z_before,
        result.inserted_rows(),
        fill_plot_path(benchmark),
        name=benchmark,
        reductions={
            method: m.get("top_3_reduction") for method, m in result.metrics["methods"].items()
        },
        formats=params.plots.format,
    )
    write_json(metrics_file, result.metrics)
    return _summary(benchmark, result)


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.fill``): validate params once, run, exit 0/2/3."""
    return stage_main("fill", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
