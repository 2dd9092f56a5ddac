"""Matrix-only benchmarks: a response matrix without item texts (a leaderboard, a paper's CSV).

Everything that measures needs only the matrix -- check, annotate (IRT), gaps, subsets,
mirt -- so such a benchmark runs them like any other. What needs the texts cannot:
BenchFill rewrites items, the judge reads them, build publishes them. The entry says
``items: {texts: false, path: <the response matrix>}``; ``ingest`` then writes an item
table of ids only (``question`` and ``answer`` null, ``metadata`` ``{"texts": false}``)
and says, once, what is skipped and why; the skipped stages write empty outputs (so the
DVC graph stays one graph for every benchmark) and a metrics record that says so.

``items.path`` repeats the matrix's path because DVC reads it as the ingest stage's dep
(``${item.items.path}`` in dvc.yaml): the ids change exactly when the matrix does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from curation.errors import InputError
from curation.io.readers import detect_format, read_frame
from curation.params import require_file
from curation.schemas import conform, validate_frame, validate_records

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings

TEXT_STAGES: dict[str, str] = {
    "fill": "BenchFill rewrites item texts",
    "judge": "the judge reads the items it checks",
    "build": "a published dataset is made of the item texts",
}
"""Stages a matrix-only benchmark skips, and why."""
TEXT_FREE_STAGES = ("check", "annotate", "gaps", "subsets", "mirt")
"""Stages that need only the response matrix."""


def skip_note(benchmark: str) -> str:
    """The one statement of what a matrix-only benchmark runs and skips."""
    skipped = "; ".join(f"{s} ({why})" for s, why in TEXT_STAGES.items())
    return (
        f"{benchmark}: matrix-only (items.texts: false): runs {', '.join(TEXT_FREE_STAGES)}; "
        f"skips {skipped}"
    )


def matrix_item_ids(
    benchmark: str, spec: BenchmarkSettings, *, params_file: str = "params.yaml"
) -> list[str]:
    """The item ids of the benchmark's response matrix, in the matrix's order."""
    rs = spec.responses
    assert rs is not None  # BenchmarkSettings requires it for texts: false
    path = require_file(
        rs.path, params_file=params_file, key=f"benchmarks.{benchmark}.responses.path"
    )
    fmt = detect_format(path, rs.format)
    if rs.layout == "wide" and fmt in ("csv", "parquet"):
        header = _wide_header(path, fmt)  # the ids are the header: no cell is read
        if header is not None and rs.model_column in header:
            return [c for c in header if c != rs.model_column]
    df = read_frame(path, fmt)
    if df.height == 0:
        raise InputError("file is empty: no records", file=str(path))
    if rs.layout == "wide":
        from curation.responses import require_model_column

        require_model_column(df, rs.model_column, file=str(path))
        ids = [c for c in df.columns if c != rs.model_column]
    else:
        col = rs.columns.get("item", "item")
        if col not in df.columns:
            raise InputError(
                "required column missing (set responses.columns.item)", file=str(path), field=col
            )
        column = df.get_column(col).cast(pl.String).drop_nulls().unique(maintain_order=True)
        ids = [i for i in column.to_list() if i.strip()]
    if not ids:
        raise InputError("the matrix names no items", file=str(path))
    return ids


def _wide_header(path: Path, fmt: str) -> list[str] | None:
    """The columns of a wide matrix with at least one row and one item column, read
    from its header (a 4,000 x 30,000 CSV is 120 M cells of text); None otherwise (the
    full read then says what is wrong)."""
    try:
        if fmt == "csv":
            head = pl.read_csv(path, infer_schema=False, n_rows=1)
        else:
            head = pl.scan_parquet(path).head(1).collect()
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError):
        return None
    return head.columns if head.height and head.width > 1 else None


def textless_items(
    benchmark: str, spec: BenchmarkSettings, *, params_file: str = "params.yaml"
) -> pl.DataFrame:
    """The validated item table of a matrix-only benchmark: ids, no texts."""
    ids = matrix_item_ids(benchmark, spec, params_file=params_file)
    n = len(ids)
    table = pl.DataFrame(
        {
            "benchmark": [benchmark] * n,
            "item": ids,
            "domain": [spec.domain] * n,
            "question": pl.Series([None] * n, dtype=pl.String),
            "answer": pl.Series([None] * n, dtype=pl.String),
            "answer_type": [spec.items.answer_type] * n,
            "choices": pl.Series([None] * n, dtype=pl.List(pl.String)),
            "source": [spec.source] * n,
            "license": [spec.license] * n,
            "origin": ["original"] * n,
            "metadata": [json.dumps({"texts": False})] * n,
        }
    )
    table = conform(table, "item")
    validate_frame(table, "item", file=str(spec.items.path))
    return table


def skipped_record(stage: str, benchmark: str) -> dict[str, object]:
    """The metrics record a skipped stage writes (schema ``skipped_stage``)."""
    record: dict[str, object] = {
        "benchmark": benchmark,
        "stage": stage,
        "skipped": True,
        "reason": f"no item texts (items.texts: false): {TEXT_STAGES[stage]}",
    }
    validate_records([record], "skipped_stage", file=f"metrics/{stage}/{benchmark}.json")
    return record


def write_skipped_metrics(stage: str, benchmark: str, path: Path) -> None:
    """Write the metrics file a stage owes for a benchmark it skips (no item texts), so
    DVC still finds its declared output and the skip is recorded with its reason."""
    from curation.io.atomic import write_json

    write_json(path, skipped_record(stage, benchmark))
