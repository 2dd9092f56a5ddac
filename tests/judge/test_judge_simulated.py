"""The offline judge: labelled as simulated, deterministic, seeded, through the cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

from curation.judge import Judge, Verdict, build_judge, categorize, judge_settings
from tests.conftest import params_of
from tests.judge.conftest import candidate, judge_params, parent


def _verdicts(params, pairs):
    async def go():
        judge = build_judge(params)
        async with judge:
            return [a.verdict for a in await judge.assess_many(pairs)], judge

    return asyncio.run(go())


def _pairs(n: int, *, answer: str = "12"):
    return [
        (candidate(f"c{i}", answer=answer, source="simulated"), parent(answer="12"))
        for i in range(n)
    ]


def test_simulated_judge_says_so_and_is_deterministic(tmp_path: Path):
    params = judge_params(tmp_path, backend="simulate", simulation={"false_reject_rate": 0.2})
    first, judge = _verdicts(params, _pairs(60))
    assert isinstance(judge, Judge)  # structurally the interface BenchFill's hook calls
    assert all(v.model == "simulated" and v.reason.startswith("[simulated]") for v in first)
    # same params, fresh cache: identical verdicts (no dependence on order or cache)
    params["llm"]["cache"] = str(tmp_path / "other.sqlite")
    again, judge2 = _verdicts(params, list(reversed(_pairs(60))))
    assert list(reversed(again)) == first
    assert judge2.requests == 120 and judge.requests == 120
    rejected = [v for v in first if not v.passed]
    assert 3 <= len(rejected) <= 24  # ~20% of 60, seeded
    assert all("seeded false reject" in v.reason and v.correct is False for v in rejected)
    # another seed rejects other candidates
    params["judge"]["seed"] = 6
    params["llm"]["cache"] = str(tmp_path / "third.sqlite")
    other, _ = _verdicts(params, _pairs(60))
    assert [v.passed for v in other] != [v.passed for v in first]


def test_simulated_rules(tmp_path: Path):
    params = judge_params(tmp_path, backend="simulate", simulation={"false_reject_rate": 0.0})
    pairs = [
        (candidate("same"), parent()),
        (candidate("comma", answer="1,234"), parent(answer="1234")),
        (candidate("changed", answer="13"), parent()),
        (candidate("typed", answer="twelve", answer_type="exact"), parent()),
        (candidate("empty", question="[simulated]  "), parent()),
    ]
    same, comma, changed, typed, empty = _verdicts(params, pairs)[0]
    assert same.passed and same.correct is True and comma.passed
    assert changed.correct is False and categorize(changed) == "incorrect"
    assert typed.format_kept is False
    assert empty.well_posed is False


def test_backend_follows_collect_unless_set(tmp_path: Path):
    params = judge_params(tmp_path)
    del params["judge"]["backend"]
    assert judge_settings(params).simulated  # collect.backend: simulate
    params["collect"]["backend"] = "openai"
    assert not judge_settings(params).simulated
    assert judge_settings({}).model.temperature == 0.0


def test_verdict_passed_and_categories():
    v = Verdict(True, None, True, "r", "m")
    assert not v.passed and categorize(v) == "undecided"
    assert Verdict(True, True, None, "r", "m").passed  # no parent: format may be null
    v = Verdict(False, False, True, "r", "m")
    assert not v.passed and categorize(v) == "incorrect+ill-posed"
    assert categorize(Verdict(None, None, None, "unparseable judge output", "m")) == "unparseable"


def test_benchfill_loads_it_as_its_validity_hook(tmp_path: Path):
    from curation import candidates
    from curation.fill import load_judge_factory

    factory = load_judge_factory("curation.judge:fill_judge", where="fill.judge")
    params = judge_params(tmp_path, backend="simulate", simulation={"false_reject_rate": 0.0})

    async def go():
        # the hook gets the validated params file, as the fill stage hands it over
        judge = factory(params_of(params), params_file="params.yaml", benchmark="toy")
        assert isinstance(judge, candidates.Judge)
        try:
            memory_parent = parent() | {"b": 0.1, "se": 0.2, "z": 0.4, "origin": "benchmark"}
            return await judge.judge(candidate("c"), memory_parent)
        finally:
            await judge.aclose()

    verdict = asyncio.run(go())
    assert candidates.passed(verdict) and verdict.passed
    assert candidates.verdict_columns(verdict)["judge_model"] == "simulated"
