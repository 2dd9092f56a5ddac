"""Reviewers' edits waiting for calibration, and the candidates they started from.

``curate review export`` writes the edited items of a benchmark
(``data/review/edited/<b>.parquet``, schema ``item``, origin edited). For each one,
:func:`edits` finds the candidate record it started from — in the configured
candidate tables (first occurrence wins; the recalibrated output itself excluded),
else in the review queue (the version the edit was made on), else from the export's
metadata — and what an earlier ``curate review recalibrate`` already wrote, so an edit
already measured for its decision and text is not asked again.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from curation.calibrate import Child, latent_of
from curation.candidates import BENCHFILL, COLLECTED, Candidate, Source
from curation.errors import ConfigError, InputError
from curation.review._seed import read_candidates
from curation.review._settings import ReviewSettings
from curation.review._store import ItemNotFound, ReviewStore, text_hash
from curation.schemas import validate_frame


def json_object(text: Any) -> dict[str, Any]:
    """A JSON object from text (anything else, or invalid JSON, is {})."""
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
    try:
        df = pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"not a readable parquet file ({exc})", file=str(path)) from None
    validate_frame(df, "item", file=str(path))
    dupes = df.filter(pl.col("item").is_duplicated())
    if dupes.height:
        raise InputError("item repeats", file=str(path), record=f"item {dupes.item(0, 'item')}")
    return df


def latent_b(base: Mapping[str, Any], lineage: Mapping[str, Any]) -> tuple[float, str]:
    """The simulated latent difficulty an edit keeps, and where it came from: the
    original candidate's lineage, else its simulated question header, else its b."""
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
        "simulation lineage, header or calibrated b); use calibrate.backend: openai",
        record=f"candidate {base.get('candidate')}",
    )


class Origins:
    """The candidate record each edit started from, and parents for the judge."""

    def __init__(self, config: ReviewSettings, benchmark: str, db: Path | None) -> None:
        self.benchmark = benchmark
        self.records: dict[str, tuple[dict[str, Any], str]] = {}
        own = config.recalibrated_path(benchmark)
        for pattern in config.candidates:
            path = Path(str(pattern).format(benchmark=benchmark))
            if path == own or not path.is_file():
                continue
            df = read_candidates(path).filter(pl.col("benchmark") == benchmark)
            for row in df.iter_rows(named=True):
                self.records.setdefault(row["candidate"], (row, str(path)))
        self.db = db if db is not None and db.is_file() else None
        self._store: ReviewStore | None = None
        self._items_path = config.items_path(benchmark)

    @functools.cached_property
    def items(self) -> dict[str, dict[str, Any]]:
        """The benchmark's items by id (the parents of first-generation candidates)."""
        path = self._items_path
        if not path.is_file():
            return {}
        return {r["item"]: r for r in pl.read_parquet(path).iter_rows(named=True)}

    def _from_queue(self, candidate: str, version: int | None) -> dict[str, Any] | None:
        if self.db is None or version is None:
            return None
        if self._store is None:
            self._store = ReviewStore.open(self.db)
        try:
            view = self._store.item(self.benchmark, candidate)
        except ItemNotFound:
            return None
        return next((dict(v.record) for v in view.versions if v.version == version), None)

    def of(self, row: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[dict[str, Any], str]:
        """The original candidate of the edited ``row``, and where it was found."""
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
            "method": meta.get("method") or BENCHFILL,
            "parent": meta.get("parent"),
            "target_z": meta["target_z"],
            "source": meta.get("source") or COLLECTED,
            "question": row["question"],
            "lineage": "{}",
        }, "export metadata"

    def parent(self, pid: str | None) -> dict[str, Any]:
        """The parent record the judge compares with (an item or a candidate), or {}."""
        if pid is None:
            return {}
        if pid in self.items:
            return dict(self.items[pid])
        if pid in self.records:
            rec = dict(self.records[pid][0])
            rec["choices"] = generation_lineage(json_object(rec.get("lineage"))).get("choices")
            return rec
        return {}


@dataclass
class Edit:
    """One edited item: its row and export metadata, and the candidate it started from."""

    row: dict[str, Any]
    meta: dict[str, Any]
    base: dict[str, Any]
    base_from: str
    lineage: dict[str, Any]
    """The generation lineage of the base."""
    choices: tuple[str, ...] | None
    text_sha256: str

    @property
    def item(self) -> str:
        return str(self.row["item"])

    def done(self, previous: Mapping[str, Any] | None) -> bool:
        """Already recalibrated (``previous`` is that record) for this decision and text."""
        if previous is None:
            return False
        edit = json_object(previous.get("lineage")).get("edit") or {}
        return (
            edit.get("decision_id") == self.meta.get("decision_id")
            and edit.get("text_sha256") == self.text_sha256
        )

    def record(self, *, benchmark: str, source: Source, calibration_file: str) -> Candidate:
        """The candidate record of the edited text, before it is measured."""
        base, meta = self.base, self.meta
        edit = f"edited by reviewer {meta.get('reviewer')}"
        edit += f" (review decision #{meta.get('decision_id')})"
        original = base.get("change")
        keep = original and "edited by reviewer" not in str(original)
        return Candidate(
            benchmark=benchmark,
            candidate=self.item,
            method=base["method"],
            parent=base.get("parent"),
            round=int(base.get("round") or 0),
            target_z=float(base["target_z"]),
            question=self.row["question"],
            answer=self.row["answer"],
            answer_type=self.row["answer_type"],
            change=f"{original}; then {edit}" if keep else edit,
            source=source,
            rewriter_model=base.get("rewriter_model"),
            prompt_hash=base.get("prompt_hash"),
            calibration=calibration_file,
        )

    def child(self) -> Child:
        """The edited item as the panel sees it."""
        row = self.row
        return Child(self.item, row["question"], row["answer"], row["answer_type"], self.choices)

    def lineage_of(self, record: Candidate, *, recalibration: dict[str, Any]) -> dict[str, Any]:
        """The lineage of its measured ``record``: the edit, the measurement, the original."""
        lineage: dict[str, Any] = {
            "parents": self.lineage.get("parents")
            or ([record.parent] if record.parent is not None else []),
            "edit": {
                "decision_id": self.meta.get("decision_id"),
                "reviewer": self.meta.get("reviewer"),
                "from_version": self.meta.get("edited_from_version"),
                "version": self.meta.get("version"),
                "text_sha256": self.text_sha256,
            },
            "recalibration": recalibration,
            "original": self.lineage,
            "original_from": self.base_from,
        }
        if self.choices:
            lineage["choices"] = list(self.choices)
        return lineage


@dataclass
class Edits:
    """A benchmark's edited items, their origins, and the records already written."""

    benchmark: str
    items: list[Edit]
    previous: dict[str, dict[str, Any]]
    """Records already in the recalibrated file, by candidate."""
    origins: Origins

    def todo(self, *, force: bool = False) -> list[Edit]:
        """The edits to measure now (all with ``force``)."""
        return [e for e in self.items if force or not e.done(self.previous.get(e.item))]


def edits(config: ReviewSettings, benchmark: str, db: Path | None) -> Edits:
    """The edited items of ``benchmark`` (exported), each with the candidate it started from."""
    edited = read_edited(config.edited_path(benchmark)).filter(pl.col("benchmark") == benchmark)
    origins = Origins(config, benchmark, db)
    items = []
    for row in edited.sort("item").iter_rows(named=True):
        meta = json_object(row.get("metadata"))
        base, base_from = origins.of(row, meta)
        lineage = generation_lineage(json_object(base.get("lineage")))
        choices = row.get("choices") or lineage.get("choices")
        items.append(
            Edit(
                row=row,
                meta=meta,
                base=base,
                base_from=base_from,
                lineage=lineage,
                choices=tuple(choices) if choices else None,
                text_sha256=text_hash(row["question"], row["answer"]),
            )
        )
    out = config.recalibrated_path(benchmark)
    previous = (
        {r["candidate"]: r for r in read_candidates(out).iter_rows(named=True)}
        if out.is_file()
        else {}
    )
    return Edits(benchmark, items, previous, origins)


def exported_edits(
    config: ReviewSettings,
    configured: Collection[str],
    benchmarks: Sequence[str] | None = None,
    *,
    db: Path | None = None,
) -> tuple[list[Edits], dict[str, str]]:
    """The :func:`edits` of each benchmark (``benchmarks``, default the ``configured``
    ones of params), and why a benchmark has none (no edited file exported). ``db``
    defaults to ``config.db``."""
    if benchmarks:
        names = list(dict.fromkeys(benchmarks))
    else:
        names = list(configured)
        if not names:
            raise ConfigError("no benchmarks in params.yaml; pass --benchmark")
    found, skipped = [], {}
    for b in names:
        path = config.edited_path(b)
        if not path.is_file():
            skipped[b] = f"no {path} (run `curate review export` first)"
        else:
            found.append(edits(config, b, db if db is not None else config.db))
    return found, skipped
