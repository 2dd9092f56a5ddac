"""The annotate stage's difficulty table, as the subsets and build stages read it."""

from __future__ import annotations

import numpy as np
import polars as pl

from curation.errors import InputError
from curation.io.tables import read_table
from curation.paths import difficulty_path


def read_difficulty(benchmark: str) -> pl.DataFrame:
    """The annotate stage's table for ``benchmark`` (columns item, z, ... )."""
    path = difficulty_path(benchmark)
    df = read_table(path, produced_by=f"annotate@{benchmark}")
    for col in ("item", "z"):
        if col not in df.columns:
            raise InputError("required column missing", file=str(path), field=col)
    return df


def measured_z(benchmark: str) -> tuple[list[str], np.ndarray, int]:
    """(item ids, z) of the items that have a z, and how many have none."""
    df = read_difficulty(benchmark).select("item", "z")
    measured = df.filter(pl.col("z").is_not_null() & pl.col("z").is_not_nan())
    return (
        measured.get_column("item").to_list(),
        measured.get_column("z").to_numpy().astype(np.float64),
        df.height - measured.height,
    )
