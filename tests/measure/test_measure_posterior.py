"""Metrics over posterior draws: mean and equal-tailed intervals."""

from __future__ import annotations

import numpy as np
import pytest

from curation.measure import Beta, Interval, ddm, max_gap, summarize_draws, summarize_posterior
from curation.measure import top_k_sum as tks

rng = np.random.default_rng(7)
Z = rng.random(40)
DRAWS = np.clip(Z + rng.normal(0, 0.03, size=(300, Z.size)), 0, 1)


def test_constant_draws_give_a_point_interval() -> None:
    draws = np.tile(Z, (5, 1))
    got = summarize_draws(draws, "ddm")
    assert got.mean == pytest.approx(ddm(Z), abs=1e-14)
    assert got.low == pytest.approx(got.high, abs=1e-14)


@pytest.mark.parametrize(
    ("name", "fn"),
    [
        ("ddm", ddm),
        ("max_gap", max_gap),
        ("top_3_sum", lambda z: tks(z, 3)),
        ("top_5_sum", lambda z: tks(z, 5)),
    ],
)
def test_vectorised_names_match_the_scalar_metric(name, fn) -> None:
    by_name = summarize_draws(DRAWS, name)
    by_call = summarize_draws(DRAWS, fn)
    for field in ("mean", "low", "high"):
        assert getattr(by_name, field) == pytest.approx(getattr(by_call, field), abs=1e-12)
    assert by_name.low <= by_name.mean <= by_name.high
    assert by_name.level == 0.9


def test_interval_is_equal_tailed_quantiles() -> None:
    values = np.array([max_gap(row) for row in DRAWS])
    got = summarize_draws(DRAWS, "max_gap", level=0.8)
    assert (got.low, got.high) == pytest.approx(tuple(np.quantile(values, [0.1, 0.9])))


def test_summarize_posterior_with_a_beta_target() -> None:
    s = summarize_posterior(DRAWS, target=Beta(2, 2))
    assert s.target == "Beta(2, 2)" and s.n_draws == 300
    assert s.ddm.mean == pytest.approx(np.mean([ddm(r, Beta(2, 2)) for r in DRAWS]))
    assert isinstance(s.top_5_sum, Interval) and s.top_5_sum.mean >= s.top_3_sum.mean


@pytest.mark.parametrize(
    ("draws", "kwargs", "message"),
    [
        (Z, {}, "shape"),
        (np.empty((0, 3)), {}, "at least one"),
        (DRAWS + 1, {}, "outside"),
        (DRAWS, {"metric": "median"}, "unknown metric"),
        (DRAWS, {"level": 1.0}, "level"),
    ],
)
def test_errors(draws, kwargs, message) -> None:
    kwargs = {"metric": "ddm", **kwargs}
    with pytest.raises(ValueError, match=message):
        summarize_draws(draws, **kwargs)
