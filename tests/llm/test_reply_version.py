"""Cached simulated replies are keyed by the code that computed them; real ones are not.

Without it a rerun after a simulator change served the old replies, so committed
outputs depended on what a checkout had cached (a fresh clone computed the new ones).
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import replace
from pathlib import Path

from curation.llm import (
    ChatRequest,
    Completion,
    CompletionCache,
    ItemTruth,
    Message,
    PlannedCall,
    Sampling,
    SimulatedBackend,
    cached_complete,
    run_calls,
)
from curation.llm._reply_version import PACKAGE_ROOT, reply_version, source_digest, stored_key


def _backend() -> SimulatedBackend:
    return SimulatedBackend(
        benchmark="b", truths={"q1": ItemTruth("4", "numeric")}, abilities={"m": 0.0}, seed=3
    )


class ChangedSimulator(SimulatedBackend):
    """The same simulation after a code change: same params, same namespace, new replies."""

    async def complete(self, request: ChatRequest) -> Completion:
        done = await super().complete(request)
        return replace(done, text="[simulated] v2 \\boxed{4}")


class RealEndpoint:
    """Stands for an OpenAI-compatible backend: its replies are the model's, not ours."""

    name = "openai"
    namespace = "openai"

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    def max_in_flight(self) -> int:
        return 1

    async def complete(self, request: ChatRequest) -> Completion:
        self.calls += 1
        return Completion(self.text, "stop", 1, 1, 0.0, None, 0, request.model_id, "openai")

    async def aclose(self) -> None:
        return None


def _request() -> ChatRequest:
    return ChatRequest(
        model="m",
        model_id="m",
        messages=(Message("user", "What is 2+2?"),),
        sampling=Sampling(0.7, 64, None, 0),
        item="q1",
    )


def test_a_changed_simulator_misses_the_cache_and_the_old_code_still_hits(tmp_path: Path):
    old, new = (
        _backend(),
        ChangedSimulator(
            benchmark="b", truths={"q1": ItemTruth("4", "numeric")}, abilities={"m": 0.0}, seed=3
        ),
    )
    assert old.namespace == new.namespace  # the params alone cannot tell them apart
    assert reply_version(old) != reply_version(new) != ""
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        first = asyncio.run(cached_complete(old, cache, _request()))
        assert not first.cached and "v2" not in first.completion.text
        again = asyncio.run(cached_complete(new, cache, _request()))
        assert not again.cached and "v2" in again.completion.text
        back = asyncio.run(cached_complete(old, cache, _request()))
        assert back.cached and back.completion == first.completion
        # the recorded request key is the request's, whichever code answered
        assert first.key == again.key == _request().key(old.namespace)


def test_the_panel_path_keys_by_code_too(tmp_path: Path):
    req = _request()
    call = PlannedCall(req, req.key(_backend().namespace), "t", "numeric", "4", None)
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        _, stats = asyncio.run(run_calls([call], _backend(), cache, progress=False))
        assert (stats.requests, stats.cache_hits) == (1, 0)
        _, stats = asyncio.run(run_calls([call], _backend(), cache, progress=False))
        assert (stats.requests, stats.cache_hits) == (0, 1)
        changed = ChangedSimulator(
            benchmark="b", truths={"q1": ItemTruth("4", "numeric")}, abilities={"m": 0.0}, seed=3
        )
        results, stats = asyncio.run(run_calls([call], changed, cache, progress=False))
        assert (stats.requests, stats.cache_hits) == (1, 0)
        assert "v2" in results[call.key].completion.text


def test_real_replies_are_keyed_by_the_request_alone(tmp_path: Path):
    """A code change must not cost a rerun of real calls (15-20 s each on a CPU panel)."""
    endpoint = RealEndpoint("4")
    assert reply_version(endpoint) == ""
    key = _request().key("openai")
    assert stored_key(key, "") == key
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        asyncio.run(cached_complete(endpoint, cache, _request()))
        hit = asyncio.run(cached_complete(RealEndpoint("other"), cache, _request()))
        assert hit.cached and hit.completion.text == "4"
        assert list(cache.keys()) == [key]  # caches written before this change still hit


def test_rows_of_two_code_versions_live_side_by_side(tmp_path: Path):
    req = _request()
    key = req.key("simulated:x")
    one, two = stored_key(key, "code:1"), stored_key(key, "code:2")
    assert len({key, one, two}) == 3 and len(one) == 64
    with CompletionCache(tmp_path / "c.sqlite") as cache:
        cache.put(one, req, Completion("a"), namespace="simulated:x")
        cache.put(two, req, Completion("b"), namespace="simulated:x")
        assert cache.get(one) == Completion("a") and cache.get(two) == Completion("b")
        assert cache.get(key) is None and cache.get(stored_key(key, "code:3")) is None


def test_the_digest_follows_every_source_file(tmp_path: Path):
    a = tmp_path / "a"
    (a / "sub").mkdir(parents=True)
    (a / "one.py").write_text("X = 1\n")
    (a / "sub" / "two.py").write_text("Y = 2\n")
    (a / "notes.txt").write_text("not code\n")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    assert source_digest(a) == source_digest(b)
    c = tmp_path / "c"
    shutil.copytree(a, c)
    (c / "sub" / "two.py").write_text("Y = 3\n")  # a simulator edit, deep in the tree
    assert source_digest(c) != source_digest(a)
    d = tmp_path / "d"
    shutil.copytree(a, d)
    (d / "notes.txt").write_text("edited\n")
    assert source_digest(d) == source_digest(a)
    assert (PACKAGE_ROOT / "llm" / "_simulate.py").is_file()  # the package itself is hashed
