"""Which column of a wide response matrix names the models.

A leaderboard export is rarely headed ``model``: pandas writes its index as an unnamed
first column (read back as ``Unnamed: 0``), other tools say ``model_name`` or
``Model``. The item columns hold numbers (0/1, or success rates), so the model column
is the first column that does not: :func:`find_model_column` picks it, and the caller
says which one it took.
"""

from __future__ import annotations

import polars as pl

from curation.errors import InputError

MODEL_COLUMN = "model"
"""The default name (``responses.model_column``), taken whenever the file has it."""


def _holds_numbers_only(col: pl.Series) -> bool:
    """Every non-empty value parses as a number (an item column's shape)."""
    if col.dtype.is_numeric() or col.dtype == pl.Null:
        return True
    if col.dtype != pl.String:
        return False
    text = col.str.strip_chars()
    text = text.set(text == "", None)
    return bool(text.cast(pl.Float64, strict=False).null_count() == text.null_count())


def find_model_column(df: pl.DataFrame) -> str | None:
    """``model`` if the file has it, else the first column that does not hold numbers
    only (None when every column does: the models cannot be told from the items)."""
    if MODEL_COLUMN in df.columns:
        return MODEL_COLUMN
    return next((c for c in df.columns if not _holds_numbers_only(df.get_column(c))), None)


def describe_column(name: str) -> str:
    """A column name as a message shows it: quoted, and an empty (pandas index) header
    named for what pandas calls it."""
    return repr(name) if name else "'' (unnamed; pandas reads it as 'Unnamed: 0')"


def require_model_column(df: pl.DataFrame, column: str, *, file: str) -> None:
    """A wide file without its configured model ``column`` is an error that names the
    column it does have (checked before the items: else the model column reads as an
    item, and the message is about an item)."""
    if column in df.columns:
        return
    found = find_model_column(df)
    hint = (
        f"; the first non-item column is {describe_column(found)}: set "
        f"responses.model_column to {found!r}"
        if found is not None
        else "; set responses.model_column"
    )
    raise InputError(
        f"no model column {column!r} (columns start {df.columns[:3]}){hint}",
        file=file,
        record="header",
        field=column,
    )


__all__ = ["MODEL_COLUMN", "describe_column", "find_model_column", "require_model_column"]
