"""The fill stage killed with SIGKILL in the middle of its search: every output stays
exactly as the last finished run left it (the resume journal lives outside them), and
the rerun resumes and writes the bytes a fresh project writes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from curation.paths import fill_journal_dir
from tests.conftest import REPO, copy_project

FILL = {"seed": 7, "insertions": 3, "rounds": 2, "parents": 2, "children": 2}
CALIBRATE = {
    "seed": 7,
    "tolerance": 0.05,
    "adaptive": {"first_batch": 4, "batch": 4, "max_trials": 16, "se_accept": 0.15},
}
OUTPUT_DIRS = ("data/fill/toy", "metrics/fill", "plots/fill")


def _set_fill(root: Path, **over: object) -> None:
    params = yaml.safe_load((root / "params.yaml").read_text())
    params["fill"] = {**FILL, **over}
    params["calibrate"] = CALIBRATE
    (root / "params.yaml").write_text(yaml.safe_dump(params))


def _outputs(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for d in OUTPUT_DIRS
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


def _start_fill(root: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, str(REPO / "pipelines/fill.py"), "--benchmark", "toy"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _fill(root: Path) -> str:
    proc = _start_fill(root)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    return out


def _journals(root: Path) -> list[list[dict]]:
    """Every search journal anywhere in the project (wherever the stage keeps it)."""
    found = []
    for path in root.rglob("journal.jsonl"):
        lines = path.read_text().splitlines()
        found.append([json.loads(ln) for ln in lines if ln.endswith("}")])
    return found


@pytest.mark.long(seconds=60)
def test_fill_killed_mid_search_keeps_outputs_and_resumes_to_fresh_bytes(
    annotated_toy: Path, tmp_path: Path
) -> None:
    project = copy_project(annotated_toy, tmp_path / "project")
    _set_fill(project)
    _fill(project)
    old = _outputs(project)
    assert any(p.endswith("candidates.parquet") for p in old)
    old_prints = {j[0]["fingerprint"] for j in _journals(project) if j}

    _set_fill(project, seed=8)  # a new search: every round is new work
    proc = _start_fill(project)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        started = [
            j
            for j in _journals(project)
            if j and j[0]["fingerprint"] not in old_prints and any(r["kind"] == "round" for r in j)
        ]
        if started:
            break
        assert proc.poll() is None, "the fill finished before a kill could land mid-search"
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert started, "no round of the new search was journaled in time"

    # the killed run changed no output: not even the journal's rounds are in them
    assert _outputs(project) == old

    # the rerun resumes from the journal and writes what a fresh project writes
    text = _fill(project)
    assert "(resumed)" in text
    fresh = copy_project(annotated_toy, tmp_path / "fresh")
    _set_fill(fresh, seed=8)
    _fill(fresh)
    assert _outputs(project) == _outputs(fresh)
    assert sorted(p.name for p in (project / "data/fill/toy").iterdir()) == [
        "candidates.parquet",
        "memory.parquet",
    ]
    assert (project / fill_journal_dir("toy") / "journal.jsonl").is_file()


def test_an_older_layouts_journal_leaves_the_output_folder(
    annotated_toy: Path, tmp_path: Path
) -> None:
    """A project from before the journal moved: its data/fill/<b>/journal.jsonl is not
    part of this run's output, so the next finished run removes it (a fresh clone has
    none)."""
    project = copy_project(annotated_toy, tmp_path / "project")
    _set_fill(project, insertions=1, rounds=1)
    stale = project / "data/fill/toy/journal.jsonl"
    stale.parent.mkdir(parents=True)
    stale.write_text('{"kind": "header", "fingerprint": "old"}\n')
    _fill(project)
    assert not stale.exists()
