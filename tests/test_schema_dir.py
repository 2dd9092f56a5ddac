"""Where the loader looks for schemas: override, then package data, then the checkout.

The wheel itself is exercised in tests/packaging; these pin the order cheaply.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from curation import schemas
from curation.schemas import SCHEMA_DIR_ENV, schema_dir

CHECKOUT = Path(__file__).resolve().parent.parent / "schemas"


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Pretend ``curation`` is installed from a wheel: its folder has ``_schemas/``."""
    package = tmp_path / "site-packages" / "curation"
    (package / "_schemas").mkdir(parents=True)
    monkeypatch.setattr(schemas.resources, "files", lambda name: package)
    monkeypatch.delenv(SCHEMA_DIR_ENV, raising=False)
    return package / "_schemas"


def test_checkout_reads_the_top_level_schemas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SCHEMA_DIR_ENV, raising=False)
    assert schema_dir() == CHECKOUT


def test_package_data_comes_first_when_installed(installed: Path) -> None:
    assert schema_dir() == installed


def test_override_wins(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SCHEMA_DIR_ENV, str(tmp_path))
    assert schema_dir() == tmp_path
