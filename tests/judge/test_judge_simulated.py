"""The offline judge: labelled as simulated, deterministic, seeded, through the cache."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from curation.errors import ConfigError
from curation.judge import Judge, JudgeSettings, Verdict, build_judge, categorize
from tests.conftest import params_of
from tests.judge.conftest import candidate, judge_params, parent


def _verdicts(params, pairs):
    async def go():
        judge = build_judge(params_of(params))
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


def _built_backend(params) -> str:
    judge = build_judge(params_of(params))
    assert judge is not None
    return judge.settings.backend_name


def test_backend_follows_collect_unless_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    params = judge_params(tmp_path)
    del params["judge"]["backend"]
    assert params_of(params).judge.backend is None  # the file's value: follow collect
    assert _built_backend(params) == "simulate"  # collect.backend: simulate
    params["collect"]["backend"] = "openai"
    monkeypatch.setenv("TEST_BASE_URL", "http://127.0.0.1:9/v1")  # the judge checks its env
    monkeypatch.setenv("TEST_API_KEY", "EMPTY")
    params["judge"]["model"] |= {"base_url_env": "TEST_BASE_URL", "api_key_env": "TEST_API_KEY"}
    assert _built_backend(params) == "openai"
    params["judge"]["backend"] = "simulate"  # named: collect's no longer counts
    assert _built_backend(params) == "simulate"
    assert JudgeSettings().model.temperature == 0.0
    with pytest.raises(ValueError, match="resolve it first"):
        _ = JudgeSettings().simulated  # null cannot be read without collect.backend
    assert JudgeSettings().resolved("openai").model_label == "judge"
    assert JudgeSettings().resolved("simulate").model_label == "simulated"


def test_judge_settings_errors_name_the_key(tmp_path: Path):
    params = judge_params(tmp_path)
    params["judge"]["model"]["trials"] = 3
    with pytest.raises(ConfigError, match=r"judge.model.trials: not used by the judge"):
        params_of(params)
    params = judge_params(tmp_path, response_format="xml")
    with pytest.raises(ConfigError, match=r"judge.response_format"):
        params_of(params)
    params = judge_params(tmp_path, simulation={"false_reject_rate": 1.5})
    with pytest.raises(ConfigError, match=r"judge.simulation.false_reject_rate"):
        params_of(params)


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
