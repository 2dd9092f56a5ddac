"""Validated, atomic table writes shared by every stage."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from curation.io.atomic import atomic_path
from curation.schemas import validate_frame


def write_table(df: pl.DataFrame, path: Path, schema: str) -> None:
    """Validate ``df`` against ``schemas/<schema>.schema.json``, then write parquet atomically."""
    validate_frame(df, schema, file=str(path))
    with atomic_path(path) as tmp:
        df.write_parquet(tmp, statistics=True)


def require_output(path: Path, *, produced_by: str) -> Path:
    """``path`` if an earlier stage wrote it, else an error saying which command makes it."""
    if not path.is_file():
        from curation.errors import InputError

        raise InputError(
            f"missing; run `curate {produced_by}` (or `dvc repro`) first", file=str(path)
        )
    return path


def read_table(path: Path, *, produced_by: str) -> pl.DataFrame:
    """Read a table an earlier stage wrote, with a hint if it is missing."""
    return pl.read_parquet(require_output(path, produced_by=produced_by))
