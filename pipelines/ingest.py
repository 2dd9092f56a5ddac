"""Stage `ingest`: raw benchmark items -> data/items/<benchmark>.parquet."""

from __future__ import annotations

from typing import Any

from curation.io.tables import write_table
from curation.items import ingest_benchmark
from curation.params import benchmark_spec
from curation.paths import items_path
from curation.stage_main import stage_main


def run(params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml") -> str:
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    items = ingest_benchmark(spec, params_file=params_file)
    out = items_path(benchmark)
    write_table(items, out, "item")
    return f"{benchmark}: {items.height} items -> {out}"


def main(argv: list[str] | None = None) -> int:
    return stage_main("ingest", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
