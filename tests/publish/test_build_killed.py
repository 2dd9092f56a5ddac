"""The build stage killed with SIGKILL at many points: dist/ and the metrics are always one
whole build (the previous or the new one), no scratch file lands inside an output, and
the next run clears what the dead process left in .curate-tmp/."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from publish_project import accepted_rows, run_subsets_and_build, write_accepted

REPO = Path(__file__).resolve().parents[2]
KILL_FRACTIONS = (0.15, 0.3, 0.45, 0.6, 0.75, 0.9)


def _outputs(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for d in ("dist", "metrics/build")
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


def _start_build(root: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_DATASETS_OFFLINE": "1"}
    return subprocess.Popen(
        [sys.executable, str(REPO / "pipelines/build.py"), "--benchmark", "toy"],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.long(seconds=60)
def test_build_killed_at_many_points_leaves_one_whole_build(project: Path) -> None:
    run_subsets_and_build(project)
    old = _outputs(project)
    saved = project.parent / "old-build"  # the old build, as `dvc checkout` brings it back
    for d in ("dist", "metrics/build"):
        shutil.copytree(project / d, saved / d)
    write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    started = time.perf_counter()
    proc = _start_build(project)
    assert proc.wait(timeout=300) == 0
    seconds = time.perf_counter() - started
    new = _outputs(project)
    assert new != old  # the accepted item changes the build (same version: unreleased)

    outcomes = set()
    for fraction in KILL_FRACTIONS:
        for d in ("dist", "metrics/build"):
            shutil.rmtree(project / d)
            shutil.copytree(saved / d, project / d)
        assert _outputs(project) == old
        proc = _start_build(project)  # the accepted item is in: it builds `new`
        try:
            proc.wait(timeout=seconds * fraction)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        now = _outputs(project)
        assert now in (old, new), f"killed at {fraction:.0%}: a mix of two builds"
        outcomes.add("old" if now == old else "new")
        assert not any(".tmp" in p or ".old-" in p for p in now)
    assert "old" in outcomes  # some kill landed before the commit
    # the next run clears what the killed processes left and builds the new one whole
    assert (project / ".curate-tmp").exists()
    proc = _start_build(project)
    assert proc.wait(timeout=300) == 0
    assert _outputs(project) == new
    scratch = project / ".curate-tmp"  # only this (living) test process's own folder
    left = {p.name for p in scratch.iterdir()} if scratch.exists() else set()
    assert left <= {str(os.getpid())}, left
