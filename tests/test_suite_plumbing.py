"""The suite's own plumbing (tests/conftest.py): long tests first, shared builds once.

Issue 27: `pytest -n 2` built the real-DVC project once per xdist worker and ran the
long tests late, so they finished last and alone."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import REPO, build_once, long_first


@dataclass
class FakeItem:
    nodeid: str
    mark: pytest.Mark | None = field(default=None)

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return self.mark if name == "long" else None


def _long(seconds: float) -> pytest.Mark:
    return pytest.mark.long(seconds=seconds).mark


def test_long_tests_go_first_longest_first_the_rest_keep_their_order() -> None:
    items = [
        FakeItem("a"),
        FakeItem("b", _long(30)),
        FakeItem("c"),
        FakeItem("d", _long(200)),
        FakeItem("e", _long(30)),
        FakeItem("f"),
    ]
    ordered = long_first(items)
    assert [i.nodeid for i in ordered] == ["d", "b", "e", "a", "c", "f"]
    assert long_first(ordered) == ordered


def test_a_long_mark_without_seconds_is_refused() -> None:
    with pytest.raises(pytest.UsageError, match="seconds=N"):
        long_first([FakeItem("x", pytest.mark.long.mark)])


def test_this_session_runs_its_long_tests_first(request: pytest.FixtureRequest) -> None:
    """The hook is wired in: in the collected order, no long test follows a short one."""
    marked = [item.get_closest_marker("long") is not None for item in request.session.items]
    assert marked == sorted(marked, reverse=True)


def test_every_test_on_the_shared_dvc_build_is_long(request: pytest.FixtureRequest) -> None:
    """A test on `built_repo` waits for the shared build (~50 s) when it comes before the
    build is done. Unmarked, it sits at its collected place, which worksteal's first split
    (the first half of the list to one worker, the second half to the other) can make the
    other worker's first test: that worker then idled ~48 s on the lock (issue 27). Marked
    long, it is in the front half, queued behind the test that builds."""
    unmarked = [
        item.nodeid
        for item in request.session.items
        if "built_repo" in getattr(item, "fixturenames", ())
        and item.get_closest_marker("long") is None
    ]
    assert not unmarked, f"mark these @pytest.mark.long(seconds=N): {unmarked}"


def test_the_suite_balances_with_worksteal() -> None:
    """Long tests first only helps with worksteal: `--dist load` hands the whole front of
    the list (every long test) to the first worker."""
    ini = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "--dist worksteal" in ini["addopts"]
    assert "--strict-markers" in ini["addopts"]  # a misspelt @pytest.mark.long is an error


BUILD = """
import sys, time
from pathlib import Path
from tests.conftest import build_once

def build(folder):
    with open(sys.argv[2], "a") as log:
        log.write("built\\n")
    time.sleep(1.5)
    (folder / "made").write_text("x")

print(build_once(Path(sys.argv[1]), "thing", build))
"""


def test_two_processes_build_once_and_share_the_folder(tmp_path: Path) -> None:
    log = tmp_path / "log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", BUILD, str(tmp_path), str(log)],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=60)[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert outs == [str(tmp_path / "thing")] * 2
    assert log.read_text() == "built\n"
    assert (tmp_path / "thing" / "made").read_text() == "x"


def test_a_failed_build_is_started_over_from_an_empty_folder(tmp_path: Path) -> None:
    def broken(folder: Path) -> None:
        (folder / "half").write_text("x")
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError, match="build failed"):
        build_once(tmp_path, "thing", broken)
    seen: list[list[str]] = []
    folder = build_once(tmp_path, "thing", lambda f: seen.append(sorted(os.listdir(f))))
    assert seen == [[]] and folder == tmp_path / "thing"
    build_once(tmp_path, "thing", lambda f: seen.append(["again"]))  # built: not again
    assert seen == [[]]
