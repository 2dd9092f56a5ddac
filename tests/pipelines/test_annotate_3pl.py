"""A multiple-choice benchmark through annotate and gaps (issue 29): each item's floor
comes from its record (five listed choices: 1/5), the 3PL's outputs are written and
checked against their schemas, and the gaps stage's bootstrap refits the stored 3PL."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from curation.irt import simulate_leaderboard
from tests.stage_cli import run_stage


def _mc_project(root: Path, model: str) -> None:
    cells, _ = simulate_leaderboard(n_models=40, n_items=60, truth="3pl", seed=2)
    items = [
        {"id": item, "prompt": f"question {item}", "target": "A",
         "options": ["A", "B", "C", "D", "E"]}
        for item in cells.items
    ]  # fmt: skip
    (root / "raw" / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    rows = [
        f"{cells.models[j]},{cells.items[i]},1,{int(k)}"
        for j, i, k in zip(cells.mi, cells.ii, cells.k, strict=True)
    ]
    (root / "raw" / "responses.csv").write_text("model,item,n_trials,n_correct\n" + "\n".join(rows))
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["benchmarks"]["toy"]["items"]["fields"]["choices"] = "options"
    params["benchmarks"]["toy"]["items"]["answer_type"] = "choice"
    params["annotate"]["model"] = model
    params["gaps"]["intervals"] = {"method": "bootstrap", "replicates": 10, "seed": 0}
    (root / "params.yaml").write_text(yaml.safe_dump(params))


@pytest.mark.parametrize("model", ["3pl", "auto"])
def test_multiple_choice_benchmark_through_annotate_and_gaps(
    toy_project: Path, model: str, capsys
) -> None:
    _mc_project(toy_project, model)
    for stage in (["ingest"], ["responses"], ["annotate"]):
        assert run_stage(stage) == 0, stage
    out = capsys.readouterr().out
    metrics = json.loads((toy_project / "metrics/irt/toy.json").read_text())
    choice = metrics["choice"]
    assert set(choice["candidates"]) == {"1pl", "2pl", "3pl"} and choice["reason"]
    assert metrics["bic_3pl"] is not None
    if model == "auto":
        assert metrics["model_choice"] == "heldout" and metrics["model"] == choice["chosen"]
        assert f"model: {choice['reason']}" in out
    else:
        assert metrics["model"] == "3pl" and metrics["model_choice"] == "params"
        table = pl.read_parquet(toy_project / "data/difficulty/toy.parquet")
        assert table["model_type"].unique().to_list() == ["3pl"]
        assert table["c"].unique().to_list() == [0.2]  # 1/5 from the records
        # the floor makes items easier to the panel than their curves' steep parts
        assert (table["b"] < table["b_curve"]).mean() > 0.8
        cal = json.loads((toy_project / "data/calibration/toy.json").read_text())
        assert cal["model"] == "3pl" and cal["settings"]["new_item_floor"] == 0.2
    assert run_stage(["gaps"]) == 0  # the bootstrap reproduces the stored z
    gaps = json.loads((toy_project / "metrics/gaps.json").read_text())
    assert gaps["toy"]["intervals"]["max_gap"] is not None
