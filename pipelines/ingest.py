"""Stage `ingest`: raw benchmark items -> data/items/<benchmark>.parquet.

A matrix-only benchmark (``items.texts: false``) has no raw items: its item table is
the ids of its response matrix, and this stage says, once, which stages skip it.

``benchmarks.<b>.limit: N`` keeps the first N items (in source order) for a small trial
run, e.g. a real local panel on 20 items.

The responses stage depends on ``data/raw/<b>/imports/`` (where `curate responses
import` writes), and DVC fails a stage whose dependency is missing. `curate benchmark
add` creates it; for an entry written by hand this stage does (DVC runs it first, and
checks each stage's dependencies only when it reaches that stage), so a new benchmark
needs no folder made by hand.
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split

from curation.io.tables import write_table
from curation.items import ingest_benchmark, skip_note, textless_items
from curation.params_model import ParamsFile
from curation.paths import imports_dir, items_path
from curation.stage_main import stage_main


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `ingest` for one benchmark on the validated params: the line stage_main prints."""
    spec = params.benchmark(benchmark, params_file=params_file)
    out = items_path(benchmark)
    texts = spec.items.texts
    if texts:
        items = ingest_benchmark(benchmark, spec, params_file=params_file)
    else:
        items = textless_items(benchmark, spec, params_file=params_file)
    limit = spec.limit
    total = items.height
    if limit is not None:
        items = items.head(limit)
    write_table(items, out, "item")
    created = _ensure_imports_dir(benchmark)
    shown = f" (first {items.height} of {total}: limit {limit})" if limit is not None else ""
    if not texts:
        return (
            f"{benchmark}: {items.height} item ids (no texts){shown} -> {out}{created}\n"
            + skip_note(benchmark)
        )
    return f"{benchmark}: {items.height} items{shown} -> {out}{created}"


def _ensure_imports_dir(benchmark: str) -> str:
    """Create the imports folder the responses stage depends on if it is missing (module
    doc); what to append to the stage's line."""
    folder = imports_dir(benchmark)
    if folder.is_dir():
        return ""
    folder.mkdir(parents=True)
    (folder / ".gitkeep").touch()
    return f"; created {folder}/ (imported logs go there: commit it)"


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.ingest``): validate params once, run, exit 0/2/3."""
    return stage_main("ingest", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
