"""Collection through worker processes: same answers, same retries, same crash safety."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from curation.llm import (
    CompletionCache,
    LLMCallError,
    OpenAIBackend,
    acollect,
    require_panel,
)
from curation.llm._processes import share
from curation.params_model import validate_params
from curation.schemas import conform
from tests.conftest import REPO, minimal_benchmark
from tests.llm.conftest import (
    API_KEY,
    API_KEY_ENV,
    BASE_URL_ENV,
    expected_cells,
    make_items,
    panel,
)
from tests.llm.fake_openai_server import FAULT_KINDS, FaultPlan


def _params(models: list[dict]) -> dict:
    return {
        "benchmarks": {"scripted": minimal_benchmark("scripted")},
        "panel": {"models": models},
        "collect": {"enabled": True, "backend": "openai", "seed": 11, "progress": False},
        "llm": {"timeout_s": 5, "max_retries": 10, "backoff_base_s": 0.01, "backoff_max_s": 0.2},
    }


def _collect(items: list[dict], params: dict, cache: Path, env: dict[str, str], processes: int):
    checked = validate_params(params)
    models = require_panel(checked.panel)
    llm = checked.llm.model_copy(update={"processes": processes})
    frame = conform(pl.DataFrame(items, infer_schema_length=None), "item")

    async def run():
        backend = OpenAIBackend(models, llm, environ=env)
        try:
            with CompletionCache(cache) as store:
                return await acollect(
                    frame,
                    benchmark="scripted",
                    models=models,
                    backend=backend,
                    cache=store,
                    collect=checked.collect,
                    llm=llm,
                )
        finally:
            await backend.aclose()

    return asyncio.run(run())


def test_shares_split_every_limit_exactly():
    for limit in (1, 2, 7, 64):
        for n in (1, 2, 3, 4):
            parts = [share(limit, k, n) for k in range(n)]
            assert sum(parts) == limit and max(parts) - min(parts) <= 1


def test_two_processes_answer_every_call_once_through_faults(tmp_path, server_factory):
    items = make_items(60)
    faults = FaultPlan(rate=0.3, kinds=FAULT_KINDS, retry_after="0.05", slow_s=1.0, seed=3)
    server = server_factory(items, faults=faults)
    env = {BASE_URL_ENV: server.base_url, API_KEY_ENV: API_KEY}
    names = ["weak", "strong"]
    params = _params(panel(names, trials=2, concurrency=8, stream=("strong",)))
    params["llm"]["timeout_s"] = 0.5
    cache = tmp_path / "cache.sqlite"

    result = _collect(items, params, cache, env, processes=2)

    assert result.stats.requests == 240 and result.stats.cache_hits == 0
    cells = set(result.responses.select("model", "item", "n_trials", "n_correct").iter_rows())
    assert cells == expected_cells(items, names, 2)
    stats = server.snapshot()
    assert set(stats.answered.values()) == {1}  # every call answered exactly once
    attempts = sum(stats.requests.values())
    assert result.samples["retries"].sum() == attempts - 240  # each retry was a real attempt
    assert sum(stats.faults.values()) > 0.2 * 240
    assert set(result.samples["source"]) == {"collected"}

    again = _collect(items, params, cache, env, processes=2)  # a rerun asks nothing
    assert again.stats.requests == 0 and again.stats.cache_hits == 240
    assert sum(server.snapshot().requests.values()) == attempts


def test_more_processes_than_slots_still_answers_everything(tmp_path, server_factory):
    items = make_items(12)
    server = server_factory(items)
    env = {BASE_URL_ENV: server.base_url, API_KEY_ENV: API_KEY}
    params = _params(panel(["weak"], trials=1, concurrency=1))
    result = _collect(items, params, tmp_path / "cache.sqlite", env, processes=3)
    assert result.stats.requests == 12
    assert set(result.responses.select("model", "item", "n_trials", "n_correct").iter_rows()) == (
        expected_cells(items, ["weak"], 1)
    )


def test_a_fatal_error_in_a_worker_is_raised_and_stops_the_rest(tmp_path, server_factory):
    items = make_items(40)
    server = server_factory(items)
    env = {BASE_URL_ENV: server.base_url, API_KEY_ENV: "sk-wrong-key-1234567890"}
    params = _params(panel(["weak"], trials=2, concurrency=4))
    with pytest.raises(LLMCallError) as err:
        _collect(items, params, tmp_path / "cache.sqlite", env, processes=2)
    assert err.value.model == "weak" and "HTTP 401" in str(err.value)
    assert API_KEY_ENV in str(err.value) and "sk-wrong" not in str(err.value)


_RUN = """
import sys
from tests.llm.test_processes import _collect, _params
from tests.llm.conftest import make_items, panel, BASE_URL_ENV, API_KEY_ENV, API_KEY
items = make_items(150)
env = {BASE_URL_ENV: sys.argv[1], API_KEY_ENV: API_KEY}
_collect(items, _params(panel(["weak", "strong"], trials=2, concurrency=8)), sys.argv[2], env, 2)
"""


@pytest.mark.long(seconds=20)
def test_kill_9_of_the_parent_stops_the_workers_and_loses_only_calls_in_flight(
    tmp_path, server_factory
):
    items = make_items(150)
    server = server_factory(items, latency_s=0.01)
    cache = tmp_path / "cache.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_DISABLE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN, server.base_url, str(cache)],
        cwd=REPO,
        env=env,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 90
    while sum(server.snapshot().answered.values()) < 150:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        assert time.monotonic() < deadline, "collection made no progress"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    time.sleep(1.0)  # the workers notice within ~50 ms; give a loaded machine time
    answered = sum(server.snapshot().answered.values())
    time.sleep(0.5)
    assert sum(server.snapshot().answered.values()) == answered, "workers outlived the parent"
    assert answered < 600, "the collection ran to the end: the kill was not mid-run"
    rows = sqlite3.connect(cache).execute("SELECT COUNT(*) FROM completions").fetchone()[0]
    assert answered - 8 <= rows <= answered  # only calls in flight (concurrency 8) are lost
