"""kill -9 in the middle of a collection, then resume; and no key in any file afterwards."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import polars as pl

from curation.params import load_params
from pipelines import responses as responses_stage
from tests.conftest import REPO, params_of
from tests.llm.conftest import (
    API_KEY,
    API_KEY_ENV,
    BASE_URL_ENV,
    expected_cells,
    make_items,
    panel,
    write_project,
)
from tests.llm.fake_openai_server import FaultPlan, request_key

_RUN = (
    "from curation.params_model import read_params\n"
    "from pipelines import responses as responses_stage\n"
    "print(responses_stage.run(read_params('params.yaml'), 'scripted'))\n"
)


def _committed_server_keys(cache: Path) -> set[str]:
    """The server's keys of every request whose answer is committed in the cache."""
    con = sqlite3.connect(cache)
    try:
        rows = con.execute("SELECT request FROM completions").fetchall()
    finally:
        con.close()
    keys = set()
    for (text,) in rows:
        req = json.loads(text)
        body = {
            "model": req["model_id"],
            "messages": [{"role": r, "content": c} for r, c in req["messages"]],
        }
        keys.add(request_key(body, req["sample"]))
    return keys


def test_kill_9_then_resume_repeats_no_answered_call(
    tmp_path, monkeypatch, server_factory, llm_env
):
    items = make_items(150)
    names = ["weak", "strong"]
    concurrency = 8
    server = server_factory(items, latency_s=0.01)
    llm_env(server)
    write_project(tmp_path, items, models=panel(names, trials=2, concurrency=concurrency))
    total = 150 * 2 * 2
    target = random.randint(60, total - 150)  # kill after this many answers

    env = {
        **os.environ,
        BASE_URL_ENV: server.base_url,
        API_KEY_ENV: API_KEY,
        "TQDM_DISABLE": "1",
        "PYTHONPATH": str(REPO),
    }
    proc = subprocess.Popen(
        [sys.executable, "-c", _RUN],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while sum(server.snapshot().answered.values()) < target:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "collection made no progress"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    time.sleep(0.3)  # let the server finish answering calls that were in flight

    before = server.snapshot()
    answered_before = {k for k, n in before.answered.items() if n}
    committed = _committed_server_keys(tmp_path / ".llm-cache/completions.sqlite")
    lost = answered_before - committed  # answered by the server, not yet stored by the client
    assert 0 < len(committed) < total, f"kill at {target} answers was not mid-run"
    assert committed <= answered_before
    assert len(lost) <= concurrency, "more answers lost than could be in flight"
    assert not (tmp_path / "data/responses/scripted.parquet").exists()  # nothing half-written

    monkeypatch.chdir(tmp_path)
    text = responses_stage.run(params_of(load_params("params.yaml")), "scripted")

    after = server.snapshot()
    assert f"{total - len(committed)} requests, {len(committed)} cached" in text
    for key in committed:
        assert after.requests[key] == before.requests[key], "a stored answer was asked again"
    answered_twice = {k for k, n in after.answered.items() if n > 1}
    assert answered_twice <= lost
    assert set(after.answered) == set(after.requests)  # every request got its answer
    df = pl.read_parquet(tmp_path / "data/responses/scripted.parquet")
    assert set(df.select("model", "item", "n_trials", "n_correct").iter_rows()) == (
        expected_cells(items, names, 2)
    )


def test_no_api_key_in_any_file_after_a_run(tmp_path, monkeypatch, server_factory, llm_env):
    items = make_items(30)
    # the server echoes the Authorization header in every answer and in its 500 errors
    faults = FaultPlan(rate=0.3, kinds=("500", "429"), retry_after="0.01", seed=2)
    server = server_factory(items, faults=faults, echo_auth=True)
    llm_env(server)
    write_project(tmp_path, items, models=panel(["weak", "strong"], trials=2, stream=("strong",)))
    monkeypatch.chdir(tmp_path)
    responses_stage.run(params_of(load_params("params.yaml")), "scripted")

    assert f"Bearer {API_KEY}" in server.snapshot().auth_headers  # the key was really used
    samples = pl.read_parquet(tmp_path / "data/collect/scripted.samples.parquet")
    assert samples["raw_output"].str.contains("Bearer ***", literal=True).all()
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".sqlite") for p in files)
    secret = API_KEY.encode()
    leaking = [str(p) for p in files if secret in p.read_bytes()]
    assert leaking == []
    # the key's distinctive tail is nowhere either (e.g. not split or re-encoded)
    assert not [p for p in files if secret[-12:] in p.read_bytes()]
