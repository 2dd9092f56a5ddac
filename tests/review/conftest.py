"""Fixtures of the review tests: a seeded queue in a temp project, a live server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from review_fixtures import make_project

from curation.params_model import ParamsFile, read_params
from curation.review import ReviewServer, ReviewSettings, ReviewStore, seed


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def params(project: Path) -> ParamsFile:
    return read_params(project / "params.yaml")


@pytest.fixture
def config(params: ParamsFile) -> ReviewSettings:
    return params.review


@pytest.fixture
def store(project: Path, params: dict, config) -> ReviewStore:
    s = ReviewStore.create(config.db)
    seed(s, list(config.candidates), config=config, benchmarks=params.benchmarks)
    return s


@pytest.fixture
def server(store: ReviewStore) -> Iterator[ReviewServer]:
    with ReviewServer(store, host="127.0.0.1", port=0) as srv:
        yield srv
