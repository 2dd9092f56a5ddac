"""Cache, accounting, retry policy, scrubbing, settings and the simulation backend."""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing as mp
import random
import sqlite3
from dataclasses import asdict
from pathlib import Path

import pytest

from curation.errors import ConfigError
from curation.grading import grade
from curation.llm import (
    DEFAULT_TEMPLATE_FOR,
    DEFAULT_TEMPLATES,
    Accounting,
    CallResult,
    ChatRequest,
    Completion,
    CompletionCache,
    ItemTruth,
    LLMSettings,
    Message,
    PanelModel,
    Price,
    Sampling,
    Secrets,
    SimulatedBackend,
    default_abilities,
    hashed_difficulty,
    redact_url,
)
from curation.params_model import ParamsFile, validate_params
from tests.conftest import minimal_benchmark


def _params(**sections: object) -> ParamsFile:
    """A params file of one benchmark and ``sections``, validated as `curate validate` does."""
    return validate_params({"benchmarks": {"b": minimal_benchmark("b")}, **sections})


def _request(sample: int = 0, **over) -> ChatRequest:
    base = dict(
        model="m",
        model_id="org/m",
        messages=(Message("user", "What is 2+2?"),),
        sampling=Sampling(0.7, 128, None, 5),
        sample=sample,
    )
    base.update(over)
    return ChatRequest(**base)


# ---- cache key ----------------------------------------------------------------------------


def test_key_changes_with_everything_that_changes_the_answer():
    base = _request().key("openai")
    assert _request(sample=1).key("openai") != base
    assert _request(sampling=Sampling(0.8, 128, None, 5)).key("openai") != base
    assert _request(model_id="org/other").key("openai") != base
    assert _request(messages=(Message("user", "What is 2+3?"),)).key("openai") != base
    assert _request().key("simulated:x") != base
    # ... and not with what does not
    assert _request(stream=True, stage="fill", item="q1", model="alias").key("openai") == base
    assert len(base) == 64 and int(base, 16) >= 0


# ---- cache --------------------------------------------------------------------------------


def test_cache_round_trip_and_persistence(tmp_path: Path):
    path = tmp_path / "c" / "cache.sqlite"
    comp = Completion("4", "stop", 10, 1, 0.25, 0.05, 2, "org/m", "openai")
    req = _request()
    key = req.key("openai")
    with CompletionCache(path) as cache:
        assert cache.get(key) is None and key not in cache
        cache.put(key, req, comp, namespace="openai")
        cache.put(key, req, Completion("5"), namespace="openai")  # first answer is kept
        assert cache.get(key) == comp
        assert key in cache and len(cache) == 1
    with CompletionCache(path) as again:  # a new connection sees the committed row
        assert again.get_many([key, "0" * 64]) == {key: comp}
        assert list(again.keys()) == [key]
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_batched_puts_commit_together_and_keep_first_answers(tmp_path: Path):
    path = tmp_path / "batch.sqlite"
    reqs = [_request(sample=i) for i in range(5)]
    with CompletionCache(path) as cache:
        cache.put(reqs[0].key("openai"), reqs[0], Completion("first"), namespace="openai")
        rows = [(r.key("openai"), r, Completion(f"a{r.sample}")) for r in reqs]
        cache.put_many(rows, namespace="openai")
        cache.put_many([], namespace="openai")
    with CompletionCache(path) as again:
        got = again.get_many(r.key("openai") for r in reqs)
    assert {k: c.text for k, c in got.items()} == {
        r.key("openai"): ("first" if r.sample == 0 else f"a{r.sample}") for r in reqs
    }


def test_hand_written_record_dicts_match_the_dataclasses():
    # to_json and as_dict avoid dataclasses.asdict (slow); a new field must not be dropped
    comp = Completion("4", "stop", 10, 1, 0.25, 0.05, 2, "org/m", "openai")
    assert json.loads(comp.to_json()) == asdict(comp)
    assert Completion.from_json(comp.to_json()) == comp
    sampling = Sampling(0.7, 64, 0.9, 3)
    assert sampling.as_dict() == asdict(sampling)


def _writer(path: str, start: int, n: int) -> None:
    with CompletionCache(path) as cache:
        for i in range(start, start + n):
            req = _request(sample=i)
            cache.put(req.key("openai"), req, Completion(str(i)), namespace="openai")


def test_cache_is_safe_across_processes(tmp_path: Path):
    path = str(tmp_path / "shared.sqlite")
    CompletionCache(path).close()
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, k * 200, 200)) for k in range(2)]
    for p in procs:
        p.start()
    _writer(path, 400, 200)
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with CompletionCache(path) as cache:
        assert len(cache) == 600
        assert cache.get(_request(sample=555).key("openai")).text == "555"


# ---- accounting ---------------------------------------------------------------------------


def test_accounting_sums_per_stage_and_model():
    acc = Accounting({"a": Price(1.0, 2.0)})
    r1 = _request(model="a")
    r2 = _request(model="a", sample=1)
    r3 = _request(model="b", stage="judge")
    acc.record(CallResult(r1, "k1", Completion("x", None, 100, 10, 0.5, 0.1, 2), cached=False))
    acc.record(CallResult(r2, "k2", Completion("y", None, 300, 30, 1.5, 0.3, 0), cached=True))
    acc.record(CallResult(r3, "k3", Completion("z", None, None, None, 2.0, None, 1), cached=False))
    m = acc.to_metrics()
    a = m["stages"]["collect"]["models"]["a"]
    assert a["samples"] == 2
    # this run's requests and cache hits: kept for the printed line, not in the metrics
    assert "requests" not in a and "cache_hits" not in a
    run_a = acc.tally(stage="collect", model="a")
    assert (run_a.requests, run_a.cache_hits) == (1, 1)
    assert a["prompt_tokens"] == 400 and a["completion_tokens"] == 40 and a["total_tokens"] == 440
    assert a["retries"] == 2
    assert a["latency_s_total"] == pytest.approx(2.0) and a["latency_s_mean"] == pytest.approx(1.0)
    assert a["ttft_s_mean"] == pytest.approx(0.2)
    assert a["cost_usd"] == pytest.approx((400 * 1.0 + 40 * 2.0) / 1e6)
    b = m["stages"]["judge"]["models"]["b"]
    assert b["samples_without_usage"] == 1 and "cost_usd" not in b and "ttft_s_mean" not in b
    total = m["total"]
    assert total["samples"] == 3 and acc.tally().requests == 2 and total["retries"] == 3
    assert total["latency_s_total"] == pytest.approx(4.0)


# ---- retries and secrets ------------------------------------------------------------------


def test_backoff_grows_with_jitter_and_honours_retry_after():
    policy = LLMSettings(max_retries=5, backoff_base_s=0.5, backoff_max_s=4.0)
    rng = random.Random(1)
    for retry in range(6):
        step = min(4.0, 0.5 * 2**retry)
        delays = [policy.retry_delay(retry, rng) for _ in range(50)]
        assert all(step / 2 <= d <= step for d in delays)
        assert len(set(delays)) > 1  # jitter
    assert policy.retry_delay(0, rng, retry_after=3.0) >= 3.0
    assert policy.retry_delay(0, rng, retry_after=1e9) <= policy.max_retry_after_s


def test_secrets_are_scrubbed():
    secrets = Secrets(["sk-live-abcdef123456", None, "x"])
    text = "key sk-live-abcdef123456 and header Authorization: Bearer tok_0123456789abcdef"
    out = secrets.scrub(text)
    assert "sk-live" not in out and "tok_0123456789abcdef" not in out
    assert out.count("***") == 2
    assert secrets.scrub("x marks the spot") == "x marks the spot"  # too short to be a key
    assert redact_url("https://user:pw@host:8443/v1?key=abc") == "https://host:8443/v1"


# ---- settings -----------------------------------------------------------------------------


def test_panel_defaults_come_from_the_model_and_errors_name_the_key():
    panel = _params(panel={"models": [{"name": "a", "model_id": "x/a"}]}).panel
    assert panel is not None
    models = panel.models
    assert models[0] == PanelModel(name="a", model_id="x/a")
    assert models[0].temperature == 0.6 and models[0].trials == 4 and models[0].concurrency is None
    with pytest.raises(ConfigError, match=r"panel.models\[0\].trials"):
        _params(panel={"models": [{"name": "a", "model_id": "x", "trials": 0}]})
    with pytest.raises(ConfigError, match=r"params.yaml: panel.models\[1\].name: duplicate 'a'"):
        _params(panel={"models": [{"name": "a", "model_id": "x"}] * 2})
    with pytest.raises(ConfigError, match="api_key"):
        _params(panel={"models": [{"name": "a", "model_id": "x", "api_key": "sk"}]})
    with pytest.raises(ConfigError, match="collect.backend"):
        _params(collect={"backend": "magic"})
    with pytest.raises(ConfigError, match="collect.sandbox: 'docker': no code sandbox"):
        _params(collect={"sandbox": "docker"})
    with pytest.raises(ConfigError, match="llm.timeout_s"):
        _params(llm={"timeout_s": "fast"})
    with pytest.raises(ConfigError, match="llm.max_retries"):
        _params(llm={"max_retries": -1})
    assert _params().collect.enabled is False  # import stays the default
    # collecting needs a panel: validate says so, before the stage would
    with pytest.raises(ConfigError, match="params.yaml: panel.models: list at least one model"):
        _params(collect={"enabled": True})


def test_templates_are_merged_over_the_builtins_and_must_exist():
    collect = _params(collect={"templates": {"mine": "Q: {question}"}}).collect
    assert collect.templates["mine"] == "Q: {question}"
    assert collect.templates["numeric-boxed"] == DEFAULT_TEMPLATES["numeric-boxed"]
    assert collect.template_for == DEFAULT_TEMPLATE_FOR  # the built-in choice per type
    own = _params(collect={"template_for": {"numeric": "free"}}).collect
    assert (
        own.template_for["numeric"] == "free" and own.template_for["exact"] == "exact-answer-tags"
    )
    with pytest.raises(ConfigError, match=r"collect.template_for.numeric: unknown template 'nope'"):
        _params(collect={"template_for": {"numeric": "nope"}})
    model = {"name": "a", "model_id": "x", "prompt_templates": {"choice": "mine"}}
    with pytest.raises(
        ConfigError, match=r"panel.models\[0\].prompt_templates.choice: unknown prompt template"
    ):
        _params(panel={"models": [model]})
    chosen = _params(panel={"models": [model]}, collect={"templates": {"mine": "Q: {question}"}})
    assert chosen.panel is not None
    assert chosen.collect.template_id(chosen.panel.models[0], "choice") == "mine"
    assert chosen.collect.template_id(chosen.panel.models[0], "numeric") == "numeric-boxed"
    assert chosen.llm.cache_path == Path(".llm-cache/completions.sqlite")


# ---- simulation ---------------------------------------------------------------------------


def _sim(seed=3, n_items=400, abilities=None) -> SimulatedBackend:
    truths = {f"i{k}": ItemTruth(str(k * 10), "numeric") for k in range(n_items)}
    return SimulatedBackend(
        benchmark="b", truths=truths, abilities=abilities or {"lo": -1.0, "hi": 1.5}, seed=seed
    )


def test_simulation_follows_the_irt_model_and_says_so():
    sim = _sim()
    draws = {"lo": [], "hi": []}
    for model in draws:
        for item in sim.truths:
            for s in range(4):
                req = _request(model=model, item=item, sample=s)
                comp = asyncio.run(sim.complete(req))
                assert comp.backend == "simulated" and comp.text.startswith("[simulated]")
                g = grade(comp.text, sim.truths[item].reference, "numeric")
                assert g.correct == sim.is_correct(model, item, s)  # text grades as drawn
                draws[model].append((sim.p_correct(model, item), g.correct))
    for model, pairs in draws.items():
        expected = sum(p for p, _ in pairs)
        observed = sum(c for _, c in pairs)
        sd = math.sqrt(sum(p * (1 - p) for p, _ in pairs))
        assert abs(observed - expected) < 4 * sd, model
    assert sum(c for _, c in draws["hi"]) > sum(c for _, c in draws["lo"])


def test_simulation_is_seeded_and_order_free():
    a, b, c = _sim(seed=3), _sim(seed=3), _sim(seed=4)
    keys = [(m, i, s) for m in ("lo", "hi") for i in list(a.truths)[:100] for s in range(3)]
    assert [a.is_correct(*k) for k in keys] == [b.is_correct(*k) for k in reversed(keys)][::-1]
    assert [a.is_correct(*k) for k in keys] != [c.is_correct(*k) for k in keys]
    assert a.namespace == b.namespace != c.namespace
    assert _sim(abilities={"lo": 0.0, "hi": 1.5}).namespace != a.namespace


def test_simulation_latent_difficulty_and_abilities():
    b1 = hashed_difficulty("gsm8k", "q1")
    assert b1 == hashed_difficulty("gsm8k", "q1") != hashed_difficulty("gsm8k", "q2")
    values = [hashed_difficulty("x", f"q{i}", scale=1.0) for i in range(4000)]
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
    assert abs(mean) < 0.06 and abs(sd - 1.0) < 0.06
    models = [
        PanelModel(name="a", model_id="a"),
        PanelModel(name="b", model_id="b", ability=0.3),
        PanelModel(name="c", model_id="c"),
    ]
    assert default_abilities(models) == {"a": -2.0, "b": 0.3, "c": 2.0}


def test_nothing_outside_curation_llm_imports_openai():
    import ast

    repo = Path(__file__).resolve().parents[2]
    offenders = []
    for folder in ("curation", "pipelines", "benchmarks"):
        for path in (repo / folder).rglob("*.py"):
            if (repo / "curation" / "llm") in path.parents:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                if any(n == "openai" or n.startswith("openai.") for n in names):
                    offenders.append(str(path.relative_to(repo)))
    assert offenders == []


def test_retry_after_header_forms():
    from datetime import UTC, datetime, timedelta
    from email.utils import format_datetime

    from curation.llm._client import _retry_after

    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    date = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < _retry_after({"retry-after": date}) <= 30
    assert _retry_after({"retry-after": "soon"}) is None
    assert _retry_after({}) is None
