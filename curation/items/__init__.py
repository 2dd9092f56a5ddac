"""Benchmark items: ingest raw files into validated item tables (ids only when text-less)."""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.items._ingest import ingest_benchmark, item_record
    from curation.items._settings import ANSWER_TYPES, AnswerType, ItemsSettings
    from curation.items._textless import (
        TEXT_FREE_STAGES,
        TEXT_STAGES,
        skip_note,
        textless_items,
        write_skipped_metrics,
    )

_EXPORTS = {
    "ANSWER_TYPES": "_settings",
    "AnswerType": "_settings",
    "ItemsSettings": "_settings",
    "TEXT_FREE_STAGES": "_textless",
    "TEXT_STAGES": "_textless",
    "ingest_benchmark": "_ingest",
    "item_record": "_ingest",
    "skip_note": "_textless",
    "textless_items": "_textless",
    "write_skipped_metrics": "_textless",
}

__all__ = [
    "ANSWER_TYPES",
    "AnswerType",
    "ItemsSettings",
    "TEXT_FREE_STAGES",
    "TEXT_STAGES",
    "ingest_benchmark",
    "item_record",
    "skip_note",
    "textless_items",
    "write_skipped_metrics",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
