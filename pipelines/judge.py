"""Stage `judge`: the LLM judge's verdict on every calibrated or inserted candidate.

Reads ``data/fill/<b>/candidates.parquet`` (every status), judges the candidates
whose status is ``calibrated`` or ``inserted`` (except the oracle's rows, which are
reference points, not items) against their parents (an item of
``data/items/<b>.parquet`` or another candidate), and writes the same records with
``judge_*`` filled to ``data/judged/<b>.parquet`` (schema ``candidate``) and
``metrics/judge/<b>.json`` (schema ``judge_metrics``). Candidates of other statuses
pass through untouched, and no status is changed: the judge's verdict sits beside
BenchFill's status for the review queue to show.

Offline (``collect.backend: simulate``) the simulated judge answers; its verdicts
say so. Verdicts that decided nothing (unparseable, no own answer, undecided) are
counted by reason under ``unjudged`` and never as passed: they need a reviewer.
Calls are cached, so a rerun (or a rerun after a failure) asks nothing twice; how many
calls this run made and how many the cache answered is printed, not written to the
metrics (which depend on the candidates and params alone).
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import asyncio
from collections import Counter
from collections.abc import Mapping
from typing import Any

import polars as pl

from curation.candidates import ORACLE, VERDICT_COLUMNS
from curation.errors import InputError
from curation.io.atomic import write_json
from curation.io.tables import read_table, write_table
from curation.items import write_skipped_metrics
from curation.judge import (
    JUDGED_STATUSES,
    UNDECIDED_CATEGORIES,
    Assessment,
    build_judge,
)
from curation.llm import Accounting, backend_kind
from curation.params_model import ParamsFile
from curation.paths import (
    candidates_path,
    items_path,
    judge_metrics_path,
    judged_path,
)
from curation.schemas import conform, empty_frame, validate_frame, validate_records
from curation.stage_main import stage_main


def _read_candidates(benchmark: str) -> pl.DataFrame:
    path = candidates_path(benchmark)
    if not path.is_file():
        raise InputError(
            f"missing; run `dvc repro fill@{benchmark}` first",
            file=str(path),
        )
    df = pl.read_parquet(path)
    validate_frame(df, "candidate", file=str(path))
    df = conform(df, "candidate")
    others = df.filter(pl.col("benchmark") != benchmark)
    if others.height:
        raise InputError(
            f"candidate of benchmark {others.item(0, 'benchmark')!r} in {benchmark}'s file",
            file=str(path),
            record=f"candidate {others.item(0, 'candidate')}",
            field="benchmark",
        )
    dupes = df.filter(pl.col("candidate").is_duplicated())
    if dupes.height:
        raise InputError(
            "candidate id repeats", file=str(path), record=f"candidate {dupes.item(0, 'candidate')}"
        )
    return df


class _Parents:
    """Parent records by id: items first, then candidates (whose choices come from the
    item at the root of their lineage)."""

    def __init__(self, items: pl.DataFrame, candidates: pl.DataFrame, *, file: str) -> None:
        self.items = {r["item"]: r for r in items.iter_rows(named=True)}
        self.candidates = {r["candidate"]: r for r in candidates.iter_rows(named=True)}
        self.file = file

    def root_choices(self, pid: str | None) -> list[str] | None:
        seen: set[str] = set()
        while pid is not None and pid not in seen:
            seen.add(pid)
            if pid in self.items:
                return self.items[pid].get("choices")
            if pid not in self.candidates:
                return None
            pid = self.candidates[pid].get("parent")
        return None

    def of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        pid = row["parent"]
        if pid is None:
            return {}
        if pid in self.items:
            return dict(self.items[pid])
        if pid in self.candidates:
            parent = dict(self.candidates[pid])
            parent["choices"] = self.root_choices(pid)
            return parent
        raise InputError(
            f"parent {pid!r} is neither an item of {items_path(row['benchmark'])} nor a candidate",
            file=self.file,
            record=f"candidate {row['candidate']}",
            field="parent",
        )


def _judged(row: Mapping[str, Any]) -> bool:
    """Calibrated or inserted, and an item (the oracle's rows are reference points)."""
    return row["status"] in JUDGED_STATUSES and row["method"] != ORACLE


def _skip_label(row: Mapping[str, Any]) -> str:
    return ORACLE if row["method"] == ORACLE else row["status"]


def _rate(judged: int, passed: int) -> float | None:
    return round(passed / judged, 6) if judged else None


def _metrics(
    benchmark: str,
    *,
    enabled: bool,
    backend: str | None,
    model: str | None,
    df: pl.DataFrame,
    rows: list[dict[str, Any]],
    assessments: list[Assessment],
    usage: dict[str, Any],
) -> dict[str, Any]:
    """The metrics record: what the verdicts say and cost, nothing of this run's state
    (its requests and cache hits are printed, never tracked: a rerun after a failure
    finds the completion cache warm, a fresh clone cold, and both must write these bytes)."""
    judged_ids = {r["candidate"] for r in rows}
    not_judged = Counter(
        _skip_label(r) for r in df.iter_rows(named=True) if r["candidate"] not in judged_ids
    )
    by_method: dict[str, list[int]] = {}
    checks: dict[str, Counter[str]] = {
        k: Counter() for k in ("correct", "well_posed", "format_kept")
    }
    for row, a in zip(rows, assessments, strict=True):
        tally = by_method.setdefault(row["method"], [0, 0])
        tally[0] += 1
        tally[1] += int(a.verdict.passed)
        for name in checks:
            checks[name][str(getattr(a.verdict, name)).lower().replace("none", "null")] += 1
    passed = sum(a.verdict.passed for a in assessments)
    unjudged = Counter(a.category for a in assessments if a.category in UNDECIDED_CATEGORIES)
    return {
        "benchmark": benchmark,
        "enabled": enabled,
        "backend": backend,
        "judge_model": model,
        "n_candidates": df.height,
        "n_judged": len(assessments),
        "n_passed": passed,
        "pass_rate": _rate(len(assessments), passed),
        "not_judged": dict(sorted(not_judged.items())),
        "by_method": {
            m: {"n_judged": n, "n_passed": p, "pass_rate": _rate(n, p)}
            for m, (n, p) in sorted(by_method.items())
        },
        "checks": {
            name: {k: counts.get(k, 0) for k in ("true", "false", "null")}
            for name, counts in checks.items()
        },
        "reasons": dict(sorted(Counter(a.category for a in assessments).items())),
        "grader_disagreements": sum(a.disagreement for a in assessments),
        "unjudged": {k: unjudged.get(k, 0) for k in UNDECIDED_CATEGORIES},
        "repairs": sum(a.repaired for a in assessments),
        "tolerant_reads": sum(a.tolerant for a in assessments),
        "usage": usage,
    }


def _with_verdicts(
    df: pl.DataFrame, rows: list[dict[str, Any]], assessments: list[Assessment]
) -> pl.DataFrame:
    by_id = {r["candidate"]: a.verdict for r, a in zip(rows, assessments, strict=True)}
    ids = df["candidate"].to_list()
    updates = []
    for column, attr in VERDICT_COLUMNS.items():
        old = df[column].to_list()
        new = [
            getattr(by_id[c], attr) if c in by_id else value
            for c, value in zip(ids, old, strict=True)
        ]
        updates.append(pl.Series(column, new, dtype=df.schema[column]))
    return df.with_columns(updates)


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `judge` for one benchmark on the validated params: the line stage_main prints."""
    if not params.benchmark(benchmark, params_file=params_file).items.texts:
        write_table(empty_frame("candidate"), judged_path(benchmark), "candidate")
        write_skipped_metrics("judge", benchmark, judge_metrics_path(benchmark))
        return f"{benchmark}: skipped (no item texts)"
    df = _read_candidates(benchmark)
    out, metrics_out = judged_path(benchmark), judge_metrics_path(benchmark)
    rows = [r for r in df.iter_rows(named=True) if _judged(r)]
    assessments: list[Assessment] = []
    requests = cache_hits = 0
    usage = Accounting().to_metrics()
    judge = build_judge(params)
    if judge is None:
        rows = []
    else:
        items = read_table(items_path(benchmark), produced_by=f"ingest@{benchmark}")
        parents = _Parents(items, df, file=str(candidates_path(benchmark)))
        pairs = [(r, parents.of(r)) for r in rows]

        async def _run_async() -> list[Assessment]:
            async with judge:
                return await judge.assess_many(pairs)

        assessments = asyncio.run(_run_async())
        requests, cache_hits = judge.requests, judge.cache_hits
        usage = judge.accounting.to_metrics()
    judged = _with_verdicts(df, rows, assessments)
    metrics = _metrics(
        benchmark,
        enabled=params.judge.enabled,
        backend=None if judge is None else backend_kind(judge.settings.backend_name).answered_by,
        model=None if judge is None else judge.model,
        df=df,
        rows=rows,
        assessments=assessments,
        usage=usage,
    )
    validate_records([metrics], "judge_metrics", file=str(metrics_out))
    write_table(judged, out, "candidate")
    write_json(metrics_out, metrics)
    if judge is None:
        return (
            f"{benchmark}: judge.enabled is false; {df.height} candidates copied unjudged -> {out}"
        )
    tag = " [simulated]" if judge.settings.simulated else ""
    rate = metrics["pass_rate"]
    shown = "n/a" if rate is None else f"{rate:.0%}"
    unjudged = sum(metrics["unjudged"].values())
    why = ", ".join(f"{k} {v}" for k, v in metrics["unjudged"].items() if v)
    return (
        f"{benchmark}{tag}: judged {len(rows)} of {df.height} candidates, "
        f"{metrics['n_passed']} passed ({shown}), {unjudged} not decided"
        f"{f' ({why})' if why else ''}; {requests} requests, {cache_hits} cached -> {out}"
    )


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.judge``): validate params once, run, exit 0/2/3."""
    return stage_main("judge", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
