"""Stage `ingest`: raw benchmark items -> data/items/<benchmark>.parquet.

A matrix-only benchmark (``items.texts: false``) has no raw items: its item table is
the ids of its response matrix, and this stage says, once, which stages skip it.
"""

from __future__ import annotations

from typing import Any

from curation.io.tables import write_table
from curation.items import has_texts, ingest_benchmark, skip_note, textless_items
from curation.params import benchmark_spec
from curation.paths import items_path
from curation.stage_main import stage_main


def run(params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml") -> str:
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    out = items_path(benchmark)
    if not has_texts(spec):
        items = textless_items(spec, params_file=params_file)
        write_table(items, out, "item")
        return f"{benchmark}: {items.height} item ids (no texts) -> {out}\n{skip_note(benchmark)}"
    items = ingest_benchmark(spec, params_file=params_file)
    write_table(items, out, "item")
    return f"{benchmark}: {items.height} items -> {out}"


def main(argv: list[str] | None = None) -> int:
    return stage_main("ingest", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
