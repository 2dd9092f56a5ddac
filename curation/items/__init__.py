"""Benchmark items: ingest raw files into validated item tables."""

from curation.items._ingest import ingest_benchmark, item_record

__all__ = ["ingest_benchmark", "item_record"]
