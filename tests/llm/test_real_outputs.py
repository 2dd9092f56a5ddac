"""Real model outputs (tests/fixtures/real_llm/, captured from llama.cpp servers running
SmolLM2-135M and Qwen2.5-Coder-0.5B by scripts/capture_real_llm.py), replayed.

Every captured reply goes through the parsers, and the judge's conversations are
replayed through the local fake OpenAI server, so the tolerant reading, the repair
request and the "decided nothing is no pass" rule are tested on real messy text.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from curation.fill._parse import ParseFailure, Rewrite, parse_rewrite
from curation.judge import UNDECIDED_CATEGORIES, build_judge
from curation.judge._parse import parse_reply
from curation.schemas import validate_record
from tests.judge.conftest import judge_params
from tests.llm.conftest import API_KEY, API_KEY_ENV, BASE_URL_ENV
from tests.llm.fake_openai_server import FakeOpenAIServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real_llm"
REPAIR_MARK = "Your reply could not be used"


def _load(name: str) -> list[dict[str, Any]]:
    path = FIXTURES / name
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


REWRITES = _load("rewriter.jsonl")
JUDGE = _load("judge.jsonl")

pytestmark = pytest.mark.skipif(
    not (REWRITES and JUDGE),
    reason="no captured real outputs in tests/fixtures/real_llm/ yet: start the local servers "
    "and run scripts/capture_real_llm.py",
)


def test_fixtures_are_real_and_enough():
    assert len(REWRITES) >= 50 and len(JUDGE) >= 50
    for r in REWRITES + JUDGE:
        assert r["model"] in ("smollm2-135m", "qwen2.5-coder-0.5b") and r["date"]
        assert r["request"]["messages"] and isinstance(r["reply"], str)


def _any_valid_object(text: str, schema: str) -> bool:
    """Oracle: does any {...} substring decode to an object valid against ``schema``?"""
    starts = [m.start() for m in re.finditer(r"\{", text)]
    ends = [m.end() for m in re.finditer(r"\}", text)]
    for i in starts:
        for j in ends:
            if j <= i:
                continue
            try:
                value = json.loads(text[i:j])
            except ValueError:
                continue
            if isinstance(value, dict) and validate_record(value, schema) is None:
                return True
    return False


def test_judge_reader_finds_every_valid_object_in_real_replies():
    tally: Counter[str] = Counter()
    for r in JUDGE:
        schema = "judge_verdict" if r["kind"] == "judge_verdict" else "judge_solution"
        parsed = parse_reply(r["reply"], schema, finish_reason=r["finish_reason"])
        if _any_valid_object(r["reply"], schema):
            assert parsed.value is not None, r["reply"][:300]
        if parsed.value is None:
            assert parsed.problem, r["reply"][:300]
            tally["problem"] += 1
            if r["finish_reason"] == "length":
                assert "token limit" in parsed.problem
        else:
            assert validate_record(parsed.value, schema) is None
            tally["tolerant" if parsed.tolerant else "strict"] += 1
    assert sum(tally.values()) == len(JUDGE)


def test_rewriter_parser_takes_or_explains_every_real_reply():
    reasons: Counter[str] = Counter()
    for r in REWRITES:
        got = parse_rewrite(
            r["reply"], answer_type=r["context"]["answer_type"], finish_reason=r["finish_reason"]
        )
        if isinstance(got, ParseFailure):
            assert got.reason
            reasons[got.reason.split(":")[0]] += 1
        else:
            assert isinstance(got, Rewrite) and got.question and got.answer
            reasons["ok"] += 1
    assert sum(reasons.values()) == len(REWRITES)


def _conversations() -> dict[str, dict[str, Any]]:
    """candidate id -> its candidate, parent and replies by (step, repair)."""
    out: dict[str, dict[str, Any]] = {}
    for r in JUDGE:
        ctx = r["context"]
        if not ctx.get("candidate"):
            continue
        conv = out.setdefault(
            ctx["candidate"]["candidate"],
            {"candidate": ctx["candidate"], "parent": ctx["parent"], "replies": {}},
        )
        conv["replies"][(r["kind"], bool(ctx["repair"]))] = (r["reply"], r["finish_reason"])
    return out


@pytest.fixture
def replay(monkeypatch: pytest.MonkeyPatch):
    convs = _conversations()
    by_question = {c["candidate"]["question"]: c for c in convs.values()}

    def answer(body: dict[str, Any], sample: int):
        user = body["messages"][1]["content"]
        conv = next(c for q, c in by_question.items() if q in user)
        step = (
            "judge_verdict"
            if any(
                m["role"] == "user" and m["content"].startswith("Now compare")
                for m in body["messages"]
            )
            else "judge_solve"
        )
        repairing = body["messages"][-1]["content"].startswith(REPAIR_MARK)
        # a conversation the capture did not reach (another reading needs another call)
        return conv["replies"].get((step, repairing), ("", "stop"))

    server = FakeOpenAIServer(answer, api_key=API_KEY).start()
    monkeypatch.setenv(BASE_URL_ENV, server.base_url)
    monkeypatch.setenv(API_KEY_ENV, API_KEY)
    yield convs
    server.stop()


def test_judge_replayed_on_real_conversations(tmp_path: Path, replay):
    convs = replay
    assert len(convs) >= 20

    async def go():
        judge = build_judge(judge_params(tmp_path))
        async with judge:
            return await judge.assess_many(
                [
                    (c["candidate"] | {"benchmark": "toy", "parent": "p"}, c["parent"])
                    for c in convs.values()
                ]
            )

    results = asyncio.run(go())
    categories = Counter(a.category for a in results)
    for a in results:
        v = a.verdict
        if a.category in UNDECIDED_CATEGORIES:
            assert not v.passed
        if v.passed:
            assert v.correct is True and v.well_posed is True and a.own_answer is not None
        if a.category == "unparseable":
            assert v.reason.startswith("unparseable judge output:")
    assert sum(categories.values()) == len(convs)
