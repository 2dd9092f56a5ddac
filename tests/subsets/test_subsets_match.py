"""Greedy quantile matching (SPEC §6): hand cases, targets, determinism, DDM reduction."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from curation.measure import Beta, Histogram, Sample, ddm
from curation.subsets import match_quantiles, quantile_levels, target_ppf


def test_levels_are_midpoints():
    assert quantile_levels(4).tolist() == [0.125, 0.375, 0.625, 0.875]
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            quantile_levels(bad)


def test_hand_case_uniform_picks_the_closest_item_per_quantile():
    items = ["a", "b", "c", "d", "e"]
    z = [0.1, 0.3, 0.5, 0.7, 0.9]
    sub = match_quantiles(items, z, m=2)  # q = 0.25, 0.75
    assert sub.items == ("b", "d")
    assert sub.z == (0.3, 0.7)
    assert sub.levels == (0.25, 0.75)
    assert sub.quantiles == (0.25, 0.75)
    assert match_quantiles(items, z, m=5).items == ("a", "b", "c", "d", "e")


def test_tie_goes_to_the_lower_id():
    # |0.25 - 0.5| == |0.75 - 0.5| exactly; "a" < "b" wins whatever the input order
    assert match_quantiles(["b", "a"], [0.25, 0.75], m=1).items == ("a",)
    assert match_quantiles(["a", "b"], [0.75, 0.25], m=1).items == ("a",)


def test_greedy_in_k_order_and_items_used_once():
    # k=1 (q=0.25) takes 0.21, the closer one; k=2 (q=0.75) must take what is left
    assert match_quantiles(["x", "y"], [0.2, 0.21], m=2).items == ("y", "x")
    # duplicates of z: k=1 takes the lower id, k=2 the other copy
    sub = match_quantiles(["p", "q", "r"], [0.5, 0.5, 0.9], m=3)
    assert sub.items == ("p", "q", "r")


def test_beta_histogram_and_sample_quantiles():
    p = np.array([0.05, 0.25, 0.5, 0.9])
    np.testing.assert_allclose(target_ppf(Beta(2, 5), p), stats.beta.ppf(p, 2, 5), rtol=1e-10)
    hist = Histogram((0.0, 0.5, 1.0), (1.0, 3.0))  # F(0.5) = 0.25
    np.testing.assert_allclose(target_ppf(hist, [0.125, 0.25, 0.625]), [0.25, 0.5, 0.75])
    gap = Histogram((0.0, 0.2, 0.8, 1.0), (1.0, 0.0, 1.0))  # no mass on (0.2, 0.8)
    np.testing.assert_allclose(target_ppf(gap, [0.25, 0.5, 0.75]), [0.1, 0.2, 0.9])
    sample = Sample((0.4, 0.1, 0.3, 0.2))
    assert target_ppf(sample, [0.25, 0.26, 0.875]).tolist() == [0.1, 0.2, 0.4]
    assert target_ppf("uniform", [0.3]).tolist() == [0.3]
    with pytest.raises(ValueError, match="strictly inside"):
        target_ppf("uniform", [0.0])


def test_another_benchmarks_z_as_target():
    ref = [0.8, 0.85, 0.9, 0.95]  # quantiles at levels 1/8, 3/8, 5/8, 7/8: the four values
    z = np.arange(11) / 10
    sub = match_quantiles([f"i{k:02d}" for k in range(11)], z, target=ref, m=4)
    assert sub.quantiles == (0.8, 0.85, 0.9, 0.95)
    # 0.8 exact; 0.85 → 0.9 (0.8 is used); 0.9 → 1.0 (0.9 is used); 0.95 → 0.7 is all that's near
    assert sub.items == ("i08", "i09", "i10", "i07")
    assert sub.target_label == "sample (n=4)"


def test_bad_inputs_say_what_is_wrong():
    with pytest.raises(ValueError, match="exceeds the 2 items"):
        match_quantiles(["a", "b"], [0.1, 0.2], m=3)
    with pytest.raises(ValueError, match="equal length"):
        match_quantiles(["a", "b"], [0.1], m=1)
    with pytest.raises(ValueError, match="unique"):
        match_quantiles(["a", "a"], [0.1, 0.2], m=1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        match_quantiles(["a", "b"], [0.1, 1.2], m=1)


def _skewed(n: int, seed: int = 7) -> tuple[list[str], np.ndarray]:
    rng = np.random.default_rng(seed)
    return [f"item-{i:04d}" for i in range(n)], rng.beta(1.2, 6.0, size=n)


@pytest.mark.parametrize("m", [10, 25, 60])
def test_uniform_subset_has_lower_ddm_than_the_skewed_benchmark(m):
    items, z = _skewed(300)
    sub = match_quantiles(items, z, target="uniform", m=m)
    assert ddm(z) > 0.2  # the benchmark is far from uniform
    assert ddm(sub.z_array()) <= ddm(z)
    assert ddm(sub.z_array()) < 0.5 * ddm(z)


def test_beta_target_subset_is_closer_to_that_beta():
    items, z = _skewed(300)
    target = Beta(4, 4)
    sub = match_quantiles(items, z, target=target, m=30)
    assert ddm(sub.z_array(), target) < ddm(z, target)


def test_deterministic_and_order_free():
    items, z = _skewed(120, seed=3)
    first = match_quantiles(items, z, m=20)
    order = np.random.default_rng(0).permutation(len(items))
    again = match_quantiles([items[i] for i in order], z[order], m=20)
    assert first == again
    frame = first.to_frame(benchmark="b", name="uniform-20")
    assert frame.get_column("k").to_list() == list(range(1, 21))
    assert frame.get_column("item").to_list() == list(first.items)
