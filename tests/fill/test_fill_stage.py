"""The fill stage offline (simulation) on the toy project: outputs, oracle, rerun, judge."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
import yaml

from curation.fill import oracle_insertions, top_k_reduction
from curation.io.precision import round_floats, round_frame
from curation.params import load_params
from curation.paths import fill_journal_dir
from curation.schemas import validate_frame, validate_records
from pipelines import fill
from tests.conftest import copy_project, params_of

FILL = {"seed": 7, "insertions": 2, "rounds": 2, "parents": 2, "children": 2}
CALIBRATE = {
    "seed": 7,
    "tolerance": 0.05,
    "adaptive": {"first_batch": 4, "batch": 4, "max_trials": 16, "se_accept": 0.15},
}


@pytest.fixture
def project(annotated_toy, tmp_path, monkeypatch):
    """A private copy of the annotated toy project, made the working directory."""
    copy_project(annotated_toy, tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _set_fill(root, **over):
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["fill"] = {**FILL, **over}
    params["calibrate"] = CALIBRATE
    (root / "params.yaml").write_text(yaml.safe_dump(params))
    return load_params(root / "params.yaml")


def _outputs(root):
    cands = pl.read_parquet(root / "data/fill/toy/candidates.parquet")
    metrics = json.loads((root / "metrics/fill/toy.json").read_text())
    return cands, metrics


@pytest.mark.long(seconds=25)
def test_offline_fill_writes_everything_and_resumes(project):
    params = _set_fill(project)
    text = fill.run(params_of(params), "toy")
    assert text.startswith("toy [simulated]: BenchFill")
    cands, metrics = _outputs(project)
    validate_frame(cands, "candidate", file="candidates")
    validate_records([metrics], "fill_metrics", file="metrics")
    memory = pl.read_parquet(project / "data/fill/toy/memory.parquet")
    validate_frame(memory, "fill_memory", file="memory")
    assert (project / "plots/fill/toy.png").stat().st_size > 0

    assert set(cands["source"]) == {"simulated"}  # simulated records say so
    searched = cands.filter(pl.col("method") != "oracle")
    assert set(searched["rewriter_model"]) == {"simulated"}
    items = pl.read_parquet(project / "data/items/toy.parquet")
    answers = dict(zip(items["item"], items["answer"], strict=True))
    for row in searched.iter_rows(named=True):
        assert row["question"].startswith("[simulated rewrite of ")
        root = json.loads(row["lineage"])["parents"][0]
        assert row["answer"] == answers[root]  # the parent's answer, kept
        assert row["calibration"] == "data/calibration/toy.json"
    assert set(cands["method"]) == {"benchfill", "baseline", "oracle"}
    bf = metrics["methods"]["benchfill"]
    assert bf["n_inserted"] == 2 and bf["true_target_dev"] is not None
    assert bf["rewriter_calls"] == metrics["methods"]["baseline"]["rewriter_calls"]  # same budget
    assert cands.filter(pl.col("selected"))["status"].unique().to_list() == ["inserted"]
    # memory: the benchmark, then every calibrated child
    calibrated = searched.filter(pl.col("z").is_not_null())
    assert memory.height == 6 + calibrated.height

    # the oracle is the closed form on the benchmark's z
    z = pl.read_parquet(project / "data/difficulty/toy.parquet")["z"].to_numpy()
    targets = oracle_insertions(z, insertions=2)
    oracle = cands.filter(pl.col("method") == "oracle")
    assert oracle["z"].to_list() == pytest.approx([t.z for t in targets])
    after = np.concatenate([z, [t.z for t in targets]])
    assert metrics["methods"]["oracle"]["top_3_reduction_pct"] == pytest.approx(
        top_k_reduction(z, after, 3), abs=1e-4
    )

    # a rerun replays the journal: same outputs, no call
    again = fill.run(params_of(params), "toy")
    assert "(resumed)" in again
    cands2, metrics2 = _outputs(project)
    assert cands2.equals(cands)
    assert "this run: 0 calls, 0 cached" in again
    # the committed metrics do not depend on the resumption (bookkeeping is printed only)
    assert metrics2 == metrics
    assert "run" not in metrics

    # the journal lives outside the output folder, which holds this run's files alone
    assert sorted(p.name for p in (project / "data/fill/toy").iterdir()) == [
        "candidates.parquet",
        "memory.parquet",
    ]
    # without the journal, every call comes from the completion cache: same outputs again
    (project / fill_journal_dir("toy") / "journal.jsonl").unlink()
    third = fill.run(params_of(params), "toy")
    cands3, metrics3 = _outputs(project)
    assert cands3.equals(cands)
    assert metrics3 == metrics
    assert "this run: 0 calls," in third and "(resumed)" not in third

    # changed params: the old journal is set aside, the search starts again
    params = _set_fill(project, seed=8)
    assert "journal was set aside" in fill.run(params_of(params), "toy")
    # nothing of a search stays in the DVC output folder (a fresh clone has none)
    assert sorted(p.name for p in (project / "data/fill/toy").iterdir()) == [
        "candidates.parquet",
        "memory.parquet",
    ]


def test_judge_hook_rejects_and_fills_verdict_columns(project):
    params = _set_fill(
        project, judge="fill_fixtures:make_judge", baseline=False, oracle=False, insertions=1
    )
    fill.run(params_of(params), "toy")
    cands, metrics = _outputs(project)
    judged = cands.filter(pl.col("judge_model").is_not_null())
    assert judged.height == cands.filter(pl.col("status") != "invalid").height > 0
    rejected = cands.filter(pl.col("status") == "judge-rejected")
    assert rejected.height > 0
    assert set(rejected["judge_well_posed"]) == {False}
    assert all(r.startswith("judge: ambiguous") for r in rejected["status_reason"])
    assert rejected["n_trials"].sum() == 0  # the panel is never paid for a rejected child
    passed = cands.filter(pl.col("status").is_in(["calibrated", "inserted"]))
    assert set(passed["judge_correct"]) == {True} and set(passed["judge_model"]) == {"test-judge"}
    assert set(metrics["methods"]) == {"benchfill"}


def _without_tokens(value):
    """``value`` with every token count dropped (the direct draws make no prompts)."""
    if isinstance(value, dict):
        return {k: _without_tokens(v) for k, v in value.items() if k not in ("cost", "tokens")}
    if isinstance(value, list):
        return [_without_tokens(v) for v in value]
    return value


@pytest.mark.long(seconds=25)
def test_the_stage_s_direct_panel_draws_equal_the_call_path(project, tmp_path):
    """The stage draws the simulated panel directly; through the real call path (prompts,
    cache, grading of simulated text) every candidate, count and figure is the same."""
    import asyncio

    from curation.calibrate import panel_setup
    from curation.fill import afill
    from curation.llm import CompletionCache
    from curation.paths import difficulty_path, items_path

    params = _set_fill(project)
    fill.run(params_of(params), "toy")
    direct, direct_metrics = _outputs(project)
    validated = params_of(params)
    settings = validated.fill
    setup = panel_setup("toy", params=validated)

    async def through_calls():
        with CompletionCache(tmp_path / "cache.sqlite") as cache:
            result = await afill(
                benchmark="toy",
                items=pl.read_parquet(project / items_path("toy")),
                difficulty=pl.read_parquet(project / difficulty_path("toy")),
                setup=setup,
                settings=settings,
                cache=cache,
                workdir=tmp_path / "fill",
                direct_panel=False,
            )
            return result, len(cache)

    result, rows = asyncio.run(through_calls())
    assert result.run.requests > rows / 2 > 0  # the panel really was asked, and cached
    called = round_frame(result.candidates)  # as the stage writes it
    assert called.drop("lineage").equals(direct.drop("lineage"))
    for a, b in zip(called["lineage"], direct["lineage"], strict=True):
        assert _without_tokens(json.loads(a)) == _without_tokens(json.loads(b))
    written = json.loads(json.dumps(round_floats(result.metrics)))  # as the stage writes it
    assert _without_tokens(written) == _without_tokens(direct_metrics)
    assert direct_metrics["methods"]["benchfill"]["tokens"]["panel_prompt"] == 0
    assert written["methods"]["benchfill"]["tokens"]["panel_prompt"] > 0
