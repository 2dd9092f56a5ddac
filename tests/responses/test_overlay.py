"""Imports folder: one file per model, what changed said per model, name clashes refused."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from curation.errors import InputError
from curation.responses import read_imports, write_imports
from curation.schemas import conform


def _table(models: list[str], items: list[str]) -> pl.DataFrame:
    rows = [(m, i, 1, int(k % 2)) for k, (m, i) in enumerate((m, i) for m in models for i in items)]
    df = pl.DataFrame(rows, schema=["model", "item", "n_trials", "n_correct"], orient="row")
    return conform(df.with_columns(benchmark=pl.lit("b"), source=pl.lit("imported")), "response")


def test_each_model_gets_its_file_and_a_line(tmp_path: Path):
    current = _table(["old"], ["q0", "q1"])
    table = _table(["old", "org/new"], ["q0", "q1", "q2"])
    lines = write_imports(table, "b", current=current, replace_all=False, folder=tmp_path)
    assert lines == [
        "model 'old' was already in the matrix: its 2 cells are replaced by 3 imported cells",
        "model 'org/new' added: 3 cells",
    ]
    assert sorted(p.name for p in tmp_path.glob("*.parquet")) == ["old.parquet", "org_new.parquet"]
    back = read_imports("b", known_items=["q0", "q1", "q2"], items_file="items", folder=tmp_path)
    assert back is not None
    assert set(back.iter_rows()) == set(table.iter_rows())


def test_models_that_would_share_a_file_are_refused(tmp_path: Path):
    table = _table(["org/m", "org_m"], ["q0"])
    with pytest.raises(InputError, match="'org/m' and 'org_m' would share the file org_m.parquet"):
        write_imports(table, "b", current=None, replace_all=False, folder=tmp_path)
    assert not list(tmp_path.glob("*.parquet"))
