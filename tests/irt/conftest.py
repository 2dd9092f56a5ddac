"""Shared simulated data for the IRT tests (session-scoped: simulate and fit once)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from curation.irt import simulate_responses


def aligned(fitted: pl.DataFrame, truth: dict, column: str = "b", key: str = "b") -> tuple:
    """Estimates and true values in the same item order (fits keep first-appearance order)."""
    lookup = dict(zip(truth["items"], truth[key], strict=True))
    est = fitted[column].to_numpy()
    return est, np.array([lookup[i] for i in fitted["item"]])


@pytest.fixture(scope="session")
def sim_1pl() -> tuple[pl.DataFrame, dict]:
    return simulate_responses(n_models=12, n_items=2000, n_trials=32, seed=11)


@pytest.fixture(scope="session")
def sim_2pl() -> tuple[pl.DataFrame, dict]:
    return simulate_responses(n_models=12, n_items=2000, n_trials=32, model="2pl", seed=12)
