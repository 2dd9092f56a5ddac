"""Gaps: n + 1 intervals including the ends, widest first, widths summing to 1."""

from __future__ import annotations

import numpy as np
import pytest

from curation.measure import Gap, gaps, largest_gaps, max_gap, top_k_sum


def test_hand_case() -> None:
    frame = gaps([0.6, 0.2, 0.5])
    assert frame.columns == ["z_left", "z_right", "width"]
    expected = [(0.6, 1.0, 0.4), (0.2, 0.5, 0.3), (0.0, 0.2, 0.2), (0.5, 0.6, 0.1)]
    for row, exp in zip(frame.rows(), expected, strict=True):
        assert row == pytest.approx(exp)
    assert max_gap([0.6, 0.2, 0.5]) == pytest.approx(0.4)
    assert top_k_sum([0.6, 0.2, 0.5], 2) == pytest.approx(0.7)
    assert top_k_sum([0.6, 0.2, 0.5], 10) == pytest.approx(1.0)
    assert largest_gaps([0.6, 0.2, 0.5], 1) == [Gap(0.6, 1.0)]


@pytest.mark.parametrize("seed", range(5))
def test_widths_sum_to_one_and_include_ends(seed: int) -> None:
    rng = np.random.default_rng(seed)
    z = rng.random(rng.integers(1, 300))
    frame = gaps(z)
    assert frame.height == z.size + 1
    assert frame["width"].sum() == pytest.approx(1.0, abs=1e-12)
    assert (frame["width"] >= 0).all()
    assert frame["width"].to_list() == sorted(frame["width"].to_list(), reverse=True)
    assert 0.0 in frame["z_left"].to_list()
    assert 1.0 in frame["z_right"].to_list()
    ends = sorted(frame["z_left"].to_list())
    assert ends[1:] == pytest.approx(sorted(z.tolist()))


def test_ties_give_zero_gaps_ordered_by_left_end() -> None:
    frame = gaps([0.5, 0.5])
    assert frame.rows() == [(0.0, 0.5, 0.5), (0.5, 1.0, 0.5), (0.5, 0.5, 0.0)]


def test_single_item_and_items_at_ends() -> None:
    assert gaps([0.0]).rows() == [(0.0, 1.0, 1.0), (0.0, 0.0, 0.0)]
    assert max_gap([1.0, 1.0]) == 1.0
    assert top_k_sum([0.0, 1.0], 3) == 1.0


def test_gap_dataclass() -> None:
    g = Gap(0.412, 0.577)
    assert g.width == pytest.approx(0.165)
    assert g.midpoint == pytest.approx(0.4945)
    assert g.label() == "[0.412, 0.577]"


def test_empty_benchmark_is_a_clear_error() -> None:
    for fn in (gaps, max_gap, lambda z: top_k_sum(z, 3), largest_gaps):
        with pytest.raises(ValueError, match="empty benchmark"):
            fn([])


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_k(k) -> None:
    with pytest.raises(ValueError, match="k must be"):
        top_k_sum([0.5], k)
