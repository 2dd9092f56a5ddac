"""A scripted judge behind the shared fake OpenAI server, and candidate/parent records.

Each candidate's question carries ``[case NAME]``; the server answers the judge's
solve, verdict and repair prompts from ``SCRIPT[NAME]`` (JSON objects or raw text),
so every test states exactly what the judge "said".
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from curation.schemas import field_names
from tests.llm.conftest import API_KEY, API_KEY_ENV, BASE_URL_ENV
from tests.llm.fake_openai_server import FakeOpenAIServer

_CASE = re.compile(r"\[case ([\w-]+)\]")
REPAIR_MARK = "Your reply could not be used"

Reply = dict[str, Any] | str
Script = dict[str, dict[str, Reply]]
"""case -> {"solve": reply, "verdict": reply, "solve_repair": reply, "verdict_repair": reply}."""


def _text(reply: Reply) -> str:
    return reply if isinstance(reply, str) else json.dumps(reply)


def scripted_judge(script: Script, seen: list[dict[str, Any]]) -> Callable[[dict, int], str]:
    """The server's answer function: which prompt is this, and what does the script say."""

    def answer(body: dict[str, Any], sample: int) -> str:
        seen.append(body)
        messages = body["messages"]
        case = _CASE.search(messages[1]["content"]).group(1)
        users = [m for m in messages if m["role"] == "user"]
        repairing = REPAIR_MARK in users[-1]["content"]
        verdict_turns = [m for m in users if m["content"].startswith("Now compare")]
        step = "verdict" if verdict_turns else "solve"
        key = f"{step}_repair" if repairing else step
        return _text(script[case][key])

    return answer


@pytest.fixture
def judge_server(monkeypatch: pytest.MonkeyPatch):
    """Start a fake endpoint answering from a script; env vars point the judge at it."""
    started: list[FakeOpenAIServer] = []

    def start(script: Script) -> tuple[FakeOpenAIServer, list[dict[str, Any]]]:
        seen: list[dict[str, Any]] = []
        server = FakeOpenAIServer(scripted_judge(script, seen), api_key=API_KEY).start()
        started.append(server)
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv(API_KEY_ENV, API_KEY)
        return server, seen

    yield start
    for server in started:
        server.stop()


def judge_params(tmp_path: Path, *, backend: str = "openai", **judge: Any) -> dict[str, Any]:
    """params with a judge section (real endpoint via the test env vars, or simulated)."""
    section = {
        "backend": backend,
        "seed": 5,
        "model": {
            "name": "test-judge",
            "model_id": "test/judge",
            "base_url_env": BASE_URL_ENV,
            "api_key_env": API_KEY_ENV,
        },
    } | judge
    return {
        "benchmarks": {
            "toy": {
                "domain": "math",
                "license": "MIT",
                "source": "tests",
                "items": {"path": "raw/items.jsonl", "answer_type": "numeric"},
            }
        },
        "collect": {"backend": "simulate", "seed": 1},
        "llm": {
            "cache": str(tmp_path / "cache.sqlite"),
            "timeout_s": 5,
            "max_retries": 2,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.05,
        },
        "judge": section,
    }


def parent(item: str = "p1", *, answer: str = "12", answer_type: str = "numeric", **over: Any):
    """An item record (schema ``item``)."""
    record = {
        "benchmark": "toy",
        "item": item,
        "domain": "math",
        "question": f"Tom has 5 apples and buys 7 more. How many apples has he? ({item})",
        "answer": answer,
        "answer_type": answer_type,
        "choices": None,
        "source": "tests",
        "license": "MIT",
        "origin": "original",
        "metadata": "{}",
    }
    return record | over


def candidate(
    name: str,
    *,
    case: str | None = None,
    answer: str | None = "12",
    parent_id: str | None = "p1",
    status: str = "calibrated",
    method: str = "benchfill",
    answer_type: str = "numeric",
    source: str = "collected",
    question: str | None = None,
) -> dict[str, Any]:
    """A candidate record (schema ``candidate``), not yet judged."""
    record = {k: None for k in field_names("candidate")}
    text = question or f"[case {case or name}] Tom has 5 apples and buys 7 more. How many?"
    z = 0.5 if status in ("calibrated", "inserted") else None
    record.update(
        benchmark="toy",
        candidate=name,
        method=method,
        parent=parent_id,
        round=1,
        target_z=0.5,
        question=text,
        answer=answer,
        answer_type=answer_type,
        change="changed a constant",
        status=status,
        status_reason=None if z is not None else "not valid",
        source=source,
        rewriter_model="rewriter",
        prompt_hash="0" * 64,
        b=0.1 if z is not None else None,
        se=0.2 if z is not None else None,
        z=z,
        z_low=0.4 if z is not None else None,
        z_high=0.6 if z is not None else None,
        n_trials=8,
        n_correct=4,
        panel="{}",
        calibration="data/calibration/toy.json",
        selected=status == "inserted",
        lineage="{}",
    )
    return record
