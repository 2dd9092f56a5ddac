"""The stated precision of written numbers: 10 significant digits, the same everywhere."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from curation.io.atomic import write_json
from curation.io.npz import write_npz
from curation.io.precision import (
    SIGNIFICANT_DIGITS,
    round_array,
    round_float,
    round_floats,
    round_frame,
)


def test_rounds_to_ten_significant_digits_like_decimal_formatting() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=20_000) * 10.0 ** rng.integers(-12, 20, 20_000)
    expected = np.array([float(f"{v:.{SIGNIFICANT_DIGITS}g}") for v in x])
    got = round_array(x)
    # correctly rounded wherever the power of ten is exact (1e-13 .. 1e31); elsewhere
    # within one unit in the last place of it
    assert np.array_equal(got[np.abs(x) > 1e-12], expected[np.abs(x) > 1e-12])
    assert np.all(np.abs(got - expected) <= np.spacing(np.abs(expected)))
    assert round_float(0.16589421968617946) == 0.1658942197
    assert round_float(32693.828326069084) == 32693.82833
    assert round_float(9.99999999996) == 10.0
    assert round_float(-123456789012345.0) == -123456789000000.0


def test_values_one_ulp_apart_write_the_same_number() -> None:
    """What two CPUs' kernels produce: the same value up to a few units in the last place."""
    rng = np.random.default_rng(4)
    x = rng.normal(size=200_000) * 10.0 ** rng.integers(-6, 6, 200_000)
    for steps in (1, 3):
        y = x.copy()
        for _ in range(steps):
            y = np.nextafter(y, np.inf)
        # a flip needs a value within a few ulp of a rounding boundary: ~1e-6 per value
        assert np.sum(round_array(x) != round_array(y)) <= 2


def test_special_values_ints_and_nulls_are_kept() -> None:
    x = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-320, 1e-295])
    out = round_array(x)
    assert out[0] == 0.0 and math.copysign(1, out[1]) == -1
    assert np.isnan(out[2]) and out[3] == np.inf and out[4] == -np.inf
    assert out[5] == 1e-320 and out[6] == 1e-295  # too small to scale: unchanged
    assert round_array(np.array([1, 2, 3])).dtype.kind == "i"
    obj = {"a": 1, "b": True, "c": [0.1234567890123, "s", None], "d": (2.5,)}
    assert round_floats(obj) == {"a": 1, "b": True, "c": [0.123456789, "s", None], "d": [2.5]}
    df = pl.DataFrame(
        {
            "f": [1.23456789012345, None],
            "g": pl.Series([0.1, 0.2], dtype=pl.Float32),
            "s": ["x", "y"],
            "n": [1, 2],
        }
    )
    got = round_frame(df)
    assert got.schema == df.schema
    assert got["f"].to_list() == [1.23456789, None]
    assert got["s"].to_list() == ["x", "y"] and got["n"].to_list() == [1, 2]


def test_every_rounding_honours_its_digits() -> None:
    """``digits`` is what each function rounds to (round_frame once ignored it)."""
    value = 0.16589421968617946
    df = pl.DataFrame(
        {"f": [value, None], "g": pl.Series([value, 2.0], dtype=pl.Float32), "s": ["x", "y"]}
    )
    got = round_frame(df, digits=3)
    assert got["f"].to_list() == [0.166, None]
    assert got["g"].to_list() == pytest.approx([0.166, 2.0], rel=1e-7)  # float32's own bits
    assert got["g"].dtype == pl.Float32 and got["s"].to_list() == ["x", "y"]
    assert round_frame(df)["f"].to_list() == [0.1658942197, None]  # the default: 10 digits
    assert round_array(np.array([value]), 3).tolist() == [0.166]
    assert round_float(value, 3) == 0.166
    assert round_floats({"x": [value]}, 3) == {"x": [0.166]}


def test_every_writer_rounds(tmp_path) -> None:
    value = 0.16589421968617946
    write_json(tmp_path / "m.json", {"x": value, "y": [value]})
    assert json.loads((tmp_path / "m.json").read_text()) == {
        "x": 0.1658942197,
        "y": [0.1658942197],
    }
    write_npz(tmp_path / "d.npz", b=np.array([value]), z=np.array([value], dtype=np.float32))
    with np.load(tmp_path / "d.npz") as data:
        assert data["b"][0] == 0.1658942197
        assert data["z"].dtype == np.float32


@pytest.mark.parametrize("digits", [4, 10, 15])
def test_other_precisions(digits: int) -> None:
    x = np.array([np.pi, -np.e * 1e7, 1 / 3])
    assert np.array_equal(round_array(x, digits), [float(f"{v:.{digits}g}") for v in x])
