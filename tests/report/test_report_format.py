"""The shared number formatters, including each report's choice of blank."""

from __future__ import annotations

import math

import numpy as np
import pytest

from curation.report.format import (
    EM_DASH,
    EN_DASH,
    INFINITY,
    NOT_AVAILABLE,
    PLAIN,
    Blanks,
    count,
    fixed,
    general,
    interval,
    percent,
    signed,
    with_interval,
)

MIRT = Blanks(missing=EN_DASH, nonfinite=EN_DASH)
GAPS = Blanks(missing=EM_DASH, infinite=INFINITY)
CARD = Blanks(missing=NOT_AVAILABLE)


def test_fixed_digits_grouping_and_numpy() -> None:
    assert fixed(0.25) == "0.250"
    assert fixed(np.float64(0.12345), 2) == "0.12"
    assert fixed(3) == "3.000"
    assert fixed(-1234.56, 1, grouping=True) == "-1,234.6"
    assert fixed(-0.0, 1) == "-0.0"  # the sign of zero is kept, as Python prints it


@pytest.mark.parametrize(
    ("blanks", "none", "nan", "inf", "neg_inf"),
    [
        (PLAIN, "-", "nan", "inf", "-inf"),
        (MIRT, "–", "–", "–", "–"),
        (GAPS, "—", "nan", "∞", "∞"),
        (CARD, "n/a", "nan", "inf", "-inf"),
    ],
)
def test_blanks(blanks: Blanks, none: str, nan: str, inf: str, neg_inf: str) -> None:
    assert fixed(None, blanks=blanks) == none
    assert fixed(math.nan, blanks=blanks) == nan
    assert fixed(math.inf, blanks=blanks) == inf
    assert fixed(-math.inf, blanks=blanks) == neg_inf
    assert fixed(0.5, blanks=blanks) == "0.500"


def test_percent_matches_python_percent_format() -> None:
    for x in (0.0, -0.0, 0.123456, 0.0005, 0.9995, 1.0, 1 / 3, 2.675e-3):
        assert percent(x) == f"{x:.1%}"
        assert percent(x, 0) == f"{x:.0%}"
    assert percent(0.5, suffix="") == "50.0"
    assert percent(math.nan, suffix="", blanks=MIRT) == "–"
    assert percent(None) == "-"


def test_signed_general_count() -> None:
    assert signed(0.421) == "+0.42" and signed(-1.3, 1) == "-1.3"
    assert general(0.5) == "0.5" and general(1.0) == "1" and general(None, blanks=MIRT) == "–"
    assert count(1234567) == "1,234,567"


def test_intervals() -> None:
    assert interval(0.4123, 0.5771) == "[0.412, 0.577]"
    assert interval(0.1, math.inf, blanks=GAPS) == "[0.100, ∞]"
    assert with_interval(0.25, 0.2, 0.3, 2) == "0.25 [0.20, 0.30]"
