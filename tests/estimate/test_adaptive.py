"""Adaptive tests and conformally scaled intervals (issue 28), checked against known truth.

The worlds (tests/estimate/_world.py) carry a model x item interaction the IRT fit does
not model, so neither the adaptive choice nor the conformal scale is tested on its own
assumptions.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from curation.estimate import (
    EstimationSettings,
    Observed,
    estimate,
    make_folds,
    next_items,
    observed_of,
    random_baseline,
    run_adaptive,
    select,
    validate,
)
from curation.estimate._validate import conformal_scale, conformal_score, cross_conformal
from tests.estimate._world import world

FAST = EstimationSettings(draws=1000, random_draws=4)


def test_next_items_are_unseen_distinct_deterministic_and_allowed(bank_1pl) -> None:
    bank, test = bank_1pl
    one = test.filter(pl.col("model") == "m130")
    start = select("adaptive", bank, 60, seed=1)
    assert start.m == 20 and start.total == 60 and start.block == 10 and start.adaptive
    obs = observed_of(bank, one.filter(pl.col("item").is_in(list(start.items))))
    picked = next_items(bank, obs, 10)
    assert picked.size == 10 and len(set(picked.tolist())) == 10
    assert not set(picked.tolist()) & set(obs.idx.tolist())
    assert np.array_equal(picked, next_items(bank, obs, 10))
    allowed = np.arange(0, bank.n_items, 3)
    assert set(next_items(bank, obs, 5, allowed=allowed).tolist()) <= set(allowed.tolist())
    with pytest.raises(ValueError, match="k must be"):
        next_items(bank, obs, 0)


def test_next_items_target_the_models_own_ability(bank_1pl) -> None:
    """A model that solved the 15 hardest items gets hard items next, one that failed the
    15 easiest gets easy items: the chosen items' mean b is in the matching quartile."""
    bank, _ = bank_1pl
    order = np.argsort(bank.b)
    easy, hard = order[:15], order[-15:]
    for solved, target in ((hard, "strong"), (easy, "weak")):
        # strong: solves even the hardest items; weak: fails even the easiest
        k = np.ones(15) if target == "strong" else np.zeros(15)
        obs = Observed(idx=np.sort(solved), k=k, n=np.ones(15))
        picked = next_items(bank, obs, 10)
        mean_b = float(bank.b[picked].mean())
        if target == "strong":
            assert mean_b > np.quantile(bank.b, 0.75)
        else:
            assert mean_b < np.quantile(bank.b, 0.25)


def test_an_adaptive_test_answers_exactly_its_budget(bank_1pl) -> None:
    bank, test = bank_1pl
    one = test.filter(pl.col("model") == "m140")
    full = observed_of(bank, one)
    start = select("adaptive", bank, 50, seed=0, start=15, block=7)
    pos = run_adaptive(bank, full, np.array([bank.index()[i] for i in start.items]), 50, 7)
    assert pos.size == 50 and len(set(pos.tolist())) == 50
    assert set(bank.index()[i] for i in start.items) <= set(pos.tolist())


@pytest.mark.parametrize("irt_model", ["1pl", "2pl"])
def test_adaptive_tests_beat_random_items_and_their_intervals_cover(irt_model: str) -> None:
    """150 held-out models (5 folds) of a world whose abilities spread over the items'
    range: a 60-item adaptive test estimates the full score better than 60 random items
    (median of 4 draws per fold), and its conformally scaled 90% intervals hold 85-95% of
    the true scores."""
    resp = world(irt_model)
    folds = make_folds(resp, model=irt_model, folds=5, seed=0)  # type: ignore[arg-type]
    base = random_baseline(folds, 60, FAST)
    v = validate(resp, 60, design="adaptive", settings=FAST, folds=folds, baseline=base)
    irt = v.estimators["irt"]
    assert v.n_models == 150
    assert irt.mae_pp < 0.9 * base["irt"].mae_pp, (irt.mae_pp, base["irt"].mae_pp)
    assert 0.85 <= irt.coverage <= 0.95, irt
    assert irt.spearman is not None and irt.spearman > 0.95


def test_conformal_scale_is_the_finite_sample_quantile() -> None:
    """ceil((n + 1) level)-th smallest score; too few scores: the largest finite one."""
    scores = np.arange(1.0, 20.0)  # 19 scores: rank ceil(20 * 0.9) = 18
    assert conformal_scale(scores, 0.9) == 18.0
    assert conformal_scale(np.array([0.5, 2.0, np.inf]), 0.9) == 2.0
    assert conformal_scale(np.array([]), 0.9) == 1.0


def test_conformal_score_is_distance_in_units_of_the_side() -> None:
    est = np.array([0.5, 0.5, 0.5, 0.5])
    lo = np.array([0.4, 0.4, 0.3, 0.5])
    hi = np.array([0.7, 0.7, 0.7, 0.5])
    true = np.array([0.6, 0.35, 0.5, 0.6])
    u = conformal_score(true, est, lo, hi)
    assert u.tolist() == pytest.approx([0.5, 1.5, 0.0, np.inf])


def test_cross_conformal_intervals_hold_their_level_on_exchangeable_models() -> None:
    """Intervals 2x too narrow (a misfit the posterior does not know of): each fold's
    scale from the others restores ~90% coverage; the overall scale is ~2."""
    rng = np.random.default_rng(0)
    n, folds = 2000, 5
    est = rng.uniform(0.2, 0.8, n)
    sd = 0.03
    true = est + rng.normal(0.0, sd, n)
    half = 1.645 * sd / 2.0
    lo, hi = est - half, est + half
    fold = np.arange(n) % folds
    lo2, hi2, scale = cross_conformal(true, est, lo, hi, fold, 0.9)
    cover = float(np.mean((lo2 <= true) & (true <= hi2)))
    assert 0.88 <= cover <= 0.92 and scale == pytest.approx(2.0, rel=0.08)


def test_an_interval_scale_widens_both_sides_around_the_estimate(bank_1pl) -> None:
    bank, test = bank_1pl
    part = test.filter((pl.col("model") == "m125") & pl.col("item").is_in(list(bank.items[:50])))
    plain = estimate(bank, part, settings=FAST)
    wide = estimate(bank, part, settings=FAST, interval_scale=1.5)
    assert wide.estimate == plain.estimate and wide.interval_scale == 1.5
    assert wide.high - wide.estimate == pytest.approx(
        min(1.5 * (plain.high - plain.estimate), 1 - plain.estimate)
    )
    assert wide.estimate - wide.low == pytest.approx(
        min(1.5 * (plain.estimate - plain.low), plain.estimate)
    )
    with pytest.raises(ValueError, match="interval_scale"):
        estimate(bank, part, settings=FAST, interval_scale=0.0)


def test_adaptive_is_not_a_fixed_subset_design() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="adaptive test is not a fixed subset"):
        EstimationSettings(design="adaptive")


@pytest.mark.parametrize(
    "design", ["random", "anchor", "stratified", "information", "quantile", "adaptive"]
)
def test_a_design_depends_on_the_items_not_on_their_listing_order(bank_1pl, design) -> None:
    """The same calibration listed in another order (a fit or a library version may list
    items differently) gives the same subset: draws and ties follow the item ids."""
    from dataclasses import replace

    bank, test = bank_1pl
    rev = np.arange(bank.n_items)[::-1]
    shuffled = replace(
        bank, items=tuple(bank.items[i] for i in rev), b=bank.b[rev].copy(), a=bank.a[rev].copy()
    )
    a = select(design, bank, 40, seed=3, responses=test)
    b = select(design, shuffled, 40, seed=3, responses=test)
    assert set(a.items) == set(b.items)
    if a.weights is not None and b.weights is not None:
        assert a.weight_map() == pytest.approx(b.weight_map())
    one = test.filter(pl.col("model") == "m133")
    obs_a = observed_of(bank, one.filter(pl.col("item").is_in(list(a.items))))
    obs_b = observed_of(shuffled, one.filter(pl.col("item").is_in(list(a.items))))
    next_a = [bank.items[i] for i in next_items(bank, obs_a, 10)]
    next_b = [shuffled.items[i] for i in next_items(shuffled, obs_b, 10)]
    assert next_a == next_b


@pytest.mark.parametrize("design", ["random", "stratified", "information", "adaptive"])
def test_a_design_does_not_move_with_the_fits_last_bits(bank_1pl, design) -> None:
    """b perturbed by 1e-9 logits (what another BLAS kernel or library version leaves of
    a fit) gives the same subset: items tied in b stay tied, broken by the seeded draw."""
    from dataclasses import replace

    bank, _ = bank_1pl
    noise = np.random.default_rng(5).normal(0.0, 1e-9, bank.n_items)
    nudged = replace(bank, b=bank.b + noise)
    assert select(design, bank, 40, seed=2).items == select(design, nudged, 40, seed=2).items


def test_tie_keys_and_argmin_tied_treat_noise_as_ties() -> None:
    from curation.estimate._bank import argmin_tied, tie_keys

    x = np.array([0.3, 0.1 + 1e-12, 0.1, 0.2, 0.1 - 1e-12])
    assert tie_keys(x).tolist() == [2, 0, 0, 1, 0]
    assert argmin_tied(np.array([2.0, 1.0 + 1e-14, 1.0, 3.0])) == 1
    assert argmin_tied(np.array([2.0, 1.1, 1.0, 3.0])) == 2
