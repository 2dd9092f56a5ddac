"""Benchmark items: ingest raw files into validated item tables (ids only when text-less)."""

from curation.items._ingest import ingest_benchmark, item_record
from curation.items._textless import (
    TEXT_FREE_STAGES,
    TEXT_STAGES,
    has_texts,
    skip_note,
    textless_items,
    write_skipped_metrics,
)

__all__ = [
    "TEXT_FREE_STAGES",
    "TEXT_STAGES",
    "has_texts",
    "ingest_benchmark",
    "item_record",
    "skip_note",
    "textless_items",
    "write_skipped_metrics",
]
