"""One built DVC repo for the whole test run: `dvc repro` of the toy project runs once
(not once per xdist worker: `build_once`), every test that needs a built pipeline works on
its own copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import build_once, shared_tmp
from tests.pipelines._dvc import BuiltRepo, copy_repo, run, write_dvc_project


def _build(folder: Path) -> None:
    root = write_dvc_project(folder / "repo")
    proc = run(root, "dvc", "repro")
    first = proc.stdout + proc.stderr  # DVC's warnings go to stderr
    run(root, "git", "add", "-A")
    run(root, "git", "commit", "-q", "-m", "baseline")
    (folder / "first-repro.txt").write_text(first)


@pytest.fixture(scope="session")
def built_repo(tmp_path_factory: pytest.TempPathFactory) -> BuiltRepo:
    """The toy repo after one `dvc repro`, shared by every worker: read it, never change it."""
    folder = build_once(shared_tmp(tmp_path_factory), "built-repo", _build)
    return BuiltRepo(folder / "repo", (folder / "first-repro.txt").read_text())


@pytest.fixture
def repo(built_repo: BuiltRepo, tmp_path: Path) -> Path:
    """A private copy of the built repo (tests change it freely)."""
    return copy_repo(built_repo.path, tmp_path / "repo")
