"""Rank certificates (Theorem 2.1) and blind intervals (Theorem 2.3) on hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curation.measure import (
    blind_intervals,
    certify,
    certify_pairs,
    max_gap,
    top_pair_certificates,
    touched_items,
)


def test_certified_when_difference_beats_l_times_ddm() -> None:
    c = certify(0.8, 0.7, 0.05, 1.0, model_a="x", model_b="y")
    assert c.d_b == pytest.approx(0.1)
    assert c.margin == pytest.approx(0.05)
    assert c.certified
    assert c.max_lipschitz == pytest.approx(2.0)
    assert c.winner == "x"


def test_strict_inequality_at_the_boundary() -> None:
    c = certify(0.75, 0.5, 0.125, 2.0)  # |D_B| = 0.25 = L·DDM exactly
    assert not c.certified
    assert c.max_lipschitz == 2.0


def test_negative_difference_and_winner_b() -> None:
    c = certify(0.3, 0.6, 0.1, 1.0)
    assert c.d_b == pytest.approx(-0.3) and c.winner == "B" and c.certified


def test_zero_ddm_and_ties() -> None:
    assert certify(0.6, 0.5, 0.0, 5.0).max_lipschitz == math.inf
    assert certify(0.6, 0.5, 0.0, 5.0).certified
    tie = certify(0.5, 0.5, 0.1, 1.0)
    assert not tie.certified and tie.max_lipschitz == 0.0 and tie.winner is None
    assert not certify(0.5, 0.5, 0.0, 1.0).certified


@pytest.mark.parametrize(
    "args", [(0.5, 0.4, -0.1, 1.0), (0.5, 0.4, 0.1, -1.0), (math.nan, 0.4, 0.1, 1.0)]
)
def test_certify_validates(args) -> None:
    with pytest.raises(ValueError):
        certify(*args)


def test_certify_pairs_frame() -> None:
    scores = {"m1": 0.50, "m2": 0.80, "m3": 0.78}
    frame = certify_pairs(scores, ddm=0.05, lipschitz=1.0)
    assert frame.height == 3
    assert frame["abs_d_b"].to_list() == pytest.approx([0.30, 0.28, 0.02])
    first = frame.row(0, named=True)
    assert (first["model_a"], first["model_b"], first["rank_a"], first["rank_b"]) == (
        "m2",
        "m1",
        1,
        3,
    )
    assert frame["certified"].to_list() == [True, True, False]
    assert (frame["d_b"] >= 0).all()
    adjacent = certify_pairs(scores, ddm=0.05, lipschitz=1.0, pairs="adjacent")
    assert sorted(zip(adjacent["model_a"], adjacent["model_b"], strict=True)) == [
        ("m2", "m3"),
        ("m3", "m1"),
    ]
    with pytest.raises(ValueError, match="two models"):
        certify_pairs({"only": 0.5}, ddm=0.1, lipschitz=1.0)


def test_top_pair_certificates_are_leaderboard_neighbours() -> None:
    scores = {f"m{i}": s for i, s in enumerate([0.9, 0.1, 0.5, 0.7, 0.3])}
    certs = top_pair_certificates(scores, ddm=0.1, lipschitz=1.0, n_pairs=2)
    assert [(c.model_a, c.model_b) for c in certs] == [("m0", "m3"), ("m3", "m2")]


Z = [0.6, 0.2, 0.5]  # gaps: [0.6, 1] 0.4, [0.2, 0.5] 0.3, [0, 0.2] 0.2, [0.5, 0.6] 0.1


def test_blind_intervals_hand_case() -> None:
    got = blind_intervals(Z, 0.25)
    assert [(b.left, b.right) for b in got] == [(0.6, 1.0), (0.2, 0.5)]
    top = got[0]
    assert top.progress_width == 0.25
    assert top.gap_width == pytest.approx(0.4)
    assert top.slack == pytest.approx(0.15)
    assert top.start_range == pytest.approx((0.6, 0.75))
    assert top.centre_range == pytest.approx((0.725, 0.875))
    assert top.label() == "[0.600, 1.000]"


def test_gap_exactly_as_wide_as_the_progress_counts() -> None:
    # 0.5 − 0.2 is 0.29999999999999999 in floats: the tolerance keeps it.
    assert [(b.left, b.right) for b in blind_intervals(Z, 0.3)] == [(0.6, 1.0), (0.2, 0.5)]
    assert [(b.left, b.right) for b in blind_intervals(Z, 0.2)][-1] == (0.0, 0.2)


def test_no_blind_interval_wider_than_the_max_gap() -> None:
    assert blind_intervals(Z, 0.41) == []


def test_blind_placements_touch_no_item_and_others_do() -> None:
    rng = np.random.default_rng(3)
    z = rng.random(25)
    w = 0.6 * max_gap(z)
    for b in blind_intervals(z, w):
        for c in np.linspace(*b.centre_range, 7):
            assert not touched_items(z, centre=c, width=w).any()
    wide = 1.05 * max_gap(z)
    assert blind_intervals(z, wide) == []
    for c in np.linspace(0, 1, 201):
        lo, hi = c - wide / 2, c + wide / 2
        if lo >= 0 and hi <= 1:
            assert touched_items(z, centre=c, width=wide).any()


@pytest.mark.parametrize("w", [0.0, -0.1, 1.5, math.nan])
def test_blind_width_validation(w) -> None:
    with pytest.raises(ValueError, match="width"):
        blind_intervals(Z, w)
