"""The judge against a real OpenAI-compatible endpoint (the shared fake server), scripted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from curation.errors import ConfigError
from curation.judge import NO_OWN_ANSWER, UNPARSEABLE, LLMJudge, build_judge
from curation.llm import Completion, LLMCallError
from tests.conftest import params_of
from tests.judge.conftest import REPAIR_MARK, candidate, judge_params, parent

GOOD_VERDICT = {
    "answer_correct": True,
    "well_posed": True,
    "format_kept": True,
    "reason": "Solved it: 5 + 7 = 12, as the reference says.",
}


def _assess(params, cand, par):
    async def go():
        judge = build_judge(params_of(params))
        async with judge:
            return await judge.assess(cand, par), judge

    return asyncio.run(go())


def _requests(server) -> int:
    return sum(server.snapshot().requests.values())


def test_correct_candidate_passes(tmp_path: Path, judge_server):
    server, seen = judge_server(
        {"ok": {"solve": {"solution": "5 + 7 = 12", "answer": "12"}, "verdict": GOOD_VERDICT}}
    )
    a, judge = _assess(judge_params(tmp_path), candidate("ok"), parent())
    v = a.verdict
    assert (v.correct, v.well_posed, v.format_kept, v.passed) == (True, True, True, True)
    assert v.model == "test-judge"
    assert v.reason.startswith("Solved it") and "grader: matches" in v.reason
    assert a.own_answer == "12" and a.grader_match is True and a.category == "passed"
    # two calls: solve (no reference shown), then verdict; JSON mode asked, temperature 0
    assert _requests(server) == 2 and judge.requests == 2
    solve, verdict = seen
    assert "12" not in solve["messages"][1]["content"].split("How many?")[1]
    assert "reference answer" in verdict["messages"][-1]["content"]
    assert all(b["response_format"] == {"type": "json_object"} for b in seen)
    assert all(b["temperature"] == 0.0 and b["seed"] == 5 for b in seen)
    assert judge.accounting.tally(stage="judge").requests == 2


def test_wrong_reference_is_caught_by_the_judges_own_answer(tmp_path: Path, judge_server):
    # the reference says 15; the judge solves 12 on its own, then (anchored on the
    # reference) still claims it is correct: the grader on its own answer decides
    server, _ = judge_server(
        {"wrong": {"solve": {"solution": "5 + 7 = 12", "answer": "12"}, "verdict": GOOD_VERDICT}}
    )
    a, _ = _assess(judge_params(tmp_path), candidate("wrong", answer="15"), parent())
    assert a.verdict.correct is False and not a.verdict.passed
    assert a.grader_match is False and a.stated_correct is True and a.disagreement
    assert a.category == "incorrect"
    assert '"12"' in a.verdict.reason and "the grader decides" in a.verdict.reason


def test_equivalent_forms_are_graded_equal(tmp_path: Path, judge_server):
    judge_server(
        {
            "frac": {
                "solve": {"solution": "three quarters", "answer": "\\frac{3}{4}"},
                "verdict": GOOD_VERDICT,
            }
        }
    )
    a, _ = _assess(judge_params(tmp_path), candidate("frac", answer="0.75"), parent(answer="0.5"))
    assert a.grader_match is True and a.verdict.correct is True


def test_malformed_json_is_repaired_on_retry(tmp_path: Path, judge_server):
    server, seen = judge_server(
        {
            "fix": {
                "solve": "Sure! {solution: 5 + 7 = 12, answer: 12",
                "solve_repair": '```json\n{"solution": "5 + 7 = 12", "answer": 12}\n```',
                "verdict": {"answer_correct": True, "well_posed": True, "reason": "fine"},
                "verdict_repair": GOOD_VERDICT,
            }
        }
    )
    a, judge = _assess(judge_params(tmp_path), candidate("fix"), parent())
    assert a.verdict.passed and a.verdict.correct is True and a.own_answer == "12"
    assert a.repaired == 2 and _requests(server) == 4
    last = [b["messages"][-1]["content"] for b in seen]
    repairs = [text for text in last if REPAIR_MARK in text]
    assert len(repairs) == 2
    assert "not valid JSON" in repairs[0]
    assert "'format_kept' is a required property" in repairs[1]
    # the verdict turn sees the clean solution, not the broken first reply
    verdict_turn = next(b for b in seen if b["messages"][-1]["content"].startswith("Now compare"))
    assert "Sure!" not in str(verdict_turn["messages"])


def test_persistent_garbage_gives_a_null_verdict(tmp_path: Path, judge_server):
    server, _ = judge_server(
        {"junk": {"solve": "I refuse to answer in JSON.", "solve_repair": "Still no."}}
    )
    a, _ = _assess(judge_params(tmp_path), candidate("junk"), parent())
    v = a.verdict
    assert (v.correct, v.well_posed, v.format_kept) == (None, None, None)
    assert v.reason.startswith(UNPARSEABLE) and a.category == "unparseable"
    assert "solve step: it is not valid JSON" in v.reason  # the reason says why
    assert not v.passed  # a verdict that decided nothing is never a pass
    assert _requests(server) == 2  # the first reply and one repair, no more


def test_no_own_answer_means_the_bare_claim_does_not_decide(tmp_path: Path, judge_server):
    # the judge does not solve (answer null) yet claims the reference is correct
    judge_server(
        {"lazy": {"solve": {"solution": "Looks fine.", "answer": None}, "verdict": GOOD_VERDICT}}
    )
    a, _ = _assess(judge_params(tmp_path), candidate("lazy"), parent())
    v = a.verdict
    assert v.correct is None and not v.passed and a.category == "no-own-answer"
    assert a.stated_correct is True  # kept for the reviewer, not used
    assert v.reason.startswith(NO_OWN_ANSWER) and "does not decide" in v.reason


def test_no_own_answer_and_ill_posed_is_a_rejection(tmp_path: Path, judge_server):
    verdict = GOOD_VERDICT | {"well_posed": False, "reason": "The count is missing."}
    judge_server(
        {"ill": {"solve": {"solution": "Cannot tell.", "answer": None}, "verdict": verdict}}
    )
    a, _ = _assess(judge_params(tmp_path), candidate("ill"), parent())
    assert a.category == "ill-posed" and not a.verdict.passed


def test_wrapped_replies_are_read_without_a_repair(tmp_path: Path, judge_server):
    server, _ = judge_server(
        {
            "wrap": {
                "solve": "<think>5 + 7 {maybe} = 12</think>\nHere is my JSON:\n```json\n"
                '{"solution": "5 + 7 = 12", "answer": "12"}\n```',
                "verdict": "Verdict follows. " + json.dumps(GOOD_VERDICT) + " Thanks!",
            }
        }
    )
    a, _ = _assess(judge_params(tmp_path), candidate("wrap"), parent())
    assert a.verdict.passed and a.repaired == 0 and a.tolerant == 2
    assert _requests(server) == 2


def test_rerun_is_served_from_the_cache(tmp_path: Path, judge_server):
    server, _ = judge_server(
        {"ok": {"solve": {"solution": "12", "answer": "12"}, "verdict": GOOD_VERDICT}}
    )
    params = judge_params(tmp_path)
    first, _ = _assess(params, candidate("ok"), parent())
    assert _requests(server) == 2
    again, judge = _assess(params, candidate("ok"), parent())
    assert _requests(server) == 2  # no second request
    assert again == first
    assert (judge.requests, judge.cache_hits) == (0, 2)
    assert judge.accounting.tally().prompt_tokens > 0  # usage of cached answers still counted


def test_json_schema_mode_sends_the_schema(tmp_path: Path, judge_server):
    _, seen = judge_server(
        {"ok": {"solve": {"solution": "12", "answer": "12"}, "verdict": GOOD_VERDICT}}
    )
    _assess(judge_params(tmp_path, response_format="json_schema"), candidate("ok"), parent())
    formats = [b["response_format"] for b in seen]
    assert [f["json_schema"]["name"] for f in formats] == ["judge_solution", "judge_verdict"]
    assert all(f["type"] == "json_schema" and f["json_schema"]["strict"] for f in formats)
    assert "minLength" not in str(formats[1])


def test_no_parent_leaves_format_undecided(tmp_path: Path, judge_server):
    judge_server({"orphan": {"solve": {"solution": "12", "answer": "12"}, "verdict": GOOD_VERDICT}})
    a, _ = _assess(judge_params(tmp_path), candidate("orphan", parent_id=None), {})
    assert a.verdict.format_kept is None and a.verdict.passed


def test_missing_endpoint_settings_fail_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from tests.llm.conftest import BASE_URL_ENV

    monkeypatch.delenv(BASE_URL_ENV, raising=False)
    with pytest.raises(ConfigError, match=BASE_URL_ENV):
        build_judge(params_of(judge_params(tmp_path)))


def test_disabled_judge_is_none(tmp_path: Path):
    assert build_judge(params_of(judge_params(tmp_path, enabled=False))) is None
    assert isinstance(build_judge(params_of(judge_params(tmp_path, backend="simulate"))), LLMJudge)


def test_endpoint_refusing_structured_output_is_asked_without_it(tmp_path: Path, judge_server):
    judge_server({})  # only for the env vars; the backend below answers
    asked: list[str | None] = []

    class RefusesFormat:
        name = "openai"
        namespace = "openai"

        def max_in_flight(self) -> int:
            return 1

        async def aclose(self) -> None:
            return None

        async def complete(self, request):
            asked.append(request.response_format)
            if request.response_format is not None:
                raise LLMCallError(
                    "model 'test-judge' at http://x: HTTP 400: response_format unsupported; "
                    "not retried",
                    model="test-judge",
                    endpoint="http://x",
                    attempts=1,
                )
            solve = request.messages[-1].content.startswith("Solve")
            reply = {"solution": "12", "answer": "12"} if solve else GOOD_VERDICT
            return Completion(text=json.dumps(reply))

    async def go():
        judge = build_judge(params_of(judge_params(tmp_path)))
        judge._backend = RefusesFormat()
        async with judge:
            return await judge.assess(candidate("ok"), parent())

    a = asyncio.run(go())
    assert a.verdict.passed
    assert asked == ['{"type":"json_object"}', None, None]  # refused once, then never sent
