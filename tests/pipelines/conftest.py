"""One built DVC repo for the whole session: `dvc repro` of the toy project runs once,
every test that needs a built pipeline works on its own copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines._dvc import BuiltRepo, copy_repo, dvc, run, write_dvc_project


@pytest.fixture(scope="session")
def built_repo(tmp_path_factory: pytest.TempPathFactory) -> BuiltRepo:
    root = write_dvc_project(tmp_path_factory.mktemp("built") / "repo")
    first = dvc(root, "repro")
    run(root, "git", "add", "-A")
    run(root, "git", "commit", "-q", "-m", "baseline")
    return BuiltRepo(root, first)


@pytest.fixture
def repo(built_repo: BuiltRepo, tmp_path: Path) -> Path:
    """A private copy of the built repo (tests change it freely)."""
    return copy_repo(built_repo.path, tmp_path / "repo")
