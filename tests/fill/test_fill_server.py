"""BenchFill against a local OpenAI-compatible server: the real protocol, and kill -9."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
from fill_fixtures import (
    API_KEY,
    API_KEY_ENV,
    BASE_URL_ENV,
    BENCH,
    answer,
    true_z,
    write_project,
)

from curation.params import load_params
from curation.paths import fill_journal_dir
from curation.schemas import validate_frame
from pipelines import fill
from tests.conftest import REPO, params_of
from tests.llm.fake_openai_server import FakeOpenAIServer, request_key

_RUN = (
    "from curation.params_model import read_params\n"
    "from pipelines import fill\n"
    f"print(fill.run(read_params('params.yaml'), {BENCH!r}))\n"
)


@pytest.fixture
def server():
    srv = FakeOpenAIServer(answer, api_key=API_KEY).start()
    yield srv
    srv.stop()


def _env(server: FakeOpenAIServer) -> dict[str, str]:
    return {BASE_URL_ENV: server.base_url, API_KEY_ENV: API_KEY, "TQDM_DISABLE": "1"}


def test_one_round_writes_valid_calibrated_candidates(tmp_path, monkeypatch, server):
    write_project(
        tmp_path,
        fill={
            "insertions": 1,
            "rounds": 1,
            "parents": 3,
            "children": 4,
            "baseline": False,
        },
        calibrate={
            "tolerance": 0.0,  # never "on target": every child is fully decided
            "adaptive": {"first_batch": 4, "batch": 4, "max_trials": 16, "se_accept": 0.05},
        },
    )
    for k, v in _env(server).items():
        monkeypatch.setenv(k, v)
    monkeypatch.chdir(tmp_path)
    text = fill.run(params_of(load_params("params.yaml")), BENCH)
    assert "BenchFill 1/1 inserted" in text

    cands = pl.read_parquet(tmp_path / "data/fill" / BENCH / "candidates.parquet")
    validate_frame(cands, "candidate", file="candidates")
    bf = cands.filter(pl.col("method") == "benchfill")
    assert bf.height == 12  # 3 parents x 4 children, one round
    assert set(bf["source"]) == {"collected"}
    assert set(bf["rewriter_model"]) == {"rewriter"}
    assert set(bf["parent"]) == {"q2", "q3", "q1"}  # closest to z* = 0.45
    assert (bf["target_z"] - 0.45).abs().max() < 1e-12
    statuses = set(bf["status"])
    assert {"invalid", "duplicate"} <= statuses  # scripted failures are caught
    assert "inserted" in statuses
    for row in bf.iter_rows(named=True):
        assert len(row["prompt_hash"]) == 64
        assert row["judge_correct"] is None and row["judge_model"] is None  # no judge
        lineage = json.loads(row["lineage"])
        assert lineage["cost"]["rewriter_calls"] == 1
        if row["status"] == "invalid":
            assert row["status_reason"].startswith("unparseable rewrite")
            assert row["n_trials"] == 0 and row["z"] is None
        if row["status"] == "duplicate":
            assert row["status_reason"].startswith("same question as q")
        if row["status"] in ("calibrated", "inserted"):
            panel = json.loads(row["panel"])
            assert set(panel) == {"weak", "mid", "strong", "top"}
            assert sum(n for _, n in panel.values()) == row["n_trials"]
            assert sum(k for k, _ in panel.values()) == row["n_correct"]
            # an inserted child's counts are its confirmation's (fresh trials); the
            # search's are kept in the lineage, and the cost is both
            searched = (lineage.get("selection") or {}).get("n_trials", 0)
            assert row["n_trials"] + searched == lineage["cost"]["panel_trials"] > 0
            if row["status"] == "inserted":
                assert lineage["confirmation"]["cost"]["panel_trials"] == row["n_trials"] > 0
                assert lineage["confirmation"]["first_sample"] >= lineage["trials_per_model"]
            assert row["calibration"] == f"data/calibration/{BENCH}.json"
            assert 0 <= row["z_low"] <= row["z"] <= row["z_high"] <= 1
            child = row["question"].split("]")[0].removeprefix("[child ")
            # the panel's success rates put the child at a known difficulty
            se_z = lineage["se_z"]
            assert abs(row["z"] - true_z(child)) < 4 * se_z + 0.02, (row, true_z(child))
    inserted = bf.filter(pl.col("status") == "inserted")
    assert inserted.height == 1 and inserted["selected"].to_list() == [True]
    # chosen by the estimate it had in the search: the smallest expected squared
    # deviation (z - z*)^2 + SE(z)^2, children on target first
    rows = []
    for r in bf.filter(pl.col("z").is_not_null()).iter_rows(named=True):
        lin = json.loads(r["lineage"])
        sel = lin.get("selection") or {
            "z": r["z"],
            "se_z": lin["se_z"],
            "decision": lin["decision"],
        }
        rows.append((r["candidate"], sel["z"], sel["se_z"], sel["decision"]))
    pool = [x for x in rows if x[3] == "accepted"] or [
        x for x in rows if x[3] in ("accepted", "measured", "budget")
    ]
    best = min(pool, key=lambda x: ((x[1] - 0.45) ** 2 + x[2] ** 2, x[0]))
    assert inserted["candidate"][0] == best[0]

    metrics = json.loads((tmp_path / "metrics/fill" / f"{BENCH}.json").read_text())
    m = metrics["methods"]["benchfill"]
    assert metrics["source"] == "collected" and metrics["panel_size"] == 4
    assert m["rewriter_calls"] == 12
    n_invalid, n_dup = (int((bf["status"] == s).sum()) for s in ("invalid", "duplicate"))
    assert m["failure_reasons"]["unparseable rewrite: no JSON object in the output"] == n_invalid
    assert m["failure_reasons"]["same question"] == n_dup
    searched = sum((json.loads(x).get("selection") or {}).get("n_trials", 0) for x in bf["lineage"])
    assert m["panel_trials"] == int(bf["n_trials"].sum()) + searched
    assert m["tokens"]["total"] > 0
    assert f"this run: {12 + m['panel_trials']} calls, 0 cached" in text
    oracle = cands.filter(pl.col("method") == "oracle")
    assert oracle["z"].to_list() == [pytest.approx(0.45)] and oracle["parent"].to_list() == [None]
    assert (tmp_path / "plots/fill" / f"{BENCH}.png").stat().st_size > 0


def _committed_server_keys(cache: Path) -> set[str]:
    con = sqlite3.connect(cache)
    try:
        rows = con.execute("SELECT request FROM completions").fetchall()
    finally:
        con.close()
    keys = set()
    for (text,) in rows:
        req = json.loads(text)
        body = {
            "model": req["model_id"],
            "messages": [{"role": r, "content": c} for r, c in req["messages"]],
        }
        keys.add(request_key(body, req["sample"]))
    return keys


_SEARCH = {
    "insertions": 2,
    "rounds": 2,
    "parents": 2,
    "children": 2,
    "refine": {"finalists": 2, "batch": 2, "max_trials": 4, "screen_trials": 4},  # resumed too
}
_MEASURE = {
    "tolerance": 0.0,  # never on target: every round of every insertion runs
    "adaptive": {"first_batch": 2, "batch": 2, "max_trials": 6, "se_accept": 0.01},
}


def _journal_rounds(path: Path) -> list[str]:
    if not path.is_file():
        return []
    return [ln for ln in path.read_text().splitlines(keepends=True) if '"kind": "round"' in ln]


@pytest.mark.long(seconds=60)
def test_kill_9_mid_search_then_resume(tmp_path, monkeypatch):
    # reference: an uninterrupted run (in-process) against its own server
    ref_dir, run_dir = tmp_path / "ref", tmp_path / "run"
    ref_dir.mkdir()
    run_dir.mkdir()
    for root in (ref_dir, run_dir):
        write_project(root, fill=_SEARCH, calibrate=_MEASURE)
    with FakeOpenAIServer(answer, api_key=API_KEY) as ref_server, monkeypatch.context() as mp:
        for k, v in _env(ref_server).items():
            mp.setenv(k, v)
        mp.chdir(ref_dir)
        fill.run(params_of(load_params("params.yaml")), BENCH)
    journal = run_dir / fill_journal_dir(BENCH) / "journal.jsonl"
    total_rounds = len(_journal_rounds(ref_dir / fill_journal_dir(BENCH) / "journal.jsonl"))
    assert total_rounds >= 8  # 2 insertions x 2 rounds (BenchFill) + baseline rounds

    with FakeOpenAIServer(answer, api_key=API_KEY, latency_s=0.005) as server:
        env = {**os.environ, **_env(server), "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen(
            [sys.executable, "-c", _RUN],
            cwd=run_dir,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while len(_journal_rounds(journal)) < 3 and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.005)
        time.sleep(0.05)  # into the next round
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = _journal_rounds(journal)
        assert 3 <= len(before) < total_rounds, "killed too late to test a resume"
        committed = _committed_server_keys(run_dir / ".llm-cache/completions.sqlite")
        assert committed
        answered_before = server.snapshot().answered

        done = subprocess.run(
            [sys.executable, "-c", _RUN], cwd=run_dir, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        assert "(resumed)" in done.stdout
        answered = server.snapshot().answered
    # no call whose answer was committed before the kill was asked again
    again = [k for k in committed if answered[k] > 1]
    assert not again, f"{len(again)} committed calls were repeated"
    # the rerun asked only for what was missing
    assert sum(answered.values()) - sum(answered_before.values()) > 0
    # finished rounds are kept, not redone (same lines, in order), and none is duplicated
    after = _journal_rounds(journal)
    assert after[: len(before)] == before
    keys = [tuple(json.loads(x)[k] for k in ("method", "insertion", "round")) for x in after]
    assert len(keys) == len(set(keys)) == total_rounds
    # and the result is the uninterrupted run's
    a = pl.read_parquet(ref_dir / "data/fill" / BENCH / "candidates.parquet")
    b = pl.read_parquet(run_dir / "data/fill" / BENCH / "candidates.parquet")
    assert a.equals(b)
    # the committed metrics do not depend on the resumption: byte-identical files
    ref_metrics = (ref_dir / "metrics/fill" / f"{BENCH}.json").read_bytes()
    assert (run_dir / "metrics/fill" / f"{BENCH}.json").read_bytes() == ref_metrics


def _judging(body, sample):
    """The fill server plus a judge (model test/judge) that never decides anything:
    half its replies are not JSON even after the repair request, the other half give no
    answer of their own but claim the reference is correct."""
    if body["model"] != "test/judge":
        return answer(body, sample)
    question = body["messages"][1]["content"]
    if "[child " in question and int(question.split("[child ")[1][:10], 16) % 2:
        return "I think the item is fine, trust me."
    if body["messages"][-1]["content"].startswith("Now compare"):
        return json.dumps(
            {"answer_correct": True, "well_posed": True, "format_kept": True, "reason": "fine"}
        )
    return json.dumps({"solution": "looks right", "answer": None})


def test_a_judge_that_decides_nothing_inserts_nothing(tmp_path, monkeypatch):
    write_project(
        tmp_path,
        fill={
            "insertions": 1,
            "rounds": 1,
            "parents": 2,
            "children": 4,
            "baseline": False,
            "judge": "curation.judge:fill_judge",
        },
        calibrate={
            "tolerance": 0.0,
            "adaptive": {"first_batch": 2, "batch": 2, "max_trials": 4, "se_accept": 0.05},
        },
    )
    params = json.loads((tmp_path / "params.yaml").read_text())
    params["judge"] = {
        "backend": "openai",
        "model": {
            "name": "judge",
            "model_id": "test/judge",
            "base_url_env": BASE_URL_ENV,
            "api_key_env": API_KEY_ENV,
        },
    }
    (tmp_path / "params.yaml").write_text(json.dumps(params, indent=1))
    with FakeOpenAIServer(_judging, api_key=API_KEY) as srv:
        for k, v in _env(srv).items():
            monkeypatch.setenv(k, v)
        monkeypatch.chdir(tmp_path)
        text = fill.run(params_of(load_params("params.yaml")), BENCH)
        made = sum(srv.snapshot().requests.values())
    cands = pl.read_parquet(tmp_path / "data/fill" / BENCH / "candidates.parquet")
    bf = cands.filter(pl.col("method") == "benchfill")
    judged = bf.filter(pl.col("judge_model").is_not_null())
    assert judged.height >= 2
    reasons = set(judged["judge_reason"].str.slice(0, 24))
    assert {"unparseable judge output", "not judged: the judge ga"} <= reasons
    assert set(judged["status"]) == {"judge-rejected"}
    assert bf.filter(pl.col("status") == "inserted").height == 0
    metrics = json.loads((tmp_path / "metrics/fill" / f"{BENCH}.json").read_text())
    assert metrics["methods"]["benchfill"]["n_inserted"] == 0
    reasons = metrics["methods"]["benchfill"]["failure_reasons"]
    assert reasons["judge: unparseable"] >= 1 and reasons["judge: no-own-answer"] >= 1
    # the judge's calls are counted in fill's request count: every call the server saw
    by_judge = re.search(rf"this run: {made} calls \((\d+) by the judge\)", text)
    assert by_judge is not None and int(by_judge[1]) > 0, text
