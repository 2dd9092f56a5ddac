"""Reading a stage's table: a missing or damaged file is one InputError naming it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from curation.errors import InputError
from curation.io.tables import read_table, write_table
from curation.irt import Calibration
from curation.schemas import conform


def test_round_trip(tmp_path: Path) -> None:
    df = conform(
        pl.DataFrame(
            {"benchmark": ["b"], "model": ["m"], "item": ["i"], "n_trials": [1], "n_correct": [1]}
        ).with_columns(pl.lit("imported").alias("source")),
        "response",
    )
    write_table(df, tmp_path / "r.parquet", "response")
    assert read_table(tmp_path / "r.parquet", produced_by="responses@x").equals(df)


def test_missing_names_the_stage(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"r.parquet: missing; run `dvc repro responses@x`"):
        read_table(tmp_path / "r.parquet", produced_by="responses@x")


def test_corrupt_parquet_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(InputError) as err:
        read_table(path, produced_by="responses@x")
    assert str(err.value).startswith(f"{path}: not a readable parquet table")
    assert "dvc repro -f responses@x" in str(err.value)


@pytest.mark.parametrize("text", ["{not json", "[]", '{"format": "other"}', "\xff\xfe"])
def test_damaged_calibration_is_an_input_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "c.json"
    path.write_text(text, encoding="latin-1")
    with pytest.raises(InputError, match="not a readable calibration"):
        Calibration.load(path)
