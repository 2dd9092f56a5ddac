"""Shared fixtures of the estimation tests: a bank calibrated on a simulated world."""

from __future__ import annotations

import polars as pl
import pytest

from curation.estimate import ItemBank
from curation.irt import fit
from curation.subsets import model_scores
from tests.estimate._world import world


@pytest.fixture(scope="session")
def bank_1pl() -> tuple[ItemBank, pl.DataFrame]:
    """A bank calibrated on 120 models; 30 held-out models' responses beside it."""
    resp = world("1pl")
    models = sorted(resp["model"].unique().to_list())
    train, test = models[:120], models[120:]
    result = fit(resp.filter(pl.col("model").is_in(train)), model="1pl")
    bank = ItemBank.from_fit(result, benchmark="sim")
    bank = bank.with_panel_scores(model_scores(resp.filter(pl.col("model").is_in(train))))
    return bank, resp.filter(pl.col("model").is_in(test))
