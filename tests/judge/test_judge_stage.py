"""Stage `judge` end to end on a small candidates file built here."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from curation.errors import InputError
from curation.io.tables import write_table
from curation.paths import candidates_path, items_path, judge_metrics_path, judged_path
from curation.schemas import conform, validate_frame, validate_records
from pipelines import judge as judge_stage
from tests.conftest import params_of
from tests.judge.conftest import candidate, judge_params, parent


def _project(root: Path, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    monkeypatch.chdir(root)
    items = [
        parent("p1"),
        parent("p2", answer="B", answer_type="choice", choices=["1", "12", "14", "7"]),
    ]
    write_table(conform(pl.DataFrame(items), "item"), items_path("toy"), "item")
    rows = [
        candidate("bf-1", status="inserted"),
        candidate("bf-2", answer="13"),  # wrong reference: the judge's 12 disagrees
        candidate("bf-3", parent_id="bf-1"),  # parent is another candidate
        candidate("bl-1", method="baseline"),
        candidate("ch-1", answer="B", answer_type="choice", parent_id="p2"),
        # choice candidate of a candidate: its choices come from the root item
        candidate("ch-2", answer="C", answer_type="choice", parent_id="ch-1"),
        candidate("bad-1", status="invalid"),
        candidate("dup-1", status="duplicate"),
        candidate("or-1", method="oracle", parent_id=None, answer=None, status="inserted"),
    ]
    rows[6]["judge_reason"] = "left alone"
    df = conform(pl.DataFrame(rows, infer_schema_length=None), "candidate")
    write_table(df, candidates_path("toy"), "candidate")
    return rows


def test_stage_end_to_end_simulated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rows = _project(tmp_path, monkeypatch)
    params = judge_params(tmp_path, backend="simulate", simulation={"false_reject_rate": 0.0})
    text = judge_stage.run(params_of(params), "toy")
    assert "[simulated]" in text and "judged 6 of 9" in text
    out = pl.read_parquet(judged_path("toy"))
    validate_frame(out, "candidate", file="judged")
    assert out.columns == conform(out, "candidate").columns
    by = {r["candidate"]: r for r in out.iter_rows(named=True)}
    assert set(by) == {r["candidate"] for r in rows}
    for name in ("bf-1", "bf-3", "bl-1", "ch-1"):
        assert by[name]["judge_correct"] is True, (name, by[name]["judge_reason"])
        assert by[name]["judge_model"] == "simulated"
        assert by[name]["judge_reason"].startswith("[simulated]")
    assert by["bf-2"]["judge_correct"] is False
    assert by["ch-2"]["judge_correct"] is False  # C vs the root's B
    # untouched: other statuses, and every status stays as BenchFill set it
    assert by["bad-1"]["judge_reason"] == "left alone" and by["bad-1"]["judge_model"] is None
    assert by["dup-1"]["judge_correct"] is None
    assert by["or-1"]["judge_model"] is None  # the oracle's reference point is not an item
    assert [r["status"] for r in out.iter_rows(named=True)] == [r["status"] for r in rows]

    metrics = json.loads(judge_metrics_path("toy").read_text())
    validate_records([metrics], "judge_metrics", file="m")
    assert (metrics["n_candidates"], metrics["n_judged"], metrics["n_passed"]) == (9, 6, 4)
    assert metrics["by_method"]["baseline"] == {"n_judged": 1, "n_passed": 1, "pass_rate": 1.0}
    assert metrics["by_method"]["benchfill"]["n_judged"] == 5
    assert metrics["reasons"] == {"incorrect": 2, "passed": 4}
    assert metrics["unjudged"] == {"unparseable": 0, "no-own-answer": 0, "undecided": 0}
    assert metrics["not_judged"] == {"duplicate": 1, "invalid": 1, "oracle": 1}
    assert metrics["checks"]["correct"] == {"true": 4, "false": 2, "null": 0}
    assert "12 requests, 0 cached" in text  # this run's state: printed, not tracked
    assert "requests" not in metrics and "cache_hits" not in metrics
    assert metrics["usage"]["stages"]["judge"]["total"]["samples"] == 12

    # rerun: nothing asked again, same table, same metrics bytes
    before, metrics_bytes = out, judge_metrics_path("toy").read_bytes()
    again = judge_stage.run(params_of(params), "toy")
    assert "0 requests, 12 cached" in again
    assert pl.read_parquet(judged_path("toy")).equals(before)
    assert judge_metrics_path("toy").read_bytes() == metrics_bytes


@pytest.mark.parametrize("edited", ["candidate", "parent"])
def test_outputs_do_not_depend_on_what_the_cache_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edited: str
):
    """A rerun after a failure finds the completion cache warm (here: from a run on an
    edited candidate, or on an edited parent item, whose candidates' solve prompts are
    unchanged), a fresh clone finds it cold; the DVC-tracked outputs must be the same
    bytes either way (the seeded judge errs often here, so a served answer shows)."""
    cold, warm = tmp_path / "cold", tmp_path / "warm"
    for root in (cold, warm):
        root.mkdir()
        _project(root, monkeypatch)
        params = judge_params(root, backend="simulate", simulation={"false_reject_rate": 0.5})
        if root == warm:
            path, id_column, row = (
                (candidates_path("toy"), "candidate", "bf-1")
                if edited == "candidate"
                else (items_path("toy"), "item", "p1")
            )
            full = pl.read_parquet(path)
            changed = full.with_columns(
                pl.when(pl.col(id_column) == row)
                .then(pl.col("question") + " (edited)")
                .otherwise(pl.col("question"))
                .alias("question")
            )
            write_table(changed, path, "candidate" if edited == "candidate" else "item")
            judge_stage.run(params_of(params), "toy")  # the failed run's work, cached
            write_table(full, path, "candidate" if edited == "candidate" else "item")  # fix
        text = judge_stage.run(params_of(params), "toy")
        if root == warm:
            assert "0 cached" not in text and "12 requests" not in text  # warm indeed
    for name in (judged_path("toy"), judge_metrics_path("toy")):
        assert (warm / name).read_bytes() == (cold / name).read_bytes(), name


def test_stage_against_the_endpoint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge_server):
    _project(tmp_path, monkeypatch)
    verdict = {"answer_correct": True, "well_posed": True, "format_kept": True, "reason": "ok"}
    solve = {"solution": "5 + 7", "answer": "12"}
    script = {n: {"solve": solve, "verdict": verdict} for n in ("bf-1", "bf-2", "bf-3", "bl-1")}
    script |= {
        n: {"solve": {"solution": "12 is B", "answer": "B"}, "verdict": verdict}
        for n in ("ch-1", "ch-2")
    }
    server, _ = judge_server(script)
    judge_stage.run(params_of(judge_params(tmp_path)), "toy")
    out = {r["candidate"]: r for r in pl.read_parquet(judged_path("toy")).iter_rows(named=True)}
    assert out["bf-1"]["judge_model"] == "test-judge" and out["bf-1"]["judge_correct"] is True
    assert out["bf-2"]["judge_correct"] is False and out["ch-2"]["judge_correct"] is False
    metrics = json.loads(judge_metrics_path("toy").read_text())
    assert metrics["backend"] == "openai" and metrics["grader_disagreements"] == 2
    assert sum(server.snapshot().requests.values()) == 12


def test_unparseable_and_answerless_verdicts_are_not_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, judge_server
):
    _project(tmp_path, monkeypatch)
    verdict = {"answer_correct": True, "well_posed": True, "format_kept": True, "reason": "ok"}
    solve = {"solution": "5 + 7", "answer": "12"}
    script = {n: {"solve": solve, "verdict": verdict} for n in ("bf-2", "bf-3", "bl-1")}
    script |= {
        n: {"solve": {"solution": "12 is B", "answer": "B"}, "verdict": verdict}
        for n in ("ch-1", "ch-2")
    }
    # bf-1 (the inserted one): never valid JSON, not even after the repair request
    script["bf-1"] = {"solve": "As an AI I think it is fine.", "solve_repair": "It is fine!"}
    # bl-1: no answer of its own, and a bare claim that the reference is correct
    script["bl-1"] = {"solve": {"solution": "trust the author", "answer": None}, "verdict": verdict}
    judge_server(script)
    text = judge_stage.run(params_of(judge_params(tmp_path)), "toy")
    out = {r["candidate"]: r for r in pl.read_parquet(judged_path("toy")).iter_rows(named=True)}
    assert out["bf-1"]["judge_reason"].startswith("unparseable judge output")
    assert out["bl-1"]["judge_correct"] is None
    metrics = json.loads(judge_metrics_path("toy").read_text())
    validate_records([metrics], "judge_metrics", file="m")
    assert metrics["unjudged"] == {"unparseable": 1, "no-own-answer": 1, "undecided": 0}
    assert metrics["n_passed"] == 2  # bf-3 and ch-1 only
    assert metrics["by_method"]["baseline"]["n_passed"] == 0
    assert metrics["reasons"]["unparseable"] == 1 and metrics["reasons"]["no-own-answer"] == 1
    assert "2 not decided (unparseable 1, no-own-answer 1)" in text


def test_missing_candidates_say_run_fill_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"run `dvc repro fill@toy` first"):
        judge_stage.run(params_of(judge_params(tmp_path, backend="simulate")), "toy")


def test_unknown_parent_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _project(tmp_path, monkeypatch)
    df = pl.read_parquet(candidates_path("toy")).with_columns(
        pl.when(pl.col("candidate") == "bl-1")
        .then(pl.lit("nope"))
        .otherwise(pl.col("parent"))
        .alias("parent")
    )
    write_table(df, candidates_path("toy"), "candidate")
    with pytest.raises(InputError, match=r"candidate bl-1: field 'parent': parent 'nope'"):
        judge_stage.run(params_of(judge_params(tmp_path, backend="simulate")), "toy")


def test_disabled_judge_copies_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    _project(tmp_path, monkeypatch)
    text = judge_stage.run(params_of(judge_params(tmp_path, enabled=False)), "toy")
    assert "copied unjudged" in text
    assert pl.read_parquet(judged_path("toy")).equals(pl.read_parquet(candidates_path("toy")))
    metrics = json.loads(judge_metrics_path("toy").read_text())
    assert metrics["enabled"] is False and metrics["n_judged"] == 0 and metrics["backend"] is None
