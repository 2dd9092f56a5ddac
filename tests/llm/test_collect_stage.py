"""The collect stage: the switch, the simulation path, skipped code items."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from curation.errors import ConfigError
from curation.params import load_params
from curation.params_model import validate_params
from curation.schemas import validate_frame
from pipelines import ingest
from pipelines import responses as responses_stage
from tests.conftest import TOY_LONG, minimal_benchmark, params_of
from tests.llm.conftest import make_items, panel, write_project

SIM_PANEL = """
panel:
  models:
    - {name: small, model_id: sim/small, trials: 3}
    - {name: medium, model_id: sim/medium, trials: 3}
    - {name: large, model_id: sim/large, trials: 3, ability: 3.0}
collect:
  enabled: true
  backend: simulate
  seed: 123
  progress: false
llm:
  cache: .llm-cache/completions.sqlite
"""


def _enable(root: Path, extra: str = SIM_PANEL) -> dict:
    text = (root / "params.yaml").read_text() + extra
    (root / "params.yaml").write_text(text)
    return load_params(root / "params.yaml")


def test_switch_off_imports_the_bundled_responses(toy_project: Path):
    params = load_params("params.yaml")
    ingest.run(params_of(params), "toy")
    text = responses_stage.run(params_of(params), "toy")
    assert "imported" in text
    df = pl.read_parquet("data/responses/toy.parquet")
    assert set(df.select("model", "item", "n_trials", "n_correct").iter_rows()) == set(TOY_LONG)
    assert set(df["source"]) == {"imported"}
    assert pl.read_parquet("data/collect/toy.samples.parquet").height == 0
    metrics = json.loads(Path("metrics/collect/toy.json").read_text())
    assert metrics["mode"] == "imported" and metrics["usage"]["total"]["samples"] == 0
    assert metrics["n_samples"] == sum(t for *_, t, _ in TOY_LONG)


def test_switch_on_simulates_offline_and_says_so(toy_project: Path):
    params = _enable(toy_project)
    ingest.run(params_of(params), "toy")
    text = responses_stage.run(params_of(params), "toy")
    assert "[simulated]" in text and "54 samples" in text  # 6 items x 3 models x 3 trials
    responses = pl.read_parquet("data/responses/toy.parquet")
    samples = pl.read_parquet("data/collect/toy.samples.parquet")
    validate_frame(responses, "response", file="responses")
    validate_frame(samples, "sample", file="samples")
    assert set(responses["source"]) == {"simulated"} and set(samples["source"]) == {"simulated"}
    assert samples["raw_output"].str.starts_with("[simulated]").all()
    assert responses.height == 18 and (responses["n_trials"] == 3).all()
    assert set(responses["seed"]) == {123}
    metrics = json.loads(Path("metrics/collect/toy.json").read_text())
    assert metrics["mode"] == "simulated" and metrics["backend"] == "simulated"
    acc = metrics["accuracy_by_model"]
    assert acc["large"] >= acc["small"]

    # same params, same outputs (from the cache or not)
    first = responses
    Path(".llm-cache/completions.sqlite").unlink()
    for extra in ("-wal", "-shm"):
        Path(f".llm-cache/completions.sqlite{extra}").unlink(missing_ok=True)
    responses_stage.run(params_of(params), "toy")
    assert pl.read_parquet("data/responses/toy.parquet").equals(first)

    # another seed is another draw, and nothing cached under the old seed is reused
    params["collect"]["seed"] = 124
    text = responses_stage.run(params_of(params), "toy")
    assert "54 requests" in text


def test_simulation_recovers_the_ability_order(tmp_path: Path, monkeypatch):
    items = make_items(300)
    models = [
        {"name": n, "model_id": f"sim/{n}", "trials": 4, "ability": a}
        for n, a in (("a", -1.5), ("b", 0.0), ("c", 1.5))
    ]
    write_project(tmp_path, items, models=models, collect={"backend": "simulate"})
    monkeypatch.chdir(tmp_path)
    responses_stage.run(params_of(load_params("params.yaml")), "scripted")
    acc = json.loads(Path("metrics/collect/scripted.json").read_text())["accuracy_by_model"]
    assert acc["a"] < acc["b"] < acc["c"]


def test_code_items_are_skipped_with_a_warning_and_never_sent(
    tmp_path, monkeypatch, server_factory, llm_env
):
    items = make_items(6)
    for row in items[:2]:
        row.update(answer_type="code", answer=None, question=f"{row['question']} Write code.")
    server = server_factory(items)
    llm_env(server)
    write_project(tmp_path, items, models=panel(["weak"], trials=2))
    monkeypatch.chdir(tmp_path)
    text = responses_stage.run(params_of(load_params("params.yaml")), "scripted")
    assert "warning: 2 items skipped (code items need a sandbox" in text
    assert sum(server.snapshot().requests.values()) == 4 * 2  # only the 4 gradable items
    responses = pl.read_parquet("data/responses/scripted.parquet")
    assert set(responses["item"]) == {r["item"] for r in items[2:]}
    metrics = json.loads(Path("metrics/collect/scripted.json").read_text())
    assert metrics["n_items_skipped"] == 2


def test_unknown_template_and_grading_settings_fail_early(toy_project: Path):
    params = _enable(toy_project)
    ingest.run(params_of(params), "toy")
    params["panel"]["models"][0]["prompt_templates"] = {"numeric": "nope"}
    with pytest.raises(ConfigError, match="unknown prompt template 'nope'"):
        responses_stage.run(params_of(params), "toy")
    params["panel"]["models"][0]["prompt_templates"] = {}
    params["benchmarks"]["toy"]["grading"] = {"method": "regex"}
    with pytest.raises(ConfigError, match="grading.pattern"):
        responses_stage.run(params_of(params), "toy")


def test_params_snippet_for_the_lead_parses(tmp_path: Path):
    """The sections proposed for params.yaml are valid as written."""
    snippet = (Path(__file__).parent / "fixtures" / "params_llm.yaml").read_text()
    params = yaml.safe_load(snippet)
    params["benchmarks"] = {"b": minimal_benchmark("b")}
    checked = validate_params(params)

    assert checked.collect.enabled is False
    assert checked.panel is not None and len(checked.panel.models) >= 3
    assert checked.llm.cache_path.name == "completions.sqlite"
