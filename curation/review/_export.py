"""Decisions as data: the exported decision log and the reviewed items the build reads.

``curate review export`` writes, each validated against its schema and atomically:

* ``data/review/export/decisions.jsonl`` (schema ``decision``): the whole append-only log,
  sorted by (benchmark, candidate, decision_id), keys sorted — the same queue gives the
  same bytes. It is a dependency of the build stage.
* ``data/review/export/<benchmark>.parquet`` (schema ``accepted_item``): every queue
  item whose current version has a measured z, with review_status accepted, rejected or
  pending. The build stage puts the accepted ones into the ``filled`` config.
* ``data/review/edited/<benchmark>.parquet`` (schema ``item``, origin edited): edited
  items waiting for calibration. Once calibrated, their candidate records are seeded
  again and come back as pending versions.

A file is written for every benchmark in params.yaml and in the queue (zero rows when
there is nothing), so the build stage's dependencies always exist.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from curation.errors import InputError
from curation.io.atomic import write_text
from curation.io.tables import write_table
from curation.review._seed import benchmark_meta
from curation.review._settings import ReviewSettings
from curation.review._store import Decision, ItemView, ReviewStore
from curation.schemas import polars_schema, validate_records

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings

DECISION = "decision"
ACCEPTED = "accepted_item"
ITEM = "item"


@dataclass
class ExportReport:
    """What an export wrote."""

    decisions_file: str
    n_decisions: int
    accepted: dict[str, dict[str, int]] = field(default_factory=dict)
    """benchmark -> review_status -> rows in accepted/<benchmark>.parquet."""
    edited: dict[str, int] = field(default_factory=dict)
    """benchmark -> rows in edited/<benchmark>.parquet."""
    files: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"wrote {self.decisions_file}: {self.n_decisions} decision(s)"]
        for b, by in self.accepted.items():
            parts = ", ".join(f"{n} {s}" for s, n in by.items()) or "no rows"
            lines.append(
                f"{b}: reviewed items {parts}; {self.edited.get(b, 0)} edited awaiting calibration"
            )
        return "\n".join(lines)


_DEFAULTS = {"role": "reviewer", "overrules_judge": False, "batch": None, "reverts": None}
"""Decision fields added after the first log format, as an older record implies them."""


def decision_records(decisions: list[Decision]) -> list[dict[str, Any]]:
    """Decision records in export order: (benchmark, candidate, decision_id)."""
    ordered = sorted(decisions, key=lambda d: (d.benchmark, d.candidate, d.id))
    return [d.to_record() for d in ordered]


def _existing(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            rec = {"decision_id": None, "unreadable": line}  # counts as a record we would lose
        out.append(rec if isinstance(rec, dict) else {"decision_id": None, "unreadable": line})
    return out


def write_decisions(path: str | Path, decisions: list[Decision], *, force: bool = False) -> int:
    """Validate and atomically write the decision log as JSON lines; return the count.

    The log is append-only, so a new export holds every record of an older export of
    the same queue. If ``path`` holds a decision this export lacks or changes (another
    or an older database), nothing is written unless ``force``.
    """
    path = Path(path)
    records = decision_records(decisions)
    if not force:
        new = {r["decision_id"]: r for r in records}
        lost = [r for r in _existing(path) if new.get(r.get("decision_id")) != {**_DEFAULTS, **r}]
        if lost:
            ids = ", ".join(str(r.get("decision_id")) for r in lost[:5])
            raise InputError(
                f"holds {len(lost)} decision(s) that this queue does not have or records "
                f"differently (decision_id {ids}{', ...' if len(lost) > 5 else ''}); "
                "exporting would lose them. Is --db the right queue? Pass --force to "
                "overwrite anyway",
                file=str(path),
            )
    validate_records(records, DECISION, file=str(path), record_label="decision")
    text = "".join(
        json.dumps(r, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n" for r in records
    )
    write_text(path, text)
    return len(records)


def read_decisions(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate an exported decision log (line numbers in errors)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("missing; run `curate review export` first", file=str(path))
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError as exc:
            raise InputError(
                f"not valid JSON ({exc})", file=str(path), record=f"line {n}"
            ) from None
        validate_records([out[-1]], DECISION, file=str(path), record_label="line", first_index=n)
    return out


def _is_edited(view: ItemView) -> bool:
    edits = {v.text_hash for v in view.versions if v.origin == "edit"}
    return view.current.text_hash in edits


def _meta(
    view: ItemView, benchmarks: Mapping[str, BenchmarkSettings], file: str
) -> tuple[str, str]:
    b = view.state.benchmark
    p_domain, p_license = benchmark_meta(benchmarks, b)
    domain, lic = view.domain or p_domain, view.license or p_license
    if not domain or not lic:
        raise InputError(
            "domain or license unknown: configure the benchmark in params.yaml `benchmarks` "
            "(or ingest its items) and seed again",
            file=file,
            record=f"candidate {b}/{view.state.candidate}",
            field="domain" if not domain else "license",
        )
    return domain, lic


def _votes(view: ItemView) -> list[Decision]:
    """The accept/reject decisions on the current version that still count (not undone)
    and agree with its status: who decided it."""
    undone = {d.reverts for d in view.history if d.decision == "reverted"}
    return [
        d
        for d in view.history
        if d.version == view.current.version
        and d.decision == view.state.status
        and d.id not in undone
    ]


def _lineage(view: ItemView) -> str:
    rec = view.current.record
    try:
        original = json.loads(rec.get("lineage") or "{}")
    except ValueError:
        original = rec.get("lineage")
    last = view.state.last_decision
    judged = next(
        (
            v.record
            for v in reversed(view.versions)
            if v.version <= view.current.version and v.judge != "unjudged"
        ),
        None,
    )
    return json.dumps(
        {
            "candidate": view.state.candidate,
            "method": rec.get("method"),
            "parent": rec.get("parent"),
            "target_z": rec.get("target_z"),
            "rewriter_model": rec.get("rewriter_model"),
            "prompt_hash": rec.get("prompt_hash"),
            "generation": original,
            "judge": None
            if judged is None
            else {
                "correct": judged.get("judge_correct"),
                "well_posed": judged.get("judge_well_posed"),
                "format_kept": judged.get("judge_format_kept"),
                "reason": judged.get("judge_reason"),
                "model": judged.get("judge_model"),
            },
            "review": {
                "status": view.state.status,
                "version": view.current.version,
                "decision_id": last.id if last else None,
                "decision": last.decision if last else None,
                "reviewer": last.reviewer if last else None,
                "decided_at": last.decided_at if last else None,
                "comment": last.comment if last else None,
                "decision_ids": [d.id for d in view.history],
                "reviewers": sorted({d.reviewer for d in _votes(view)}),
                "adjudicated": any(d.role == "adjudicator" for d in _votes(view)),
                "overrules_judge": any(d.overrules_judge for d in _votes(view)),
                "overrule_reason": next(
                    (d.comment for d in reversed(_votes(view)) if d.overrules_judge), None
                ),
            },
            "edits": [
                {
                    "decision_id": d.id,
                    "reviewer": d.reviewer,
                    "from_version": d.version,
                    "to_version": d.new_version,
                }
                for d in view.history
                if d.decision == "edited"
            ],
        },
        sort_keys=True,
        ensure_ascii=False,
    )


def accepted_row(
    view: ItemView, benchmarks: Mapping[str, BenchmarkSettings], *, file: str
) -> dict[str, Any] | None:
    """The ``accepted_item`` record of a queue item, or None (no z, or not reviewable)."""
    cur = view.current
    rec = cur.record
    status = view.state.status
    if rec.get("z") is None or status == "needs-calibration":
        return None
    if status == "conflict":
        status = "pending"  # reviewers disagree: undecided until an adjudicator decides
    domain, lic = _meta(view, benchmarks, file)
    edited = _is_edited(view)
    last = view.state.last_decision
    simulated = cur.source == "simulated"
    if simulated:
        source = "simulated"
    elif edited:
        editor = next(d for d in reversed(view.history) if d.decision == "edited")
        source = (
            f"BenchFill candidate {view.state.candidate}, edited by reviewer "
            f"{editor.reviewer} (review decision #{editor.id})"
        )
    else:
        source = (
            f"BenchFill {rec.get('method')} round {rec.get('round')}, rewriter "
            f"{rec.get('rewriter_model') or 'unknown'}"
        )
    return {
        "benchmark": view.state.benchmark,
        "item": view.state.candidate,
        "domain": domain,
        "question": cur.question,
        "answer": cur.answer,
        "answer_type": rec["answer_type"],
        "choices": None,
        "source": source,
        "license": lic,
        "origin": "edited" if edited else "benchfill",
        "metadata": json.dumps(
            {
                "candidate": view.state.candidate,
                "version": cur.version,
                "method": rec.get("method"),
                "round": rec.get("round"),
                "parent": rec.get("parent"),
                "target_z": rec.get("target_z"),
                "change": rec.get("change"),
                "selected": rec.get("selected"),
            },
            sort_keys=True,
            ensure_ascii=False,
        ),
        "z": rec["z"],
        "z_low": rec.get("z_low"),
        "z_high": rec.get("z_high"),
        "b": rec.get("b"),
        "se": rec.get("se"),
        "calibration": rec.get("calibration"),
        "difficulty_source": cur.source,
        "review_status": status,
        "reviewer": ", ".join(sorted({d.reviewer for d in _votes(view)}))
        if last is not None and status != "pending"
        else None,
        "lineage": _lineage(view),
    }


def edited_row(
    view: ItemView, benchmarks: Mapping[str, BenchmarkSettings], *, file: str
) -> dict[str, Any] | None:
    """The ``item`` record of an edited version waiting for calibration, or None."""
    cur = view.current
    if view.state.status != "needs-calibration" or cur.origin != "edit":
        return None
    domain, lic = _meta(view, benchmarks, file)
    editor = next(d for d in view.history if d.id == cur.decision_id)
    return {
        "benchmark": view.state.benchmark,
        "item": view.state.candidate,
        "domain": domain,
        "question": cur.question,
        "answer": cur.answer,
        "answer_type": cur.record["answer_type"],
        "choices": None,
        "source": "simulated"
        if cur.source == "simulated"
        else f"BenchFill candidate {view.state.candidate}, edited by reviewer {editor.reviewer} "
        f"(review decision #{editor.id})",
        "license": lic,
        "origin": "edited",
        "metadata": json.dumps(
            {
                "candidate": view.state.candidate,
                "version": cur.version,
                "edited_from_version": editor.version,
                "decision_id": editor.id,
                "reviewer": editor.reviewer,
                "parent": cur.record.get("parent"),
                "target_z": cur.record.get("target_z"),
                "method": cur.record.get("method"),
                "source": cur.source,
            },
            sort_keys=True,
            ensure_ascii=False,
        ),
    }


def export(
    store: ReviewStore,
    *,
    config: ReviewSettings,
    benchmarks: Mapping[str, BenchmarkSettings],
    force: bool = False,
) -> ExportReport:
    """Write the decision log, the reviewed items and the edited items (see module doc).

    Refuses (unless ``force``) to replace a decision file that holds decisions the
    queue does not have: exported decisions are never silently lost.
    """
    n = write_decisions(config.decisions, store.decisions(), force=force)
    report = ExportReport(decisions_file=str(config.decisions), n_decisions=n)
    report.files.append(str(config.decisions))
    names = sorted(set(benchmarks) | set(store.benchmarks()))
    views: dict[str, list[ItemView]] = {b: [] for b in names}
    for state, _v, _d, _l in store.current_versions():
        views[state.benchmark].append(store.item(state.benchmark, state.candidate))
    for b in names:
        acc_path, ed_path = config.accepted_path(b), config.edited_path(b)
        acc_rows = [r for v in views[b] if (r := accepted_row(v, benchmarks, file=str(acc_path)))]
        ed_rows = [r for v in views[b] if (r := edited_row(v, benchmarks, file=str(ed_path)))]
        acc = pl.DataFrame(acc_rows, schema=polars_schema(ACCEPTED), orient="row").sort("item")
        ed = pl.DataFrame(ed_rows, schema=polars_schema(ITEM), orient="row").sort("item")
        write_table(acc, acc_path, ACCEPTED)
        write_table(ed, ed_path, ITEM)
        counts: dict[str, int] = {}
        for s in acc.get_column("review_status").to_list():
            counts[s] = counts.get(s, 0) + 1
        report.accepted[b] = dict(sorted(counts.items()))
        report.edited[b] = ed.height
        report.files += [str(acc_path), str(ed_path)]
    return report
