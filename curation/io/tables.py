"""Validated, atomic table reads and writes shared by every stage and command.

A table is written only after it validates against its schema, and only through a
temporary file that is renamed into place, so a failed stage never leaves half a table.
A missing input names the DVC stage that makes it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError
from curation.io.atomic import atomic_path
from curation.io.precision import round_frame
from curation.schemas import polars_schema, validate_frame


def write_table(df: pl.DataFrame, path: Path, schema: str) -> None:
    """Validate ``df`` against ``schemas/<schema>.schema.json``, then write parquet atomically.

    Floats are written to the stated precision (:mod:`curation.io.precision`), so the
    bytes are the same on every machine.

    A compact table -- Enum or categorical ids, with unsigned or null-typed columns where
    the schema says integer or number (a leaderboard-sized response table) -- is cast
    to the schema's types as it streams to the file, so its strings exist a batch at a
    time; the bytes are those of the same table written with the schema's types.
    """
    validate_frame(df, schema, file=str(path))
    target = polars_schema(schema)
    coded = any(isinstance(t, (pl.Enum, pl.Categorical)) for t in df.schema.values())
    compact = [c for c in df.columns if coded and c in target and df.schema[c] != target[c]]
    with atomic_path(path) as tmp:
        if compact:
            round_frame(df).lazy().with_columns(
                pl.col(c).cast(target[c]) for c in compact
            ).sink_parquet(tmp, statistics=True)
        else:
            round_frame(df).write_parquet(tmp, statistics=True)


def require_output(path: Path, *, produced_by: str) -> Path:
    """``path`` if an earlier stage wrote it, else an error naming the stage that makes it.

    ``produced_by`` is a DVC stage name such as ``annotate@gsm8k``.
    """
    if not path.is_file():
        raise InputError(f"missing; run `dvc repro {produced_by}` first", file=str(path))
    return path


_KEY_COLUMNS = {
    "ingest": ("item",),
    "responses": ("model", "item", "n_trials", "n_correct"),
    "annotate": ("item", "z"),
}
"""Columns every reader of a stage's table relies on (checked on read: another table
copied over it is reported here, not as a crash later)."""


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def read_table(path: Path, *, produced_by: str) -> pl.DataFrame:
    """Read a table an earlier stage wrote, with a hint if it is missing or damaged.

    A readable parquet file that lacks a column its stage always writes (another table
    copied over it, say) is damaged too: it is reported here, not as a crash later.
    """
    try:
        df = pl.read_parquet(require_output(path, produced_by=produced_by))
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(
            f"not a readable parquet table ({_first_line(exc)}); run `dvc repro -f {produced_by}`",
            file=str(path),
        ) from None
    _check_columns(df.columns, path, produced_by)
    return df


def _check_columns(columns: list[str], path: Path, produced_by: str) -> None:
    """A stage's table lacking a column that stage always writes is damaged: say so."""
    stage = produced_by.split("@", 1)[0]
    missing = [c for c in _KEY_COLUMNS.get(stage, ()) if c not in columns]
    if missing:
        raise InputError(
            f"not the table {produced_by} writes (no column {', '.join(missing)}); "
            f"run `dvc repro -f {produced_by}`",
            file=str(path),
        )


def scan_table(path: Path, *, produced_by: str) -> pl.LazyFrame:
    """A lazy scan of a table an earlier stage wrote, checked as :func:`read_table` checks
    it (missing, unreadable, not the stage's table) without reading its rows: for readers
    that stream a leaderboard-sized table instead of holding it (``curation.irt.encode``)."""
    try:
        lf = pl.scan_parquet(require_output(path, produced_by=produced_by))
        columns = lf.collect_schema().names()
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(
            f"not a readable parquet table ({_first_line(exc)}); run `dvc repro -f {produced_by}`",
            file=str(path),
        ) from None
    _check_columns(columns, path, produced_by)
    return lf


def read_json(path: Path, *, produced_by: str) -> Any:
    """Read a JSON file an earlier stage wrote; a damaged one names the stage to rerun."""
    try:
        return json.loads(require_output(path, produced_by=produced_by).read_text("utf-8"))
    except (ValueError, OSError) as exc:
        raise InputError(
            f"not readable JSON ({_first_line(exc)}); run `dvc repro -f {produced_by}`",
            file=str(path),
        ) from None
