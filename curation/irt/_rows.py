"""Response rows as every fit takes them: columns model, item, n_trials, n_correct,
validated once (one home for the eager reader, :mod:`curation.irt._data`, and the
streaming one, :mod:`curation.irt._scan`, which falls back to it for its messages)."""

from __future__ import annotations

import numpy as np
import polars as pl

REQUIRED = ("model", "item", "n_trials", "n_correct")


def check_responses(responses: pl.DataFrame, *, name: str = "responses") -> pl.DataFrame:
    """Validate ``responses`` (columns model, item, n_trials, n_correct); return them typed:
    ids as text (categorical ids kept), counts as integers. See :func:`_validated`."""
    df = _validated(responses, name=name)
    return df.with_columns(
        pl.col(c).cast(pl.String)
        for c in ("model", "item")
        if not isinstance(df.schema[c], (pl.Categorical, pl.Enum))
    )


def _validated(responses: pl.DataFrame, *, name: str = "responses") -> pl.DataFrame:
    """Validate ``responses`` (columns model, item, n_trials, n_correct); return them typed.

    Raises ValueError naming the problem (missing columns, empty frame, nulls, counts out
    of range with an example row) because a silent coercion here would bias every fit.
    """
    if not isinstance(responses, pl.DataFrame):
        raise TypeError(f"{name} must be a polars DataFrame, got {type(responses).__name__}")
    missing = [c for c in REQUIRED if c not in responses.columns]
    if missing:
        raise ValueError(
            f"{name} is missing column(s) {missing}; need {list(REQUIRED)}, got {responses.columns}"
        )
    if responses.height == 0:
        raise ValueError(f"{name} is empty (0 rows); need at least one (model, item) cell")
    df = responses.select(REQUIRED)
    nulls = {c: n for c, n in zip(REQUIRED, df.null_count().row(0), strict=True) if n}
    if nulls:
        raise ValueError(f"{name} has null values in {nulls} (of {df.height} rows)")
    for col in ("n_trials", "n_correct"):
        dtype = df.schema[col]
        if not dtype.is_numeric():
            raise ValueError(f"{name}.{col} must be integer counts, got dtype {dtype}")
        if dtype.is_float():
            v = df.get_column(col).to_numpy()
            if not np.all(np.isfinite(v) & (v == np.round(v))):
                raise ValueError(f"{name}.{col} must hold whole numbers, got non-integers")
    # categorical and integer ids and small integer counts are kept as they are (1-4 bytes
    # a row: a leaderboard-sized frame would not fit in memory as strings and Int64)
    df = df.with_columns(
        *(
            pl.col(c).cast(pl.String)
            for c in ("model", "item")
            if not isinstance(df.schema[c], (pl.Categorical, pl.Enum, pl.String))
            and not df.schema[c].is_integer()
        ),
        *(
            pl.col(c).cast(pl.Int64)
            for c in ("n_trials", "n_correct")
            if not df.schema[c].is_integer()
        ),
    )
    bad = df.filter(
        (pl.col("n_trials") < 1)
        | (pl.col("n_correct") < 0)
        | (pl.col("n_correct") > pl.col("n_trials"))
    )
    if bad.height:
        row = bad.row(0, named=True)
        raise ValueError(
            f"{name}: {bad.height} of {df.height} rows violate n_trials >= 1 and "
            f"0 <= n_correct <= n_trials, e.g. model={str(row['model'])!r} "
            f"item={str(row['item'])!r} "
            f"n_correct={row['n_correct']} n_trials={row['n_trials']}"
        )
    return df
