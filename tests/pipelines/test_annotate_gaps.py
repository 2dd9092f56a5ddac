"""The annotate and gaps stages end to end on simulated responses from known parameters."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from curation.cli import main
from curation.irt import Calibration, simulate_responses
from curation.measure import ddm, max_gap
from tests.stage_cli import run_stage

PARAMS = """\
benchmarks:
  sim:
    domain: math
    license: MIT
    source: simulated in tests
    items:
      path: raw/items.jsonl
      answer_type: numeric
    responses:
      path: raw/responses.parquet
      layout: long
annotate:
  model: auto
  loo: true
  laplace_draws: 200
gaps:
  targets: [uniform]
"""


@pytest.fixture(scope="module")
def sim_project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("sim")
    responses, truth = simulate_responses(n_models=12, n_items=300, n_trials=8, seed=7)
    (root / "raw").mkdir()
    responses.write_parquet(root / "raw" / "responses.parquet")
    items = sorted(responses["item"].unique().to_list())
    (root / "raw" / "items.jsonl").write_text(
        "".join(json.dumps({"item": i, "question": f"q {i}", "answer": "1"}) + "\n" for i in items)
    )
    (root / "params.yaml").write_text(PARAMS)
    return root, truth


@pytest.fixture
def ran(sim_project, monkeypatch):
    root, truth = sim_project
    monkeypatch.chdir(root)
    if not (root / "metrics" / "gaps.json").exists():
        for cmd in (["ingest"], ["responses"], ["annotate"], ["gaps"]):
            assert run_stage(cmd) == 0, cmd
    return root, truth


def test_annotate_recovers_difficulty_and_stores_its_calibration(ran):
    root, truth = ran
    table = pl.read_parquet(root / "data" / "difficulty" / "sim.parquet")
    assert table.height == 300
    assert set(table["method"]) == {"map"} and set(table["model_type"]) == {"1pl"}
    b_true = dict(zip(truth["items"], truth["b"], strict=True))
    r = np.corrcoef(table["b"].to_numpy(), [b_true[i] for i in table["item"]])[0, 1]
    assert r > 0.95
    cal = Calibration.load(root / "data" / "calibration" / "sim.json")
    assert np.allclose(cal.to_z(table["b"].to_numpy()), table["z"].to_numpy())
    assert (table["z_low"] <= table["z"]).all() and (table["z"] <= table["z_high"]).all()
    with np.load(root / "data" / "difficulty" / "sim.draws.npz") as draws:
        assert draws["b"].shape == (200, 300)
        assert list(draws["items"]) == table["item"].to_list()
        assert str(draws["source"]) == "laplace"
    metrics = json.loads((root / "metrics" / "irt" / "sim.json").read_text())
    assert metrics["bic_choice"] == "1pl" and metrics["loo"]["max_abs_dz"] >= 0


def test_gaps_metrics_match_the_measure_library(ran):
    root, _ = ran
    z = pl.read_parquet(root / "data" / "difficulty" / "sim.parquet")["z"].to_numpy()
    metrics = json.loads((root / "metrics" / "gaps.json").read_text())["sim"]
    # written to 10 significant digits (curation.io.precision)
    assert metrics["ddm"]["uniform"] == pytest.approx(ddm(z), rel=1e-9, abs=0)
    assert metrics["max_gap"] == pytest.approx(max_gap(z), rel=1e-9, abs=0)
    iv = metrics["intervals"]
    assert iv["method"] == "bootstrap" and iv["n_draws"] == 200
    for name in ("ddm", "max_gap", "top_3_sum", "top_5_sum"):
        assert iv[name]["low"] <= iv[name]["estimate"] <= iv[name]["high"], name
    # The gap metrics' lattice bias is removed: estimates below the plug-in values.
    assert iv["max_gap"]["estimate"] <= metrics["max_gap"] + 1e-12
    assert iv["top_5_sum"]["estimate"] <= metrics["top_5_sum"] + 1e-12
    res = metrics["resolution"]
    assert res["n_levels"] == len(np.unique(np.round(z, 9)))
    assert res["n_clipped_low"] == int(np.sum(z == 0)) and res["panel"]["span"] > 0
    report = (root / "reports" / "gaps.md").read_text()
    assert "sim" in report and "Rank certificates" in report
    assert "parametric bootstrap" in report and "## Resolution and anchoring" in report
    # No point outside its own interval anywhere in the report ("x [low, high]").
    brackets = re.findall(r"(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]", report)
    assert len(brackets) >= 4
    assert all(float(lo) <= float(x) <= float(hi) for x, lo, hi in brackets)
    html = (root / "reports" / "gaps.html").read_text()
    assert "<script" not in html and "http" not in html.split("<body>")[1]
    assert (root / "plots" / "gaps" / "sim-ecdf.png").stat().st_size > 5000
    grid = pl.read_csv(root / "plots" / "gaps-data" / "ecdf.csv")
    assert grid.columns == ["z", "uniform", "sim"] and grid["sim"].is_sorted()


def test_gaps_with_laplace_draws_says_so(ran, tmp_path, monkeypatch):
    """``gaps.intervals.method: draws`` uses the annotate stage's Laplace draws, labelled."""
    import shutil

    root, _ = ran
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    monkeypatch.chdir(copy)
    params = (
        (copy / "params.yaml")
        .read_text()
        .replace("gaps:\n", "gaps:\n  intervals: {method: draws}\n")
    )
    (copy / "params.yaml").write_text(params)
    assert run_stage(["gaps"]) == 0
    metrics = json.loads((copy / "metrics" / "gaps.json").read_text())["sim"]
    assert metrics["intervals"]["method"] == "laplace"
    report = (copy / "reports" / "gaps.md").read_text()
    assert "Laplace draws" in report, "MAP intervals are not called posterior intervals"


def test_a_partial_thresholds_section_validates_and_the_stage_runs(
    ran, tmp_path, monkeypatch, capsys
):
    """Reproduced on main (issue 27): ``gaps: {thresholds: {ddm: 0.2}}`` passed `curate
    validate` with "OK", then the gaps stage died with KeyError 'max_gap' (exit 3). Keys
    left out of a nested section keep their defaults, in validate and in the stage alike."""
    import shutil

    root, _ = ran
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    monkeypatch.chdir(copy)
    params = (copy / "params.yaml").read_text()
    params = params.replace(
        "gaps:\n", "gaps:\n  thresholds: {ddm: 0.2}\n  intervals: {method: none}\n"
    )
    (copy / "params.yaml").write_text(params)
    capsys.readouterr()
    assert main(["validate"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "params.yaml: OK"
    assert run_stage(["gaps"]) == 0
    report = (copy / "reports" / "gaps.md").read_text()
    assert "(DDM ≥ 0.20, Max Gap ≥ 0.10 or Top-5 Sum ≥ 0.30)" in report
    metrics = json.loads((copy / "metrics" / "gaps.json").read_text())["sim"]
    assert metrics["flags"]["ddm"] is (metrics["ddm"]["uniform"] >= 0.2)


def test_progress_test_detects_a_clearly_better_model(ran, capsys):
    root, truth = ran
    scores = (
        pl.read_parquet(root / "data" / "responses" / "sim.parquet")
        .group_by("model")
        .agg(pl.col("n_correct").sum())
        .sort("n_correct")
    )
    weak, strong = scores["model"][0], scores["model"][-1]
    assert (
        main(
            [
                "progress-test",
                "-b",
                "sim",
                "--model-a",
                weak,
                "--model-b",
                strong,
                "--permutations",
                "999",
                "--out",
                "metrics/progress.json",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "one-sided p-value" in out
    result = json.loads((root / "metrics" / "progress.json").read_text())
    assert result["p_value"] <= 0.002 and result["mean_diff"] > 0
    assert (
        main(
            [
                "progress-test",
                "-b",
                "sim",
                "--model-a",
                strong,
                "--model-b",
                weak,
                "--permutations",
                "999",
                "--out",
                "metrics/progress.json",
            ]
        )
        == 0
    )
    assert json.loads((root / "metrics" / "progress.json").read_text())["p_value"] > 0.5


def test_progress_test_names_an_unknown_model(ran, capsys):
    assert main(["progress-test", "-b", "sim", "--model-a", "nope", "--model-b", "x"]) == 2
    assert "no responses of model 'nope'" in capsys.readouterr().err


def test_power_command_prints_both_curves_and_a_plot(ran, capsys):
    root, _ = ran
    assert main(["power", "-b", "sim", "--sims", "60", "--repeats", "1", "16"]) == 0
    out = capsys.readouterr().out
    assert "(blind)" in out and "(touches items)" in out
    assert (root / "plots" / "power" / "sim.png").is_file()


def test_summary_shows_intervals_resolution_and_anchoring(ran, capsys):
    root, _ = ran
    assert main(["summary"]) == 0
    out = capsys.readouterr().out
    metrics = json.loads((root / "metrics" / "gaps.json").read_text())["sim"]
    res, iv = metrics["resolution"], metrics["intervals"]["max_gap"]
    assert "Resolution and anchoring" in out and "z levels" in out and "panel θ span" in out
    block = out.split("Resolution and anchoring", 1)[1]
    row = next(line for line in block.splitlines() if line.startswith("sim "))
    assert f" {res['n_levels']} " in row and f"{res['n_clipped_low']} (" in row
    assert f"{iv['estimate']:.3f} [{iv['low']:.3f}, {iv['high']:.3f}]" in out
