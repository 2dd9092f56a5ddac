"""Theorem 2.3 by simulation: progress in the largest gap is invisible; wider progress is not."""

from __future__ import annotations

import numpy as np
import pytest

from curation.measure import contrast_widths, gaps, max_gap, power_curve, power_table

ALPHA = 0.05
rng = np.random.default_rng(2024)
# 40 items with one clear hole in the middle, [~0.4, ~0.6].
Z = np.concatenate([rng.uniform(0.0, 0.4, 20), rng.uniform(0.6, 1.0, 20)])


def test_the_largest_gap_is_the_hole() -> None:
    top = gaps(Z).row(0, named=True)
    assert 0.35 < top["z_left"] < 0.41 and 0.59 < top["z_right"] < 0.65


def test_progress_inside_the_gap_is_rejected_at_rate_alpha() -> None:
    inside, _ = contrast_widths(Z)
    frame = power_curve(
        Z, width=inside, repeats=(1, 8, 32), n_sims=1500, alpha=ALPHA, n_permutations=199, seed=1
    )
    assert (frame["n_touched"] == 0).all() and frame["blind"].all()
    for rate in frame["rejection_rate"]:
        assert abs(rate - ALPHA) <= 0.03


def test_progress_wider_than_the_gap_is_detected_with_repeats() -> None:
    _, outside = contrast_widths(Z)
    frame = power_curve(
        Z, width=outside, repeats=(1, 4, 32), n_sims=300, alpha=ALPHA, n_permutations=199, seed=2
    )
    assert (frame["n_touched"] > 0).all() and not frame["blind"].any()
    rates = frame.sort("repeats")["rejection_rate"].to_list()
    assert rates[-1] > 0.9
    assert rates[0] < rates[-1]


def test_barely_wider_progress_still_climbs_to_one() -> None:
    # Just over the gap: only the items at its two ends are touched, yet re-evaluation
    # shrinks their noise until the gain shows.
    w = max_gap(Z) + 0.02
    frame = power_curve(
        Z, width=w, repeats=(1, 64), n_sims=300, delta=0.4, n_permutations=199, seed=3
    )
    assert 1 <= frame["n_touched"][0] <= 4
    assert frame.sort("repeats")["rejection_rate"][-1] > 0.9


def test_table_and_determinism() -> None:
    kwargs = dict(width=list(contrast_widths(Z)), repeats=(1, 2), n_sims=50, seed=7)
    one, two = power_curve(Z, **kwargs), power_curve(Z, **kwargs)
    assert one.equals(two)
    assert one.height == 4
    wide = power_table(one)
    assert wide.columns[0] == "repeats" and wide.height == 2 and wide.width == 3


def test_location_and_validation() -> None:
    frame = power_curve(Z, width=0.05, location=0.02, repeats=(1,), n_sims=20, seed=0)
    assert frame["centre"][0] == 0.02
    for bad in (
        dict(width=0.0),
        dict(width=0.1, alpha=1.0),
        dict(width=0.1, repeats=(0,)),
        dict(width=0.1, location="middle"),
        dict(width=0.1, location=1.2),
        dict(width=0.1, n_sims=0),
        dict(width=0.1, base_p=np.full(3, 0.5)),
    ):
        with pytest.raises(ValueError):
            power_curve(Z, **bad)
    with pytest.raises(ValueError):
        contrast_widths(Z, inside=1.2)
