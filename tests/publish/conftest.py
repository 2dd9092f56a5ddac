"""Fixtures of the build/publish tests: a synthetic project, and a fake Hub on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_hub import FakeHub
from publish_project import make_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub() as server:
        yield server
