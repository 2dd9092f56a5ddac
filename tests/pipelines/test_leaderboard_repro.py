"""A leaderboard through real DVC (issue 30): one `curate benchmark add` (an unnamed model
column, no items), a second task's entry written by hand (no imports folder made), one
`dvc repro`. The budgets that keep a leaderboard's stages in seconds are set small so
this small matrix takes every capped path: the gaps bootstrap cut by
``max_refit_cells`` (with its Monte Carlo error), MIRT's d chosen on a sample of the
models, the subsets' validation scoring a sample of the held-out models; and with more
than ``LISTED_MODELS`` models the MIRT report lists the extremes and the HTML page every
model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from curation.report.panel import LISTED_MODELS, SHOWN_EXTREMES
from curation.simulated_leaderboard import simulate_leaderboard, write_wide_csv
from tests.pipelines._dvc import curate, dvc, ran

N_MODELS = LISTED_MODELS + 10


@pytest.mark.long(seconds=240)
def test_a_leaderboard_onboarded_and_reproduced(repo: Path, tmp_path: Path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    lb, truth = simulate_leaderboard(n_models=N_MODELS, n_items=14, seed=5, model_column="")
    write_wide_csv(lb, incoming / "lb.csv")
    lb2, _ = simulate_leaderboard(n_models=N_MODELS, n_items=10, seed=5, task=1, item_prefix="r")
    raw2 = repo / "raw-lb2.csv"
    write_wide_csv(lb2, raw2)

    proc = curate(repo, "benchmark", "add", "lb", "--responses", str(incoming / "lb.csv"))
    assert "matrix-only" in proc.stdout and "model column ''" in proc.stdout
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["benchmarks"]["lb2"] = {  # by hand: no data/raw/lb2/imports
        "domain": "general", "license": "MIT", "source": "tests",
        "items": {"texts": False, "path": "raw-lb2.csv"},
        "responses": {"path": "raw-lb2.csv", "layout": "wide"},
    }  # fmt: skip
    params["gaps"]["intervals"] = {"max_refit_cells": 2000}
    params["mirt"].update(benchmarks=["lb", "lb2"], selection_max_cells=600)
    params["subsets"]["estimation"] = {"max_test_models": 12, "random_draws": 3}
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert not (repo / "data/raw/lb2").exists()

    out = dvc(repo, "repro")
    stages = ran(out)
    assert {"ingest@lb", "responses@lb2", "annotate@lb2", "gaps", "subsets@lb", "mirt"} <= stages
    assert (repo / "data/raw/lb2/imports/.gitkeep").is_file()  # made by ingest@lb2

    gaps = json.loads((repo / "metrics/gaps.json").read_text())["lb"]["intervals"]
    assert gaps["replicates_requested"] == 200 and gaps["n_draws"] == 10
    assert 0 < gaps["monte_carlo_se"] < 0.5
    assert "10 of 200 replicates (max_refit_cells)" in (repo / "reports/gaps.md").read_text()

    mirt = json.loads((repo / "metrics/mirt.json").read_text())
    assert mirt["n_models"] == N_MODELS
    assert mirt["selection_sample"]["max_cells"] == 600
    assert 2 <= mirt["selection_sample"]["models"] < N_MODELS
    report = (repo / "reports/mirt.md").read_text()
    assert "**Chosen on a sample:**" in report
    assert f"… {N_MODELS - 2 * SHOWN_EXTREMES} more" in report  # the extremes, not every model
    page = (repo / "reports/mirt-models.html").read_text()
    assert 'class="table-search"' in page
    assert all(name in page for name in truth.models)  # every model, searchable

    subsets = json.loads((repo / "metrics/subsets/lb.json").read_text())
    blocks = [s["estimation"] for s in subsets["subsets"].values()]
    assert blocks and all(b["sampled"] == {**b["sampled"], "scored": 12, "of": N_MODELS}
                          for b in blocks)  # fmt: skip
    assert all(b["n_models"] == 12 and b["sampled"]["mae_se_pp"] > 0 for b in blocks)

    assert "Data and pipelines are up to date" in dvc(repo, "repro")
