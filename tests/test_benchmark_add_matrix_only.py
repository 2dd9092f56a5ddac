"""Onboarding a leaderboard is one command (issue 30 item 4): `curate benchmark add NAME
--responses M.csv` without ``--items`` writes a matrix-only entry, finds a wide file's
model column (pandas' unnamed index) and names it, creates the imports folder, and what
it writes is what `curate validate` and the stages accept. An entry written by hand
needs no folder made by hand either: the ingest stage creates it."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from curation.cli import main
from curation.params_model import read_params
from curation.simulated_leaderboard import simulate_leaderboard, write_wide_csv
from tests.stage_cli import run_stage

N_MODELS, N_ITEMS = 30, 16


def _leaderboard(root: Path, *, column: str = "", name: str = "lb.csv") -> Path:
    frame, _ = simulate_leaderboard(n_models=N_MODELS, n_items=N_ITEMS, seed=2, model_column=column)
    path = root / "incoming" / name
    path.parent.mkdir(exist_ok=True)
    write_wide_csv(frame, path)
    return path


def test_one_command_writes_a_matrix_only_entry_the_stages_accept(
    toy_project: Path, capsys: pytest.CaptureFixture[str]
):
    csv = _leaderboard(toy_project)
    assert main(["benchmark", "add", "lb", "--responses", str(csv)]) == 0
    out = capsys.readouterr().out
    assert f"lb: {N_ITEMS} items (matrix-only: no item texts; fill, judge and build skip it)" in out
    assert f"{N_MODELS * N_ITEMS} responses ({N_MODELS} models; model column ''" in out
    assert "pandas reads it as 'Unnamed: 0'" in out and "the first non-item column" in out
    spec = read_params(toy_project / "params.yaml").benchmark("lb")
    assert spec.items.texts is False
    assert spec.items.path == spec.responses.path == Path("data/raw/lb/responses.csv")
    assert spec.responses.model_column == ""
    assert (toy_project / "data/raw/lb/imports/.gitkeep").is_file()

    assert main(["validate"]) == 0
    assert f"lb: {N_ITEMS} item ids (matrix-only), {N_MODELS * N_ITEMS} responses" in (
        capsys.readouterr().out
    )
    for stage in ("ingest", "responses", "check"):
        assert run_stage([stage, "--benchmark", "lb"]) == 0, stage
    table = pl.read_parquet(toy_project / "data/responses/lb.parquet")
    assert table["model"].n_unique() == N_MODELS and table.height == N_MODELS * N_ITEMS


def test_a_named_model_column_and_a_chosen_one(toy_project: Path, capsys):
    csv = _leaderboard(toy_project, column="model_name")
    assert main(["benchmark", "add", "lb", "--responses", str(csv)]) == 0
    assert "model column 'model_name', the first non-item column" in capsys.readouterr().out
    other = _leaderboard(toy_project, column="model_name", name="lb2.csv")
    argv = ["benchmark", "add", "lb2", "--responses", str(other), "--model-column", "nope"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--model-column 'nope' is not a column" in err and "lb2.csv" in err
    assert "lb2" not in read_params(toy_project / "params.yaml").benchmarks  # nothing written
    assert not (toy_project / "data/raw/lb2").exists()
    argv[-1] = "model_name"
    assert main(argv) == 0
    assert "model column 'model_name' (--model-column)" in capsys.readouterr().out


def test_a_matrix_of_numbers_only_names_no_model_column(toy_project: Path, capsys):
    path = toy_project / "numbers.csv"
    path.write_text("0,q1,q2\n1,0,1\n2,1,1\n")  # model "names" are numbers too
    assert main(["benchmark", "add", "lb", "--responses", str(path)]) == 2
    err = capsys.readouterr().err
    assert "no model column: every column holds numbers; name it with --model-column" in err
    assert "numbers.csv" in err and "Traceback" not in err


def test_lm_eval_logs_need_items(toy_project: Path, capsys):
    logs = toy_project / "samples.jsonl"
    logs.write_text("{}\n")
    assert main(["benchmark", "add", "lb", "--responses", str(logs), "--format", "lm-eval"]) == 2
    assert "curate responses import --format lm-eval" in capsys.readouterr().err


def test_the_first_benchmark_of_an_empty_project(toy_project: Path, capsys):
    """A project whose bundled examples were removed (``benchmarks:`` empty) takes its
    first benchmark; ParamsFile alone refuses an empty ``benchmarks``."""
    text = (toy_project / "params.yaml").read_text()
    head, rest = text.split("check:", 1)
    (toy_project / "params.yaml").write_text("benchmarks:\ncheck:" + rest)
    csv = _leaderboard(toy_project)
    assert main(["benchmark", "add", "lb", "--responses", str(csv)]) == 0
    params = yaml.safe_load((toy_project / "params.yaml").read_text())
    assert list(params["benchmarks"]) == ["lb"]
    assert main(["validate", "--schema-only"]) == 0


def test_a_hand_written_entry_names_the_model_column_it_should_use(toy_project: Path, capsys):
    """The import's message for a missing model column names the one the file has."""
    csv = _leaderboard(toy_project)
    params = yaml.safe_load((toy_project / "params.yaml").read_text())
    params["benchmarks"]["lb"] = {
        "domain": "general", "license": "MIT", "source": "tests",
        "items": {"texts": False, "path": str(csv)},
        "responses": {"path": str(csv), "layout": "wide"},
    }  # fmt: skip
    (toy_project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert main(["validate"]) == 2
    err = capsys.readouterr().err
    assert "no model column 'model'" in err
    assert "the first non-item column is '' (unnamed; pandas reads it as 'Unnamed: 0')" in err
    assert "set responses.model_column to ''" in err


def test_ingest_creates_the_imports_folder_of_a_hand_written_entry(toy_project: Path, capsys):
    csv = _leaderboard(toy_project)
    params = yaml.safe_load((toy_project / "params.yaml").read_text())
    params["benchmarks"]["lb"] = {
        "domain": "general", "license": "MIT", "source": "tests",
        "items": {"texts": False, "path": str(csv)},
        "responses": {"path": str(csv), "layout": "wide", "model_column": ""},
    }  # fmt: skip
    (toy_project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert not (toy_project / "data/raw/lb").exists()
    assert run_stage(["ingest", "--benchmark", "lb"]) == 0
    assert "created data/raw/lb/imports/ (imported logs go there: commit it)" in (
        capsys.readouterr().out
    )
    assert (toy_project / "data/raw/lb/imports/.gitkeep").is_file()
    assert run_stage(["ingest", "--benchmark", "lb"]) == 0
    assert "created" not in capsys.readouterr().out  # once
