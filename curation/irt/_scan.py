"""Reading a response file straight into codes: the streaming side of :func:`encode`.

A leaderboard-sized long table (4,000 x 30,000 = 120 M rows) held with string ids costs
16 bytes per id per row before any work starts (more for names over 12 bytes), so the
file is read as a lazy scan in one streaming pass: ids become categorical codes as the
rows stream (4 bytes a row, then 1-2 after :func:`curation.irt._data._codes`) and counts
the smallest unsigned type that holds them. Valid input never takes another path; input
that breaks a rule is read again eagerly and validated by
:func:`curation.irt._rows._validated`, so its messages are exactly the eager ones.
"""

from __future__ import annotations

import polars as pl

from curation.irt._rows import REQUIRED, _validated

_COUNT = pl.UInt16
"""Counts as read (a larger count, or an invalid one, reads as null and sends the input
to the eager path, which accepts or names it)."""


def _id(schema: pl.Schema, col: str) -> pl.Expr:
    dtype = schema[col]
    if isinstance(dtype, (pl.Categorical, pl.Enum)) or dtype.is_integer():
        return pl.col(col)
    return pl.col(col).cast(pl.String).cast(pl.Categorical)


def collect_coded(lf: pl.LazyFrame, *, name: str = "responses") -> pl.DataFrame:
    """The validated columns of ``lf`` with compact types: categorical (or integer) ids,
    ``uint16`` counts; what :func:`curation.irt._rows._validated` returns for the same
    rows, without ever holding a column of per-row strings."""
    schema = lf.collect_schema()
    if any(c not in schema for c in REQUIRED) or not all(
        schema[c].is_integer() for c in ("n_trials", "n_correct")
    ):  # a message to give (missing columns) or float counts to check: the eager path
        return _validated(lf.collect(), name=name)
    df = lf.select(
        _id(schema, "model"),
        _id(schema, "item"),
        *(pl.col(c).cast(_COUNT, strict=False) for c in ("n_trials", "n_correct")),
    ).collect(engine="streaming")
    ok = df.height > 0 and not any(df.null_count().row(0))
    if ok:
        k, n = df.get_column("n_correct"), df.get_column("n_trials")
        ok = not bool(((n < 1) | (k > n)).any())
    if not ok:  # nulls, counts out of range or above uint16, an empty file: as eager
        del df
        return _validated(lf.collect(), name=name)
    return df
