"""Stratified randomisation test: validity under the null, power, determinism, exactness."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from curation.measure import progress_test

rng = np.random.default_rng(11)
Z = rng.random(60)


def _simulate(p_a, p_b, r, seed):
    g = np.random.default_rng(seed)
    return g.binomial(r, p_a), g.binomial(r, p_b)


def test_identical_checkpoints_are_not_significant() -> None:
    a = rng.binomial(4, 0.5, size=Z.size)
    res = progress_test(a, a, Z, trials=4, n_permutations=999, seed=1)
    assert res.effect == 0.0 and res.mean_diff == 0.0
    # Relabelling trials moves the statistic both ways around 0: T_obs = 0 is central.
    assert res.p_value > 0.3
    # Swapping equal rates changes nothing: every permutation ties with T_obs.
    rates = progress_test(a / 4, a / 4, Z, n_permutations=999, seed=1)
    assert rates.scheme == "rates" and rates.p_value == 1.0


def test_null_p_values_are_roughly_uniform() -> None:
    p = np.full(Z.size, 0.4)
    pvals = []
    for seed in range(300):
        a, b = _simulate(p, p, 3, seed)
        pvals.append(progress_test(a, b, Z, trials=3, n_permutations=199, seed=seed).p_value)
    pvals = np.array(pvals)
    assert 0.4 < pvals.mean() < 0.6
    assert 0.04 <= np.mean(pvals <= 0.10) <= 0.17
    assert stats.kstest(pvals, "uniform").pvalue > 0.001


def test_strong_improvement_is_detected() -> None:
    p_a = np.full(Z.size, 0.3)
    a, b = _simulate(p_a, p_a + 0.3, 4, seed=5)
    res = progress_test(a, b, Z, trials=4, n_permutations=1999, seed=0)
    assert res.p_value < 0.01
    assert res.effect > 0.15 and res.scheme == "trials"
    # ...and the reverse direction is not "B better than A".
    assert progress_test(b, a, Z, trials=4, n_permutations=1999, seed=0).p_value > 0.5


def test_p_value_floor_is_the_plus_one_correction() -> None:
    a, b = np.zeros(Z.size), np.ones(Z.size)
    assert progress_test(a, b, Z, n_permutations=99, seed=0).p_value == pytest.approx(0.01)


def test_seeded_determinism() -> None:
    a, b = _simulate(np.full(Z.size, 0.5), np.full(Z.size, 0.55), 2, seed=9)
    one = progress_test(a, b, Z, trials=2, n_permutations=499, seed=42)
    two = progress_test(a, b, Z, trials=2, n_permutations=499, seed=42)
    assert one == two
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert (
        progress_test(a, b, Z, trials=2, n_permutations=499, seed=g1).p_value
        == progress_test(a, b, Z, trials=2, n_permutations=499, seed=g2).p_value
    )


def test_input_forms_agree() -> None:
    g = np.random.default_rng(2)
    out_a = g.integers(0, 2, size=(Z.size, 5))
    out_b = g.integers(0, 2, size=(Z.size, 5))
    by_outcomes = progress_test(out_a, out_b, Z, n_permutations=299, seed=4)
    by_counts = progress_test(
        out_a.sum(1), out_b.sum(1), Z, trials=(5, np.full(Z.size, 5)), n_permutations=299, seed=4
    )
    assert by_outcomes == by_counts
    rates = progress_test(out_a.mean(1), out_b.mean(1), Z, n_permutations=299, seed=4)
    assert rates.scheme == "rates"
    assert rates.effect == pytest.approx(by_counts.effect)


def test_strata_effects_and_weights() -> None:
    z = np.array([0.05, 0.1, 0.15, 0.9, 0.95])
    a = np.array([0, 0, 1, 1, 0])
    b = np.array([1, 1, 1, 1, 1])
    res = progress_test(a, b, z, n_bins=4, n_permutations=99, seed=0)
    counts = [s.n_items for s in res.strata]
    assert counts == [3, 0, 0, 2]
    assert res.strata[1].mean_diff is None and res.strata[1].weight == 0.0
    assert res.strata[0].mean_diff == pytest.approx(2 / 3)
    assert res.strata[3].mean_diff == pytest.approx(0.5)
    assert sum(s.weight for s in res.strata) == pytest.approx(1.0)
    assert res.effect == pytest.approx(0.5 * 2 / 3 + 0.5 * 0.5)  # equal weight per bin
    assert res.mean_diff == pytest.approx(0.6)
    items = progress_test(a, b, z, n_bins=4, weighting="items", n_permutations=99, seed=0)
    assert items.effect == pytest.approx(0.6)
    frame = res.strata_frame()
    assert frame.height == 4 and frame["n_items"].sum() == 5
    edges = progress_test(a, b, z, edges=[0.0, 0.5, 1.0], n_permutations=99, seed=0)
    assert [s.n_items for s in edges.strata] == [3, 2]


def test_trial_scheme_matches_exact_enumeration() -> None:
    # Three items, three trials each, one stratum: T_perm ≥ T_obs ⇔ ΣK ≤ Σk_a with
    # K_i ~ Hypergeometric(6, s_i, 3) independent.
    k_a, k_b, z = np.array([1, 0, 2]), np.array([3, 2, 2]), np.array([0.1, 0.2, 0.3])
    s = k_a + k_b
    pmfs = [stats.hypergeom(6, int(si), 3) for si in s]
    exact = 0.0
    for ks in itertools.product(range(4), repeat=3):
        if sum(ks) <= k_a.sum():
            exact += np.prod([pm.pmf(k) for pm, k in zip(pmfs, ks, strict=True)])
    res = progress_test(k_a, k_b, z, trials=3, n_bins=1, n_permutations=60_000, seed=0)
    assert res.p_value == pytest.approx(exact, abs=0.006)


def test_rate_scheme_matches_exact_enumeration() -> None:
    a = np.array([0.2, 0.5, 0.25, 0.6, 0.1, 0.75])
    b = np.array([0.6, 0.55, 0.75, 0.5, 0.4, 0.75])
    z = np.array([0.1, 0.3, 0.5, 0.6, 0.8, 0.9])
    d = b - a
    res = progress_test(a, b, z, n_bins=3, n_permutations=60_000, seed=0)
    v = np.full(6, 1 / 6)  # two items per bin, three bins: equal weights
    t_obs = d @ v
    flips = np.array(list(itertools.product([-1, 1], repeat=6)))
    exact = np.mean(flips @ (d * v) >= t_obs - 1e-12)
    assert res.scheme == "rates"
    assert res.p_value == pytest.approx(exact, abs=0.006)


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (([0, 1], [1, 1, 0], [0.1, 0.2, 0.3]), {}, "shape"),
        (([0.5, 1.2], [0.5, 0.5], [0.1, 0.2]), {}, r"\[0, 1\]"),
        (([4, 1], [1, 1], [0.1, 0.2]), {"trials": 3}, "counts"),
        (([1, 1], [1, 1], [0.1, 0.2]), {"trials": 0}, "trials"),
        (([1, 1], [1, 1], [0.1, 0.2]), {"edges": [0.15, 1.0]}, "cover"),
        (([1, 1], [1, 1], [0.1, 0.2]), {"n_permutations": 0}, "n_permutations"),
        (([1, 1], [1, 1], [0.1, 0.2]), {"weighting": "size"}, "weighting"),
        (([1, 1], [1, 1], []), {}, "shape|empty"),
        (([[0, 2]], [[1, 1]], [0.1]), {}, "0/1"),
    ],
)
def test_input_errors(args, kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        progress_test(*args, **kwargs)
