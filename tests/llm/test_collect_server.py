"""Collection against a real HTTP server speaking the OpenAI API, faults included.

The real ``openai`` client is pointed at :mod:`tests.llm.fake_openai_server` by base
URL; nothing is patched.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import polars as pl
import pytest

from curation.errors import ConfigError
from curation.llm import (
    ChatRequest,
    LLMCallError,
    LLMSettings,
    Message,
    OpenAIBackend,
    PanelModel,
    Sampling,
)
from curation.params import load_params
from pipelines import responses as responses_stage
from tests.conftest import params_of
from tests.llm.conftest import (
    API_KEY,
    API_KEY_ENV,
    BASE_URL_ENV,
    expected_cells,
    make_items,
    panel,
    scripted_answer,
    write_project,
)
from tests.llm.fake_openai_server import FAULT_KINDS, FaultPlan


def _cells(path: Path) -> set[tuple]:
    df = pl.read_parquet(path)
    return set(df.select("model", "item", "n_trials", "n_correct").iter_rows())


@pytest.mark.long(seconds=40)
def test_collection_with_30_percent_faults_is_complete_and_correct(
    tmp_path, monkeypatch, server_factory, llm_env
):
    items = make_items(200)
    faults = FaultPlan(rate=0.3, kinds=FAULT_KINDS, retry_after="0.05", slow_s=1.0, seed=5)
    server = server_factory(items, faults=faults)
    llm_env(server)
    names = ["weak", "mid", "strong"]
    write_project(
        tmp_path,
        items,
        models=panel(names, trials=4, concurrency=16, stream=("mid",)),
        llm={"timeout_s": 0.5},
    )
    monkeypatch.chdir(tmp_path)
    params = load_params("params.yaml")

    text = responses_stage.run(params_of(params), "scripted")

    assert "2400 samples" in text and "2400 requests" in text
    assert _cells(tmp_path / "data/responses/scripted.parquet") == expected_cells(items, names, 4)
    stats = server.snapshot()
    assert set(stats.fault_kinds) == set(FAULT_KINDS)  # every kind of fault happened
    n_faults = sum(stats.faults.values())
    assert n_faults > 0.2 * 2400
    samples = pl.read_parquet(tmp_path / "data/collect/scripted.samples.parquet")
    assert samples.height == 2400
    # every attempt the server saw beyond the first per sample was a client retry; each
    # fault forced one (a slow answer on a loaded machine may force one more: timeout)
    attempts = sum(stats.requests.values())
    assert samples["retries"].sum() == attempts - 2400
    assert n_faults <= attempts - 2400 <= n_faults + 0.01 * 2400
    assert set(samples["source"]) == {"collected"}
    assert samples["raw_output"].null_count() == 0 and samples["extracted"].null_count() == 0
    streamed = samples.filter(pl.col("model") == "mid")
    assert streamed["ttft_s"].null_count() == 0 and (streamed["ttft_s"] > 0).all()
    assert samples.filter(pl.col("model") != "mid")["ttft_s"].null_count() == 1600
    metrics = json.loads((tmp_path / "metrics/collect/scripted.json").read_text())
    # this run's requests are printed (above), never in the tracked metrics
    assert "requests" not in metrics and "cache_hits" not in metrics
    usage = metrics["usage"]["stages"]["collect"]
    assert usage["total"]["retries"] == n_faults
    assert usage["total"]["prompt_tokens"] == samples["prompt_tokens"].sum()
    assert "ttft_s_mean" in usage["models"]["mid"] and "ttft_s_mean" not in usage["models"]["weak"]
    expected_cost = (
        samples["prompt_tokens"].sum() * 0.5 + samples["completion_tokens"].sum() * 1.5
    ) / 1e6
    assert usage["total"]["cost_usd"] == pytest.approx(expected_cost, rel=1e-5)
    responses = pl.read_parquet(tmp_path / "data/responses/scripted.parquet")
    row = responses.row(0, named=True)
    assert row["source"] == "collected" and row["temperature"] == 0.7 and row["seed"] == 11
    assert row["max_tokens"] == 256 and row["prompt_template"]

    # a rerun is served entirely from the cache
    server.reset_stats()
    again = responses_stage.run(params_of(params), "scripted")
    assert "0 requests, 2400 cached" in again
    assert sum(server.snapshot().requests.values()) == 0
    assert _cells(tmp_path / "data/responses/scripted.parquet") == expected_cells(items, names, 4)
    assert pl.read_parquet(tmp_path / "data/collect/scripted.samples.parquet").equals(samples)


def _backend(server, *, retries=2, timeout=5.0, key=API_KEY, concurrency=4):
    model = PanelModel(
        name="weak",
        model_id="test/weak",
        base_url_env=BASE_URL_ENV,
        api_key_env=API_KEY_ENV,
        concurrency=concurrency,
    )
    settings = LLMSettings(timeout_s=timeout, max_retries=retries, backoff_base_s=0.01)
    env = {BASE_URL_ENV: server.base_url, API_KEY_ENV: key}
    return OpenAIBackend([model], settings, environ=env)


def _ask(backend, items, *, sample=0, stream=False):
    req = ChatRequest(
        model="weak",
        model_id="test/weak",
        messages=(Message("user", items[0]["question"]),),
        sampling=Sampling(0.7, 64),
        sample=sample,
        stream=stream,
    )

    async def go():
        try:
            return await backend.complete(req)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_retry_after_is_honoured(server_factory):
    items = make_items(3)
    faults = FaultPlan(rate=1.0, kinds=("429",), retry_after="1", max_faults_per_key=1)
    server = server_factory(items, faults=faults)
    comp = _ask(_backend(server), items)
    assert comp.retries == 1
    times = [t for _, t, _ in server.snapshot().timeline]
    assert len(times) == 2 and times[1] - times[0] >= 0.95  # backoff alone would be ~0.01 s


@pytest.mark.parametrize("stream", [False, True])
def test_clear_error_after_the_last_retry_without_the_key(server_factory, stream):
    items = make_items(3)
    faults = FaultPlan(rate=1.0, kinds=("500",), max_faults_per_key=None)
    server = server_factory(items, faults=faults)
    with pytest.raises(LLMCallError) as err:
        _ask(_backend(server, retries=2), items, stream=stream)
    message = str(err.value)
    assert "'weak'" in message and "test/weak" in message and server.base_url in message
    assert "3 attempts" in message and "HTTP 500" in message
    assert API_KEY not in message and "***" in message  # the server echoed the key
    assert err.value.__cause__ is None and err.value.__context__ is None
    assert sum(server.snapshot().requests.values()) == 3


def test_bad_key_is_not_retried_and_names_the_variable(server_factory):
    items = make_items(3)
    server = server_factory(items)
    with pytest.raises(LLMCallError, match=rf"HTTP 401.*\${API_KEY_ENV}.*not retried"):
        _ask(_backend(server, key="sk-wrong-key-000000"), items)
    assert sum(server.snapshot().requests.values()) == 0  # refused before counting
    assert len(server.snapshot().auth_headers) == 1


@pytest.mark.parametrize("kind", ["slow", "reset", "malformed"])
@pytest.mark.parametrize("stream", [False, True])
def test_each_fault_is_retried(server_factory, kind, stream):
    items = make_items(3)
    faults = FaultPlan(rate=1.0, kinds=(kind,), slow_s=0.6, max_faults_per_key=2)
    server = server_factory(items, faults=faults)
    comp = _ask(_backend(server, retries=3, timeout=0.3), items, stream=stream)
    assert comp.retries == 2
    assert comp.text and comp.finish_reason == "stop"
    assert server.snapshot().fault_kinds[kind] == 2


def test_missing_environment_variable_is_a_config_error():
    model = PanelModel(
        name="m", model_id="x", base_url_env="NO_SUCH_URL_VAR_123", api_key_env="NO_KEY_VAR_123"
    )
    with pytest.raises(ConfigError, match="NO_SUCH_URL_VAR_123"):
        OpenAIBackend([model], LLMSettings(), environ={})
    with pytest.raises(ConfigError, match="NO_KEY_VAR_123"):
        OpenAIBackend([model], LLMSettings(), environ={"NO_SUCH_URL_VAR_123": "http://x/v1"})


def test_concurrency_limit_per_endpoint(server_factory):
    items = make_items(40)
    server = server_factory(items, latency_s=0.05)
    backend = _backend(server, concurrency=3)
    reqs = [
        ChatRequest("weak", "test/weak", (Message("user", r["question"]),), Sampling(0.7, 64))
        for r in items
    ]

    async def go():
        t0 = time.perf_counter()
        try:
            await asyncio.gather(*(backend.complete(r) for r in reqs))
        finally:
            await backend.aclose()
        return time.perf_counter() - t0

    elapsed = asyncio.run(go())
    answered = sorted(t for _, t, o in server.snapshot().timeline if o == "answered")
    # with 3 in flight and 50 ms each, 40 calls need at least ceil(40/3) * 50 ms
    assert elapsed >= 14 * 0.05 * 0.95
    # no 50 ms window ever completed more than 3 + slack requests
    assert max(sum(1 for u in answered if t <= u < t + 0.045) for t in answered) <= 4


def test_truncated_generations_are_reported_and_not_guessed(
    tmp_path, monkeypatch, server_factory, llm_env
):
    # model "weak" always hits max_tokens: half its outputs were cut before any final
    # answer (mid-reasoning numbers only), half after an explicit "The answer is";
    # "mid" answers an empty \boxed{} (nothing extracted: not parsed)
    items = [i for i in make_items(20) if i["answer_type"] == "numeric"]
    base = scripted_answer(items)

    def answer(body, sample):
        if body["model"] == "test/weak":
            prompt = body["messages"][-1]["content"]
            text = "Let me think. 12 apples, then 5 more, so far 17 and"
            if any(it["question"] in prompt for it in items[::2]):
                return ("Step 1 done. The answer is 17. Checking: 12 + 5", "length")
            return (text, "length")
        if body["model"] == "test/mid":
            return "I am not sure. \\boxed{}"
        return base(body, sample)

    from tests.llm.fake_openai_server import FakeOpenAIServer

    server = FakeOpenAIServer(answer, api_key=API_KEY).start()
    try:
        llm_env(server)
        write_project(tmp_path, items, models=panel(["weak", "mid", "strong"], trials=1))
        monkeypatch.chdir(tmp_path)
        text = responses_stage.run(params_of(load_params("params.yaml")), "scripted")
    finally:
        server.stop()
    samples = pl.read_parquet(tmp_path / "data/collect/scripted.samples.parquet")
    weak = samples.filter(pl.col("model") == "weak")
    cut = weak.filter(pl.col("raw_output").str.starts_with("Let me"))
    marked = weak.filter(pl.col("raw_output").str.starts_with("Step 1"))
    assert cut.height and marked.height and cut.height + marked.height == len(items)
    # the last-number fallback would read 17 out of the half-written reasoning: not graded
    assert cut["correct"].null_count() == cut.height
    assert set(cut["skipped"]) == {"cut off at max_tokens before a final answer"}
    assert marked["correct"].null_count() == 0  # an explicit answer before the cut counts
    mid = samples.filter(pl.col("model") == "mid")
    assert mid["extracted"].null_count() == mid.height and not mid["correct"].any()
    m = json.loads((tmp_path / "metrics/collect/scripted.json").read_text())["output"]
    assert m["n_truncated"] == len(items) and m["by_model"]["weak"]["truncated"] == len(items)
    assert m["by_model"]["mid"]["parsed"] == 0
    assert m["n_parsed"] == samples.filter(pl.col("extracted").is_not_null()).height
    assert m["ungraded"] == {"cut off at max_tokens before a final answer": cut.height}
    assert f"hit max_tokens {len(items)}" in text
    # the ungraded samples are not trials: the response cells count only graded ones
    responses = pl.read_parquet(tmp_path / "data/responses/scripted.parquet")
    weak_cells = responses.filter(pl.col("model") == "weak")
    assert weak_cells["n_trials"].sum() == marked.height
