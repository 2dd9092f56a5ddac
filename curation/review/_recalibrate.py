"""Recalibrating reviewers' edits: an edit sends the item back to calibration (SPEC §5).

``curate review recalibrate`` measures each exported edited item
(:mod:`curation.review._edits`) again exactly as BenchFill measures a child, with
:mod:`curation.calibrate` and params.yaml ``calibrate`` (the section BenchFill measures
with): the same panel and settings, online calibration on
``data/calibration/<b>.json``, but no search (:func:`curation.calibrate.measure`: no
off-target stop; the status reason says whether it is within ``calibrate.tolerance`` of
its original target). The judge's verdict (``judge.enabled``) sits beside it and changes
no status. Each result is a :class:`~curation.candidates.Candidate` (same id, edited
text, ``calibrated`` or ``invalid``, a lineage naming the edit) in
``data/review/recalibrated/<b>.parquet``, one per candidate (the latest edit's; older
records kept), which ``curate review seed`` reads by default: the item returns as a
new, measured, ``pending`` version. An edit already measured for its (decision, text)
is not asked again. Simulated (``calibrate.backend: simulate``): an edit keeps the
original's latent difficulty (:func:`~curation.review._edits.latent_b`, recorded with
where it came from) and every record says ``source = simulated``."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.calibrate import (
    Child,
    annotation_lineage,
    gradable_problem,
    measure,
    open_panel,
    panel_setup,
    record_measurement,
    simulation_lineage,
)
from curation.candidates import (
    CALIBRATED,
    CANDIDATE_SCHEMA,
    COLLECTED,
    SIMULATED,
    Candidate,
    Source,
    candidates_frame,
)
from curation.io.tables import write_table
from curation.llm import CallResult, CompletionCache
from curation.review._edits import Edit, Edits, exported_edits, latent_b
from curation.review._settings import ReviewSettings

if TYPE_CHECKING:  # a type only: the params file composes every package's section
    from curation.params_model import ParamsFile


@dataclass
class BenchmarkRecalibration:
    """What recalibration did for one benchmark."""

    edited: int = 0
    """Rows in the edited file."""
    recalibrated: int = 0
    """Measured now (status calibrated)."""
    invalid: int = 0
    """Measured now but not calibrated (answer not gradable, or no graded panel answer)."""
    unchanged: int = 0
    """Already recalibrated for this edit and text: not asked again."""
    kept: int = 0
    """Older records (candidates no longer waiting for calibration) kept in the file."""
    file: str | None = None
    written: bool = False


@dataclass
class RecalibrationReport:
    """What ``recalibrate`` did, per benchmark."""

    benchmarks: dict[str, BenchmarkRecalibration] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    """benchmark -> why nothing was done (no edited file)."""
    source: str | None = None
    requests: int = 0
    """Panel calls made (not served from the cache)."""
    cache_hits: int = 0
    judge_requests: int = 0
    judge_cache_hits: int = 0

    @property
    def files(self) -> list[str]:
        return [r.file for r in self.benchmarks.values() if r.file]

    def count(self, result: CallResult) -> None:
        if result.cached:
            self.cache_hits += 1
        else:
            self.requests += 1

    def __str__(self) -> str:
        tag = " [simulated]" if self.source == SIMULATED else ""
        lines = []
        for b, r in self.benchmarks.items():
            line = (
                f"{b}{tag}: {r.edited} edited item(s): {r.recalibrated} recalibrated, "
                f"{r.unchanged} unchanged"
            )
            if r.invalid:
                line += f", {r.invalid} not calibrated (see status_reason)"
            if r.kept:
                line += f"; {r.kept} earlier record(s) kept"
            line += f" -> {r.file}" + ("" if r.written else " (not rewritten)")
            lines.append(line)
        lines += [f"{b}: {why}" for b, why in self.skipped.items()]
        lines.append(
            f"panel: {self.requests} calls, {self.cache_hits} cached; "
            f"judge: {self.judge_requests} calls, {self.judge_cache_hits} cached"
        )
        if any(r.recalibrated for r in self.benchmarks.values()):
            lines.append("next: `curate review seed` puts them back in the queue as pending")
        return "\n".join(lines)


async def _measure(
    found: Edits,
    todo: Sequence[Edit],
    *,
    params: ParamsFile,
    params_file: str,
    cache: CompletionCache,
    judge: Any,
    environ: Mapping[str, str] | None,
    report: RecalibrationReport,
) -> list[Candidate]:
    """Judge and measure the edits ``todo`` of one benchmark: their records."""
    b = found.benchmark
    # params.yaml calibrate: the backend, seed, panel and adaptive rule BenchFill measures with
    setup = panel_setup(b, params=params, params_file=params_file)
    settings, simulated = setup.settings, setup.simulated
    latents = {e.item: latent_b(e.base, e.lineage) for e in todo} if simulated else {}
    # simulated edits keep a latent b
    panel = open_panel(setup, cache=cache, latent=lambda c: latents[c.item][0], environ=environ)
    if report.source != SIMULATED:
        report.source = panel.source
    records: dict[str, Candidate] = {}
    children: list[Child] = []
    for e in todo:
        source: Source = SIMULATED if simulated or e.base.get("source") == SIMULATED else COLLECTED
        rec = e.record(benchmark=b, source=source, calibration_file=str(setup.calibration_file))
        problem = gradable_problem(e.row["answer"], e.row["answer_type"], e.choices, setup.grading)
        if problem is not None:
            rec = rec.replace(status_reason=f"not gradable: {problem}")
        else:
            children.append(e.child())
        records[e.item] = rec
    try:
        if judge is not None:  # the verdict sits beside the measurement: no status changes
            choices = {e.item: list(e.choices) if e.choices else None for e in todo}
            pairs = [
                (
                    records[e.item].judge_view(choices=choices[e.item]),
                    found.origins.parent(e.base.get("parent")),
                )
                for e in todo
            ]
            before = (judge.requests, judge.cache_hits)
            assessments = await judge.assess_many(pairs)
            report.judge_requests += judge.requests - before[0]
            report.judge_cache_hits += judge.cache_hits - before[1]
            for e, a in zip(todo, assessments, strict=True):
                records[e.item] = records[e.item].with_verdict(a.verdict)
        notes = await measure(
            children,
            panel,
            targets={e.item: records[e.item].target_z for e in todo},
            tolerance=settings.tolerance,
            rule=settings.adaptive,
            on_result=report.count,
        )
    finally:
        await panel.aclose()
    out = []
    for e in todo:
        rec = records[e.item]
        recal: dict[str, Any] = {
            **setup.provenance(),
            "off_target_stop": False,
            "target_z": rec.target_z,
            "judge": None if judge is None else judge.model,
        }
        a = notes.get(e.item)
        if a is not None:
            recal.update(annotation_lineage(a), cost=a.cost())
            rec = record_measurement(
                rec,
                a,
                target_z=rec.target_z,
                tolerance=settings.tolerance,
                reason_prefix="recalibrated after a reviewer's edit; ",
            )
        lineage = e.lineage_of(rec, recalibration=recal)
        if simulated:
            b_latent, where = latents[e.item]
            lineage["simulation"] = simulation_lineage(
                setup.calibration, b_latent, latent_from=where
            )
        out.append(rec.replace(lineage=json.dumps(lineage, sort_keys=True, ensure_ascii=False)))
    return out


async def arecalibrate(
    *,
    config: ReviewSettings,
    params: ParamsFile,
    params_file: str = "params.yaml",
    benchmarks: Sequence[str] | None = None,
    force: bool = False,
    db: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> RecalibrationReport:
    """:func:`recalibrate` inside a running event loop."""
    from curation.judge import build_judge

    report = RecalibrationReport()
    found, report.skipped = exported_edits(
        config, list(params.benchmarks), benchmarks, db=Path(db) if db is not None else None
    )
    with CompletionCache(params.llm.cache_path) as cache:
        judge = None
        if any(f.todo(force=force) for f in found):
            judge = build_judge(params, cache=cache, environ=environ)
        try:
            for f in found:
                out = config.recalibrated_path(f.benchmark)
                stats = report.benchmarks[f.benchmark] = BenchmarkRecalibration(
                    edited=len(f.items), file=str(out)
                )
                todo = f.todo(force=force)
                stats.unchanged = len(f.items) - len(todo)
                done: list[Candidate] = []
                if todo:
                    done = await _measure(
                        f,
                        todo,
                        params=params,
                        params_file=params_file,
                        cache=cache,
                        judge=judge,
                        environ=environ,
                        report=report,
                    )
                for rec in done:
                    z = "no z" if rec.z is None else f"z {rec.z:.4f}"
                    if log is not None:
                        log(f"{f.benchmark}/{rec.candidate}: {rec.status}, {z}")
                stats.recalibrated = sum(r.status == CALIBRATED for r in done)
                stats.invalid = len(todo) - stats.recalibrated
                stats.kept = sum(c not in {e.item for e in f.items} for c in f.previous)
                if not todo and out.is_file():
                    continue
                records = {c: Candidate.from_row(r) for c, r in f.previous.items()}
                records.update({r.candidate: r for r in done})
                frame = candidates_frame(records[c] for c in sorted(records))
                write_table(frame, out, CANDIDATE_SCHEMA)
                stats.written = True
        finally:
            if judge is not None:
                await judge.aclose()
    return report


def recalibrate(
    *,
    config: ReviewSettings,
    params: ParamsFile,
    params_file: str = "params.yaml",
    benchmarks: Sequence[str] | None = None,
    force: bool = False,
    db: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> RecalibrationReport:
    """Measure the exported edited items again; write ``data/review/recalibrated/<b>.parquet``.

    ``params`` is the validated params file (its ``calibrate`` section measures the edits
    as BenchFill measures its children). ``benchmarks`` defaults to params' benchmarks
    (one without an edited file is skipped). ``force`` recalibrates every edited item,
    even one already done for its decision and text. ``db`` (default ``config.db``) is
    where an edit's original candidate is looked up when no configured candidate table
    has it. See the module doc for what is measured, how, and what is written.
    """
    return asyncio.run(
        arecalibrate(
            config=config,
            params=params,
            params_file=params_file,
            benchmarks=benchmarks,
            force=force,
            db=db,
            environ=environ,
            log=log,
        )
    )
