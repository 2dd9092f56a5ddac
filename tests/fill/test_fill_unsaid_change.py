"""BenchFill through a local OpenAI-compatible server whose rewriter changes the answer
without saying so: every such child is invalid with that reason, before any panel trial."""

from __future__ import annotations

import json
import re
from typing import Any

import polars as pl
from fill_fixtures import API_KEY, API_KEY_ENV, BASE_URL_ENV, BENCH, answer, write_project

from curation.params import load_params
from pipelines import fill
from tests.conftest import params_of
from tests.llm.fake_openai_server import FakeOpenAIServer

_PARENT = re.compile(r"<problem>\s*(.*?)\s*</problem>", re.S)
_REF = re.compile(r"Its reference answer: (\S+)")


def _unsaid(body: dict[str, Any], sample: int, seen: list[str]) -> str:
    """Rewrites keep the parent's numbers in new words, give another answer, say nothing."""
    seen.append(body["model"])  # every request the server answered, by model
    if body["model"] != "test/rewriter":
        return answer(body, sample)  # the panel as in the other fill tests
    prompt = body["messages"][-1]["content"]
    parent = _PARENT.search(prompt).group(1)
    tag, sum_ = parent.split("] What is ", 1)  # "[item q2", "2 + 23?": its numbers kept
    ref = _REF.search(prompt).group(1)
    obj = {
        "question": f"Reply with the total only, for the sum {sum_} ({tag.strip('[')})",
        "answer": str(int(ref) + 7),
        "answer_type": "numeric",
        "change": "none",
    }
    return json.dumps(obj)


def test_an_answer_changed_without_saying_is_invalid_and_never_measured(tmp_path, monkeypatch):
    write_project(
        tmp_path,
        fill={
            "insertions": 1,
            "rounds": 1,
            "parents": 2,
            "children": 2,
            "baseline": False,
            "judge": None,
        },
    )
    seen: list[str] = []
    server = FakeOpenAIServer(lambda body, k: _unsaid(body, k, seen), api_key=API_KEY).start()
    try:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv(API_KEY_ENV, API_KEY)
        monkeypatch.setenv("TQDM_DISABLE", "1")
        monkeypatch.chdir(tmp_path)
        text = fill.run(params_of(load_params("params.yaml")), BENCH)
        panel_calls = [m for m in seen if m != "test/rewriter"]
    finally:
        server.stop()
    assert "BenchFill 0/1 inserted" in text
    cands = pl.read_parquet(tmp_path / "data/fill" / BENCH / "candidates.parquet")
    bf = cands.filter(pl.col("method") == "benchfill")
    assert bf.height == 4
    assert set(bf["status"]) == {"invalid"}
    for row in bf.iter_rows(named=True):
        assert row["status_reason"].startswith("answer changed without saying"), row
        assert "no change stated" in row["status_reason"] or "states none" in row["status_reason"]
        assert row["n_trials"] == 0 and row["z"] is None
    assert panel_calls == []  # rejected before any panel trial was paid for
    metrics = json.loads((tmp_path / "metrics/fill" / f"{BENCH}.json").read_text())
    reasons = metrics["methods"]["benchfill"]["failure_reasons"]
    assert sum(n for r, n in reasons.items() if r.startswith("answer changed")) == 4
