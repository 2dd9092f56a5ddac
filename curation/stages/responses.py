"""Stage `responses`: import a raw response matrix -> data/responses/<benchmark>.parquet."""

from __future__ import annotations

from typing import Any

from curation.params import benchmark_spec
from curation.responses import import_responses
from curation.stages._paths import items_path, responses_path
from curation.stages._write import read_table, write_table


def run(params: dict[str, Any], benchmark: str, *, params_file: str = "params.yaml") -> str:
    spec = benchmark_spec(params, benchmark, params_file=params_file)
    items_file = items_path(benchmark)
    items = read_table(items_file, produced_by=f"ingest --benchmark {benchmark}")
    table = import_responses(
        spec,
        known_items=items.get_column("item").to_list(),
        items_file=str(items_file),
        params_file=params_file,
    )
    out = responses_path(benchmark)
    write_table(table, out, "response")
    n_models = table.get_column("model").n_unique()
    n_items = table.get_column("item").n_unique()
    return f"{benchmark}: {table.height} responses ({n_models} models x {n_items} items) -> {out}"
