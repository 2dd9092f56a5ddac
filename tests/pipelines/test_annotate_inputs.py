"""Degenerate matrices: annotate says why in one line (exit 2) and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TOY_LONG
from tests.stage_cli import run_stage

CASES = {
    "all correct": ([(m, i, 2, 2) for m, i, _, _ in TOY_LONG], "is correct: no difficulty"),
    "all wrong": ([(m, i, 2, 0) for m, i, _, _ in TOY_LONG], "is wrong: no difficulty"),
    "one model": ([r for r in TOY_LONG if r[0] == "mid"], "at least 2 models; got 1"),
    "one item": ([r for r in TOY_LONG if r[1] == "q0"], "cannot fit difficulty"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_degenerate_matrix_is_one_clear_error(toy_project: Path, case: str, capsys) -> None:
    rows, says = CASES[case]
    lines = ["model,item,n_trials,n_correct"] + [",".join(map(str, r)) for r in rows]
    (toy_project / "raw" / "responses.csv").write_text("\n".join(lines) + "\n")
    assert run_stage(["ingest"]) == 0 and run_stage(["responses"]) == 0
    capsys.readouterr()
    assert run_stage(["annotate"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: data/responses/toy.parquet: ") and says in err
    assert "\n" not in err and "Traceback" not in err
    for out in ("data/difficulty", "data/calibration", "metrics/irt", "plots/irt"):
        assert not (toy_project / out).exists(), f"{out} written by a failed annotate"


def test_two_model_panel_runs_with_loo_skipped(toy_project: Path, capsys) -> None:
    rows = [r for r in TOY_LONG if r[0] != "mid"]
    lines = ["model,item,n_trials,n_correct"] + [",".join(map(str, r)) for r in rows]
    (toy_project / "raw" / "responses.csv").write_text("\n".join(lines) + "\n")
    assert run_stage(["ingest"]) == 0 and run_stage(["responses"]) == 0
    capsys.readouterr()
    assert run_stage(["annotate"]) == 0
    out = capsys.readouterr().out
    assert "on 2 models" in out
    assert "leave-one-model-out skipped: it needs at least 3 models, the panel has 2" in out
    assert (toy_project / "data/difficulty/toy.parquet").is_file()


def test_limit_keeps_the_first_items_through_import(toy_project: Path, capsys) -> None:
    import polars as pl
    import yaml

    params = yaml.safe_load((toy_project / "params.yaml").read_text())
    params["benchmarks"]["toy"]["limit"] = 4
    (toy_project / "params.yaml").write_text(yaml.safe_dump(params))
    assert run_stage(["ingest"]) == 0
    assert "first 4 of" in capsys.readouterr().out
    assert run_stage(["responses"]) == 0
    items = pl.read_parquet(toy_project / "data/items/toy.parquet")["item"].to_list()
    cells = pl.read_parquet(toy_project / "data/responses/toy.parquet")
    assert len(items) == 4 and set(cells["item"]) == set(items)
