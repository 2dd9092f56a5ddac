"""DVC params per key: a transport key (a timeout, retries, concurrency, the progress bar)
reruns no stage, an output-changing key reruns the stages that read it.

dvc.yaml lists ``llm`` and ``collect`` key by key, every key but the transport ones
(``curation.settings.Transport``; ``scripts/stage_deps.py`` writes the lists). With the
whole sections listed, as before, the first check fails: `dvc status` reported
responses, fill and judge changed after ``llm.timeout_s`` moved. Real DVC, on a copy of
the session's built toy repo (conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.pipelines._dvc import PER_BENCHMARK, dvc

BENCHMARKS = ("toy", "toy2")
CALLING = ("responses", "fill", "judge")
"""The stages that call a model (they read ``llm``)."""


def _edit(repo: Path, **changes: Any) -> None:
    """Set dotted ``section__key=value`` entries of the copy's params.yaml."""
    path = repo / "params.yaml"
    params = yaml.safe_load(path.read_text())
    for dotted, value in changes.items():
        section, key = dotted.split("__")
        params[section][key] = value
    path.write_text(yaml.safe_dump(params, sort_keys=False))


def _stale(repo: Path) -> dict[str, list[str]]:
    """`dvc status`: stage -> the params keys it reports changed (empty: other deps)."""
    status = json.loads(dvc(repo, "status", "--json") or "{}")
    out: dict[str, list[str]] = {}
    for stage, changes in status.items():
        keys: list[str] = []
        for change in changes:
            for dep in change.get("changed deps", {}).values() if isinstance(change, dict) else ():
                keys += sorted(dep) if isinstance(dep, dict) else []
        out[stage] = keys
    return out


# its own call takes ~10 s; the shared build it may wait for takes ~50 (conftest.py)
@pytest.mark.long(seconds=60)
def test_transport_keys_rerun_nothing_and_output_keys_rerun_their_stages(repo: Path):
    assert _stale(repo) == {}  # the copy is up to date
    built = (repo / "params.yaml").read_text()
    # transport: the toy leaves them to their defaults, so this also adds keys
    _edit(
        repo,
        llm__timeout_s=5,
        llm__connect_timeout_s=2,
        llm__max_retries=1,
        llm__default_concurrency=2,
        llm__processes=2,
        collect__progress=False,
    )
    assert _stale(repo) == {}, "a transport key made a stage stale"
    assert "Running stage" not in dvc(repo, "repro", "--dry")

    _edit(repo, fill__seed=7)
    assert _stale(repo) == {f"fill@{b}": ["fill"] for b in BENCHMARKS}

    (repo / "params.yaml").write_text(built)
    _edit(repo, llm__send_seed=False)  # an llm key that changes answers
    stale = _stale(repo)
    assert stale == {f"{s}@{b}": ["llm.send_seed"] for s in CALLING for b in BENCHMARKS}
    assert set(CALLING) < set(PER_BENCHMARK)
