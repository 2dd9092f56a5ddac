"""Recalibrating reviewers' edits: an edit sends the item back to calibration (SPEC §5).

``curate review recalibrate`` closes the loop ``export`` opens. For each benchmark it
reads the edited items (``data/review/edited/<b>.parquet``, schema ``item``, origin
edited) and measures each one again exactly as BenchFill measures a child:

* the panel answers through :mod:`curation.llm` (same prompts, cache and graders) and
  the answers are calibrated online on the benchmark's calibration
  (``data/calibration/<b>.json``, abilities fixed) by :func:`curation.fill._annotate.annotate`
  with BenchFill's settings: ``fill.backend`` (else ``collect.backend``), ``fill.panel``,
  ``fill.seed`` and ``fill.adaptive``. Recalibration *measures*, it does not search:
  the adaptive rule runs without its off-target early stop (collection goes on until
  ``SE(z) <= se_accept`` or ``max_trials``), and the status reason then says whether
  the item is within ``fill.tolerance`` of its original target;
* the judge (``judge.enabled``) gives its verdict beside the measurement; as in the
  judge stage it changes no status: the reviewer decides;
* the result is a candidate record (schema ``candidate``) with the same candidate id,
  the edited question and answer, status ``calibrated`` (``invalid`` when the edited
  answer cannot be graded or no panel answer was graded), fresh b/SE/z/panel/judge
  fields and a lineage that names the edit (decision id, reviewer, versions).

The records go to ``data/review/recalibrated/<b>.parquet`` (validated, atomic), one per
candidate, the latest edit's; records of candidates no longer awaiting calibration are
kept, so the file stays a complete record of measured edits. ``curate review seed``
reads it by default: the record's text is the edited version's, so the item comes
back as a new, measured version with status ``pending``.

Idempotent: an edited item whose (decision, text) already has a record is not asked
again (and LLM calls are cached anyway).

**Simulation** (``backend: simulate``): the simulated panel answers by σ(θ − b) and
cannot read a text, so an edit keeps the candidate's latent difficulty, taken in this
order from: the original candidate's lineage (``simulation.latent_b``, what BenchFill's
simulated rewriter drew), the ``latent b`` its simulated question header states, and
the original candidate's calibrated b. The choice is recorded in the lineage
(``simulation.latent_from``) and every record says ``source = simulated``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from curation.errors import ConfigError, InputError
from curation.review._config import ReviewConfig
from curation.review._store import text_hash

CANDIDATE = "candidate"
ITEM = "item"
NO_TARGET = 1.0
"""The tolerance annotate is given: every z is "on target", so only precision or the
trial budget ends collection (no off-target early stop; see the module doc)."""


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

    def __str__(self) -> str:
        tag = " [simulated]" if self.source == "simulated" else ""
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
        for b, why in self.skipped.items():
            lines.append(f"{b}: {why}")
        lines.append(
            f"panel: {self.requests} calls, {self.cache_hits} cached; "
            f"judge: {self.judge_requests} calls, {self.judge_cache_hits} cached"
        )
        if any(r.recalibrated for r in self.benchmarks.values()):
            lines.append("next: `curate review seed` puts them back in the queue as pending")
        return "\n".join(lines)


# ---- inputs ------------------------------------------------------------------------------


def _json(text: Any) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except (TypeError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def generation_lineage(lineage: Mapping[str, Any]) -> dict[str, Any]:
    """BenchFill's lineage of a candidate (unwrapping an earlier recalibration's)."""
    if "recalibration" in lineage and isinstance(lineage.get("original"), dict):
        return dict(lineage["original"])
    return dict(lineage)


def read_edited(path: Path) -> pl.DataFrame:
    """The edited items ``curate review export`` wrote (schema ``item``), validated."""
    from curation.schemas import validate_frame

    try:
        df = pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"not a readable parquet file ({exc})", file=str(path)) from None
    validate_frame(df, ITEM, file=str(path))
    dupes = df.filter(pl.col("item").is_duplicated())
    if dupes.height:
        raise InputError("item repeats", file=str(path), record=f"item {dupes.item(0, 'item')}")
    return df


def _candidate_tables(config: ReviewConfig, benchmark: str) -> list[Path]:
    """The configured candidate tables of ``benchmark`` that exist, minus our own output."""
    own = config.recalibrated_path(benchmark)
    out = []
    for pattern in config.candidates:
        path = Path(str(pattern).format(benchmark=benchmark))
        if path != own and path.is_file():
            out.append(path)
    return out


class _Bases:
    """The candidate record each edit started from: the configured candidate tables
    first (first occurrence wins), then the review queue, then the export's metadata."""

    def __init__(self, config: ReviewConfig, benchmark: str, db: Path | None) -> None:
        from curation.review._seed import read_candidates

        self.benchmark = benchmark
        self.records: dict[str, tuple[dict[str, Any], str]] = {}
        for path in _candidate_tables(config, benchmark):
            df = read_candidates(path).filter(pl.col("benchmark") == benchmark)
            for row in df.iter_rows(named=True):
                self.records.setdefault(row["candidate"], (row, str(path)))
        self.db = db if db is not None and db.is_file() else None
        self._store: Any = None

    def _from_queue(self, candidate: str, version: int | None) -> dict[str, Any] | None:
        if self.db is None or version is None:
            return None
        from curation.review._store import ItemNotFound, ReviewStore

        if self._store is None:
            self._store = ReviewStore.open(self.db)
        try:
            view = self._store.item(self.benchmark, candidate)
        except ItemNotFound:
            return None
        return next((dict(v.record) for v in view.versions if v.version == version), None)

    def of(self, row: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
        cid = row["item"]
        if cid in self.records:
            return self.records[cid]
        rec = self._from_queue(cid, meta.get("edited_from_version"))
        if rec is not None:
            return rec, f"review queue {self.db} (version {meta.get('edited_from_version')})"
        if meta.get("target_z") is None:
            raise InputError(
                "its original candidate is in no configured candidate table nor the queue, "
                "and the export metadata has no target_z; pass review.candidates",
                record=f"item {cid}",
            )
        return {
            "method": meta.get("method") or "benchfill",
            "parent": meta.get("parent"),
            "round": 0,
            "target_z": meta["target_z"],
            "change": None,
            "source": meta.get("source") or "collected",
            "rewriter_model": None,
            "prompt_hash": None,
            "question": row["question"],
            "b": None,
            "lineage": "{}",
        }, "export metadata"

    def parent(self, pid: str | None, items: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        """The parent record the judge compares with (an item or a candidate), or {}."""
        if pid is None:
            return {}
        if pid in items:
            return dict(items[pid])
        if pid in self.records:
            rec = dict(self.records[pid][0])
            rec["choices"] = generation_lineage(_json(rec.get("lineage"))).get("choices")
            return rec
        return {}


def latent_b(base: Mapping[str, Any], lineage: Mapping[str, Any]) -> tuple[float, str]:
    """The simulated latent difficulty an edit keeps, and where it came from."""
    from curation.fill._simulate import latent_of

    sim = lineage.get("simulation") or {}
    if isinstance(sim, dict) and sim.get("latent_b") is not None:
        return float(sim["latent_b"]), "original candidate lineage (simulation.latent_b)"
    stated = latent_of(str(base.get("question") or ""))
    if stated is not None:
        return stated, "original candidate question header (latent b)"
    if base.get("b") is not None:
        return float(base["b"]), "original candidate calibrated b"
    raise InputError(
        "simulation: no latent difficulty for this edit (the original candidate has no "
        "simulation lineage, header or calibrated b); use fill.backend: openai",
        record=f"candidate {base.get('candidate')}",
    )


# ---- one benchmark -----------------------------------------------------------------------


@dataclass
class _Work:
    row: dict[str, Any]
    meta: dict[str, Any]
    base: dict[str, Any]
    base_from: str
    lineage: dict[str, Any]
    """The generation lineage of the base."""
    choices: tuple[str, ...] | None
    text_sha256: str
    record: dict[str, Any] = field(default_factory=dict)


def _previous(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    from curation.review._seed import read_candidates

    return {r["candidate"]: r for r in read_candidates(path).iter_rows(named=True)}


def _done(previous: Mapping[str, Any] | None, work: _Work) -> bool:
    """Already recalibrated for this decision and this text."""
    if previous is None:
        return False
    edit = _json(previous.get("lineage")).get("edit") or {}
    return (
        edit.get("decision_id") == work.meta.get("decision_id")
        and edit.get("text_sha256") == work.text_sha256
    )


def _items(config: ReviewConfig, benchmark: str) -> dict[str, dict[str, Any]]:
    path = config.items_path(benchmark)
    if not path.is_file():
        return {}
    return {r["item"]: r for r in pl.read_parquet(path).iter_rows(named=True)}


def _change(base: Mapping[str, Any], meta: Mapping[str, Any]) -> str:
    edit = f"edited by reviewer {meta.get('reviewer')} (review decision #{meta.get('decision_id')})"
    original = base.get("change")
    if original and "edited by reviewer" not in str(original):
        return f"{original}; then {edit}"
    return edit


def _record(
    work: _Work,
    *,
    benchmark: str,
    source: str,
    calibration_file: str,
) -> dict[str, Any]:
    from curation.fill._hooks import verdict_columns

    base, row, meta = work.base, work.row, work.meta
    return {
        "benchmark": benchmark,
        "candidate": row["item"],
        "method": base["method"],
        "parent": base.get("parent"),
        "round": int(base.get("round") or 0),
        "target_z": float(base["target_z"]),
        "question": row["question"],
        "answer": row["answer"],
        "answer_type": row["answer_type"],
        "change": _change(base, meta),
        "status": "invalid",
        "status_reason": None,
        "source": source,
        "rewriter_model": base.get("rewriter_model"),
        "prompt_hash": base.get("prompt_hash"),
        "b": None,
        "se": None,
        "z": None,
        "z_low": None,
        "z_high": None,
        "n_trials": 0,
        "n_correct": 0,
        "panel": "{}",
        "calibration": calibration_file,
        **verdict_columns(None),
        "selected": False,
    }


async def _benchmark(
    benchmark: str,
    works: Sequence[_Work],
    *,
    params: dict[str, Any],
    params_file: str,
    config: ReviewConfig,
    bases: _Bases,
    cache: Any,
    judge: Any,
    environ: Mapping[str, str] | None,
    report: RecalibrationReport,
    log: Callable[[str], None] | None,
) -> None:
    """Judge and measure ``works`` (their ``record`` is filled in place)."""
    from curation.calibrate import panel_setup
    from curation.fill._annotate import Child, Panel, annotate, annotation_lineage, describe
    from curation.fill._hooks import verdict_columns
    from curation.fill._simulate import register_child
    from curation.fill._validity import gradable_problem
    from curation.llm import CallResult, OpenAIBackend, SimulatedBackend

    setup = panel_setup(params, benchmark, params_file=params_file)
    settings, llm, collect, grading = setup.settings, setup.llm, setup.collect, setup.grading
    calibration, cal_file, models = setup.calibration, setup.calibration_file, setup.panel
    simulated = settings.backend == "simulate"
    latents: dict[str, tuple[float, str]] = {}
    if simulated:
        for w in works:
            latents[w.row["item"]] = latent_b(w.base, w.lineage)
        backend: Any = SimulatedBackend(
            benchmark=benchmark,
            truths={},
            abilities={m.name: calibration.abilities[m.name] for m in models},
            seed=settings.seed,
        )

        def register(child: Child) -> None:
            register_child(
                backend,
                child.item,
                answer=child.answer,
                answer_type=child.answer_type,
                choices=child.choices,
                latent_b=latents[child.item][0],
            )

    else:
        backend = OpenAIBackend(models, llm, environ=environ)
        register = None  # type: ignore[assignment]
    panel = Panel(
        models=tuple(models),
        backend=backend,
        cache=cache,
        collect=dataclasses.replace(collect, seed=settings.seed, progress=False),
        llm=llm,
        calibration=calibration,
        benchmark=benchmark,
        grading=grading,
        register=register if simulated else None,
    )
    if report.source != "simulated":
        report.source = panel.source
    items = _items(config, benchmark)

    children: list[Child] = []
    for w in works:
        source = "simulated" if simulated or w.base.get("source") == "simulated" else "collected"
        w.record = _record(w, benchmark=benchmark, source=source, calibration_file=str(cal_file))
        problem = gradable_problem(w.row["answer"], w.row["answer_type"], w.choices, grading)
        if problem is not None:
            w.record["status_reason"] = f"not gradable: {problem}"
            continue
        children.append(
            Child(
                w.row["item"], w.row["question"], w.row["answer"], w.row["answer_type"], w.choices
            )
        )

    # the judge's verdict sits beside the measurement (it changes no status)
    verdicts: dict[str, Any] = {}
    if judge is not None and works:
        pairs = []
        for w in works:
            view = {k: v for k, v in w.record.items() if k != "status"}
            view["choices"] = list(w.choices) if w.choices else None
            pairs.append((view, bases.parent(w.base.get("parent"), items)))
        before = (judge.requests, judge.cache_hits)
        assessments = await judge.assess_many(pairs)
        report.judge_requests += judge.requests - before[0]
        report.judge_cache_hits += judge.cache_hits - before[1]
        verdicts = {w.row["item"]: a.verdict for w, a in zip(works, assessments, strict=True)}

    def count(result: CallResult) -> None:
        if result.cached:
            report.cache_hits += 1
        else:
            report.requests += 1

    try:
        notes = await annotate(
            children,
            panel,
            target_z=0.5,
            tolerance=NO_TARGET,
            rule=settings.adaptive,
            stop_on_accept=False,
            on_result=count,
        )
    finally:
        await backend.aclose()

    for w in works:
        rec, cid = w.record, w.row["item"]
        rec.update(verdict_columns(verdicts.get(cid)))
        target_z = rec["target_z"]
        recal: dict[str, Any] = {
            "calibration": str(cal_file),
            "backend": settings.backend,
            "panel": [m.name for m in models],
            "adaptive": dataclasses.asdict(settings.adaptive),
            "off_target_stop": False,
            "target_z": target_z,
            "tolerance": settings.tolerance,
            "seed": settings.seed,
            "judge": None if judge is None else judge.model,
        }
        a = notes.get(cid)
        if a is not None:
            if a.decision == "accepted" and abs((a.z or 0.0) - target_z) > settings.tolerance:
                a.decision = "measured"  # precise, but not within tolerance of its target
            recal.update(annotation_lineage(a))
            recal["cost"] = {
                "panel_trials": a.n_trials,
                "panel_prompt_tokens": a.prompt_tokens,
                "panel_completion_tokens": a.completion_tokens,
            }
            rec["n_trials"], rec["n_correct"], rec["panel"] = (
                a.n_trials,
                a.n_correct,
                a.panel_json(),
            )
            if a.z is None:
                rec["status_reason"] = "no graded panel answer"
            else:
                rec.update(
                    status="calibrated",
                    status_reason="recalibrated after a reviewer's edit; "
                    + describe(a, target_z=target_z, tolerance=settings.tolerance),
                    b=a.b,
                    se=a.se,
                    z=a.z,
                    z_low=a.z_low,
                    z_high=a.z_high,
                )
        lineage: dict[str, Any] = {
            "parents": w.lineage.get("parents")
            or ([rec["parent"]] if rec["parent"] is not None else []),
            "edit": {
                "decision_id": w.meta.get("decision_id"),
                "reviewer": w.meta.get("reviewer"),
                "from_version": w.meta.get("edited_from_version"),
                "version": w.meta.get("version"),
                "text_sha256": w.text_sha256,
            },
            "recalibration": recal,
            "original": w.lineage,
            "original_from": w.base_from,
        }
        if w.choices:
            lineage["choices"] = list(w.choices)
        if simulated:
            b_latent, where = latents[cid]
            lineage["simulation"] = {
                "latent_b": b_latent,
                "latent_z": float(calibration.to_z(np.array([b_latent]))[0]),
                "latent_from": where,
            }
        rec["lineage"] = json.dumps(lineage, sort_keys=True, ensure_ascii=False)
        if log is not None:
            z = "no z" if rec["z"] is None else f"z {rec['z']:.4f}"
            log(f"{benchmark}/{cid}: {rec['status']}, {z}")


# ---- the command -------------------------------------------------------------------------


def _benchmarks(params: dict[str, Any], wanted: Sequence[str] | None) -> list[str]:
    configured = list(params.get("benchmarks") or {})
    if wanted:
        return list(dict.fromkeys(wanted))
    if not configured:
        raise ConfigError("no benchmarks in params.yaml; pass --benchmark")
    return configured


async def arecalibrate(
    *,
    config: ReviewConfig,
    params: dict[str, Any],
    params_file: str = "params.yaml",
    benchmarks: Sequence[str] | None = None,
    force: bool = False,
    db: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> RecalibrationReport:
    """:func:`recalibrate` inside a running event loop."""
    from curation.io.tables import write_table
    from curation.judge import build_judge
    from curation.llm import CompletionCache, llm_settings
    from curation.schemas import conform, empty_frame

    report = RecalibrationReport()
    names = _benchmarks(params, benchmarks)
    plans: list[tuple[str, Path, list[_Work], dict[str, dict[str, Any]], _Bases]] = []
    for b in names:
        edited_path = config.edited_path(b)
        if not edited_path.is_file():
            report.skipped[b] = f"no {edited_path} (run `curate review export` first)"
            continue
        edited = read_edited(edited_path).filter(pl.col("benchmark") == b)
        bases = _Bases(config, b, Path(db) if db is not None else config.db)
        works = []
        for row in edited.sort("item").iter_rows(named=True):
            meta = _json(row.get("metadata"))
            base, base_from = bases.of(row, meta)
            lineage = generation_lineage(_json(base.get("lineage")))
            choices = row.get("choices") or lineage.get("choices")
            works.append(
                _Work(
                    row=row,
                    meta=meta,
                    base=base,
                    base_from=base_from,
                    lineage=lineage,
                    choices=tuple(choices) if choices else None,
                    text_sha256=text_hash(row["question"], row["answer"]),
                )
            )
        plans.append((b, edited_path, works, _previous(config.recalibrated_path(b)), bases))

    llm = llm_settings(params, params_file=params_file)
    with CompletionCache(llm.cache_path) as cache:
        judge = None
        todo_any = any(
            force or not _done(prev.get(w.row["item"]), w)
            for _b, _p, works, prev, _bs in plans
            for w in works
        )
        if todo_any:
            judge = build_judge(params, params_file=params_file, cache=cache, environ=environ)
        try:
            for b, _edited_path, works, previous, bases in plans:
                out = config.recalibrated_path(b)
                stats = BenchmarkRecalibration(edited=len(works), file=str(out))
                report.benchmarks[b] = stats
                todo = [w for w in works if force or not _done(previous.get(w.row["item"]), w)]
                stats.unchanged = len(works) - len(todo)
                if todo:
                    await _benchmark(
                        b,
                        todo,
                        params=params,
                        params_file=params_file,
                        config=config,
                        bases=bases,
                        cache=cache,
                        judge=judge,
                        environ=environ,
                        report=report,
                        log=log,
                    )
                stats.recalibrated = sum(w.record["status"] == "calibrated" for w in todo)
                stats.invalid = len(todo) - stats.recalibrated
                current = {w.row["item"] for w in works}
                stats.kept = sum(c not in current for c in previous)
                if not todo and out.is_file():
                    continue
                rows = {**previous, **{w.row["item"]: w.record for w in todo}}
                ordered = [rows[c] for c in sorted(rows)]
                df = (
                    conform(pl.DataFrame(ordered, infer_schema_length=None), CANDIDATE)
                    if ordered
                    else empty_frame(CANDIDATE)
                )
                write_table(df, out, CANDIDATE)
                stats.written = True
        finally:
            if judge is not None:
                await judge.aclose()
    return report


def recalibrate(
    *,
    config: ReviewConfig,
    params: dict[str, Any],
    params_file: str = "params.yaml",
    benchmarks: Sequence[str] | None = None,
    force: bool = False,
    db: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> RecalibrationReport:
    """Measure the exported edited items again; write ``data/review/recalibrated/<b>.parquet``.

    ``benchmarks`` defaults to params' benchmarks (one without an edited file is
    skipped). ``force`` recalibrates every edited item, even one already done for its
    decision and text. ``db`` (default ``config.db``) is where an edit's original
    candidate is looked up when no configured candidate table has it. See the module
    doc for what is measured, how, and what is written.
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
