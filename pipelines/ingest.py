"""Stage `ingest`: raw benchmark items -> data/items/<benchmark>.parquet.

``benchmarks.<b>.limit: N`` keeps the first N items (in source order) for a small trial
run, e.g. a real local panel on 20 items.
"""

from __future__ import annotations

from typing import Any

from curation.io.tables import write_table
from curation.items import ingest_benchmark
from curation.params import benchmark_limit, benchmark_spec
from curation.paths import items_path
from curation.stage_main import stage_main


def run(params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml") -> str:
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    items = ingest_benchmark(spec, params_file=params_file)
    limit = benchmark_limit(spec)
    total = items.height
    if limit is not None:
        items = items.head(limit)
    out = items_path(benchmark)
    write_table(items, out, "item")
    shown = f" (first {items.height} of {total}: limit {limit})" if limit is not None else ""
    return f"{benchmark}: {items.height} items{shown} -> {out}"


def main(argv: list[str] | None = None) -> int:
    return stage_main("ingest", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
