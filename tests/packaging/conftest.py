"""Registers the ``packaging`` marker: tests that build and install the wheel.

Select them with ``-m packaging`` (or leave them out with ``-m "not packaging"``).
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "packaging: builds the wheel and tests it installed outside the checkout"
    )
