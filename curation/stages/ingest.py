"""Stage `ingest`: raw benchmark items -> data/items/<benchmark>.parquet."""

from __future__ import annotations

from typing import Any

from curation.items import ingest_benchmark
from curation.params import benchmark_spec
from curation.stages._paths import items_path
from curation.stages._write import write_table


def run(params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml") -> str:
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    items = ingest_benchmark(spec, params_file=params_file)
    out = items_path(benchmark)
    write_table(items, out, "item")
    return f"{benchmark}: {items.height} items -> {out}"
