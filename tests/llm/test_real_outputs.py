"""Real model outputs (tests/fixtures/real_llm/, captured by scripts/capture_real_llm.py
from llama.cpp servers running SmolLM2-135M, Gemma-3-270M and Qwen2.5-Coder-0.5B), replayed.

Every captured reply is served by the local fake OpenAI server and read through the real
client, then through the same checks BenchFill and the judge apply: each one either
parses or yields a counted failure reason, never a crash, and an undecided judge verdict
never passes. The tallies are pinned in ``expected.json`` beside the fixtures, so a
change to the parse/repair code that reads real text differently shows up here.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from curation.calibrate import gradable_problem
from curation.fill._parse import FAILURE_KINDS, ParseFailure, parse_rewrite
from curation.fill._validity import DuplicateIndex, unsaid_answer_change
from curation.grading import GradingSettings
from curation.judge import UNDECIDED_CATEGORIES, build_judge
from curation.judge._parse import parse_reply
from curation.llm import ChatRequest, LLMSettings, Message, OpenAIBackend, PanelModel, Sampling
from curation.schemas import validate_record
from tests.conftest import params_of
from tests.judge.conftest import judge_params
from tests.llm.conftest import API_KEY, API_KEY_ENV, BASE_URL_ENV
from tests.llm.fake_openai_server import FakeOpenAIServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "real_llm"
REPAIR_MARK = "Your reply could not be used"
MODELS = {"smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"}
_FIXTURE = re.compile(r"\[fixture (\d+)\]")


def _load(name: str) -> list[dict[str, Any]]:
    path = FIXTURES / name
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


REWRITES = _load("rewriter.jsonl")
JUDGE = _load("judge.jsonl")
_EXPECTED_FILE = FIXTURES / "expected.json"
EXPECTED = json.loads(_EXPECTED_FILE.read_text()) if _EXPECTED_FILE.is_file() else {}

pytestmark = pytest.mark.skipif(
    not (REWRITES and JUDGE and EXPECTED),
    reason="no captured real outputs in tests/fixtures/real_llm/ yet: start the local servers "
    "and run scripts/capture_real_llm.py",
)


def test_fixtures_are_real_and_enough():
    assert len(REWRITES) >= 50 and len(JUDGE) >= 50
    for r in REWRITES + JUDGE:
        assert r["model"] in MODELS and r["date"]
        assert r["request"]["prompt_sha256"] and isinstance(r["reply"], str)
    assert {r["model"] for r in REWRITES} == MODELS
    assert {r["model"] for r in JUDGE} == MODELS
    # MATH parents, so LaTeX reaches the parsers
    assert any("$" in r["context"]["parent_question"] for r in REWRITES)
    assert any("\\" in r["reply"] for r in REWRITES)


@pytest.fixture
def server():
    """The fake OpenAI server, answering a ``[fixture N]`` prompt with rewrite N's reply."""

    def answer(body: dict[str, Any], sample: int) -> tuple[str, str]:
        i = int(_FIXTURE.search(body["messages"][-1]["content"]).group(1))
        return REWRITES[i]["reply"], REWRITES[i]["finish_reason"] or "stop"

    srv = FakeOpenAIServer(answer, api_key=API_KEY).start()
    yield srv
    srv.stop()


def _replayed(server: FakeOpenAIServer) -> list[tuple[str, str | None]]:
    """(text, finish_reason) of every rewrite, fetched through the real client."""
    model = PanelModel(
        name="rewriter", model_id="real/replay", base_url_env=BASE_URL_ENV, api_key_env=API_KEY_ENV
    )
    env = {BASE_URL_ENV: server.base_url, API_KEY_ENV: API_KEY}
    backend = OpenAIBackend([model], LLMSettings(timeout_s=10), environ=env)

    async def go():
        try:
            return await asyncio.gather(
                *(
                    backend.complete(
                        ChatRequest(
                            model="rewriter",
                            model_id="real/replay",
                            messages=(Message("user", f"[fixture {i}]"),),
                            sampling=Sampling(1.0, r["request"]["max_tokens"]),
                            stage="fill",
                        )
                    )
                    for i, r in enumerate(REWRITES)
                )
            )
        finally:
            await backend.aclose()

    return [(c.text, c.finish_reason) for c in asyncio.run(go())]


def rewrite_outcome(text: str, finish_reason: str | None, context: dict[str, Any]) -> str:
    """What BenchFill makes of one rewriter reply, as a tally key: ``ok``, a parse failure
    kind, ``not_gradable``, ``parent_copy`` or ``answer_changed_unsaid``."""
    answer_type = context["answer_type"]
    got = parse_rewrite(text, answer_type=answer_type, finish_reason=finish_reason)
    if isinstance(got, ParseFailure):
        assert got.reason and got.kind in FAILURE_KINDS, got
        return got.kind
    assert got.question and got.answer
    if gradable_problem(got.answer, got.answer_type, got.choices, GradingSettings()) is not None:
        return "not_gradable"
    parent = DuplicateIndex(0.9)
    parent.add("parent", context["parent_question"], context["parent_answer"], answer_type)
    if parent.find(got.question, got.answer, got.answer_type, got.choices) is not None:
        return "parent_copy"
    unsaid = unsaid_answer_change(
        context["parent_question"],
        context["parent_answer"],
        got.question,
        got.answer,
        got.answer_type,
        got.change,
        got.choices,
    )
    if unsaid is not None:
        assert unsaid.startswith("answer changed without saying")
        return "answer_changed_unsaid"
    return "ok"


def test_rewriter_replies_replayed_parse_or_give_a_counted_reason(server):
    replies = _replayed(server)
    assert [t for t, _ in replies] == [r["reply"] for r in REWRITES]  # the client kept the text
    tally = Counter(
        rewrite_outcome(text, finish, r["context"])
        for (text, finish), r in zip(replies, REWRITES, strict=True)
    )
    assert sum(tally.values()) == len(REWRITES)
    assert dict(tally) == EXPECTED["rewriter"], dict(tally)


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
    assert dict(tally) == EXPECTED["judge_reader"], dict(tally)


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
        judge = build_judge(params_of(judge_params(tmp_path)))
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
    assert dict(categories) == EXPECTED["judge_categories"], dict(categories)
