"""Validated, atomic table reads and writes shared by every stage and command.

A table is written only after it validates against its schema, and only through a
temporary file that is renamed into place, so a failed stage never leaves half a table.
A missing input names the DVC stage that makes it.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from curation.errors import InputError
from curation.io.atomic import atomic_path
from curation.schemas import validate_frame


def write_table(df: pl.DataFrame, path: Path, schema: str) -> None:
    """Validate ``df`` against ``schemas/<schema>.schema.json``, then write parquet atomically."""
    validate_frame(df, schema, file=str(path))
    with atomic_path(path) as tmp:
        df.write_parquet(tmp, statistics=True)


def require_output(path: Path, *, produced_by: str) -> Path:
    """``path`` if an earlier stage wrote it, else an error naming the stage that makes it.

    ``produced_by`` is a DVC stage name such as ``annotate@gsm8k``.
    """
    if not path.is_file():
        raise InputError(f"missing; run `dvc repro {produced_by}` first", file=str(path))
    return path


def read_table(path: Path, *, produced_by: str) -> pl.DataFrame:
    """Read a table an earlier stage wrote, with a hint if it is missing or damaged."""
    try:
        return pl.read_parquet(require_output(path, produced_by=produced_by))
    except (pl.exceptions.PolarsError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(
            f"not a readable parquet table ({first}); run `dvc repro -f {produced_by}`",
            file=str(path),
        ) from None
