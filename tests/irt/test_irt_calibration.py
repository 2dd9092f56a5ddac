"""Calibration: online calibration accuracy, JSON round trip, panel checks."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.irt import Calibration, calibrate_items, fit, simulate_responses


@pytest.fixture(scope="module")
def bank_and_new():
    # panel spread like the bundled ZeroEval panels (abilities span ~7 logits)
    df, truth = simulate_responses(n_models=12, n_items=1200, n_trials=32, seed=31, theta_sd=2.5)
    bank = df.filter(pl.col("item") < "item-01000")
    new = df.filter(pl.col("item") >= "item-01000")
    return fit(bank), new, truth


def test_online_calibration_of_200_items(bank_and_new):
    bank_fit, new, truth = bank_and_new
    cal = bank_fit.calibration
    out = calibrate_items(new, cal)
    assert out.columns == [
        "item", "b", "se", "z", "z_low", "z_high", "n_models", "n_trials", "bound",
    ]  # fmt: skip
    assert out.height == 200 and out["n_trials"].unique().to_list() == [384]
    lookup = dict(zip(truth["items"], truth["b"], strict=True))
    b_true = np.array([lookup[i] for i in out["item"]])
    z_err = np.abs(out["z"].to_numpy() - cal.to_z(b_true))
    assert z_err.mean() <= 0.02
    # standard errors are honest: ~90% of true b within ±1.645 se
    cover = np.mean(np.abs(out["b"].to_numpy() - b_true) <= 1.6449 * out["se"].to_numpy())
    assert 0.83 <= cover <= 0.97


def test_online_calibration_matches_bank_refit(bank_and_new):
    """A bank item calibrated online lands where the bank fit put it (same scale)."""
    bank_fit, _, _ = bank_and_new
    cal = bank_fit.calibration
    df, _ = simulate_responses(n_models=12, n_items=1200, n_trials=32, seed=31, theta_sd=2.5)
    again = calibrate_items(df.filter(pl.col("item") < "item-00050"), cal)
    ref = bank_fit.items.join(again, on="item", suffix="_online")
    np.testing.assert_allclose(ref["b_online"], ref["b"], atol=0.02)


def test_online_calibration_2pl():
    df, _ = simulate_responses(n_models=12, n_items=600, n_trials=32, model="2pl", seed=32)
    res = fit(df.filter(pl.col("item") < "item-00500"), model="2pl")
    out = calibrate_items(df.filter(pl.col("item") >= "item-00500"), res.calibration, model="2pl")
    assert out.columns[-1] == "a" and out["a"].null_count() == 0
    with pytest.raises(ValueError, match="model='2pl'"):
        calibrate_items(df, res.calibration)


def test_unknown_model_is_named(bank_and_new):
    bank_fit, new, _ = bank_and_new
    stranger = new.head(3).with_columns(model=pl.lit("gpt-unknown"))
    with pytest.raises(ValueError, match="gpt-unknown"):
        calibrate_items(pl.concat([new, stranger]), bank_fit.calibration)


def test_json_round_trip_and_to_z_identical(bank_and_new, tmp_path):
    bank_fit, _, _ = bank_and_new
    cal = bank_fit.calibration
    path = tmp_path / "calibration" / "toy.json"
    cal.save(path)
    loaded = Calibration.load(path)
    # written to the stated precision (10 significant digits): equal to the calibration
    # as written, and saving that again writes the same bytes
    assert loaded == cal.as_written() and loaded.as_written() == loaded
    assert loaded.to_dict() == cal.as_written().to_dict()
    again = tmp_path / "again.json"
    loaded.save(again)
    assert again.read_bytes() == path.read_bytes()
    b = np.linspace(-8, 8, 1001)
    assert np.allclose(loaded.to_z(b), cal.to_z(b), rtol=0, atol=1e-9)
    assert np.array_equal(Calibration.load(again).to_z(b), loaded.to_z(b))
    d = json.loads(path.read_text())
    assert d["scale"]["method"] == "panel" and d["panel"] == list(cal.panel)
    assert d["settings"]["b_sd"] == 3.0 and d["created_by"].startswith("benchcurate")
    assert d["identification"].startswith("mean ability 0")


def test_from_dict_rejects_bad_input(bank_and_new):
    good = bank_and_new[0].calibration.to_dict()
    with pytest.raises(ValueError, match="format"):
        Calibration.from_dict({**good, "format": "other"})
    with pytest.raises(ValueError, match="missing"):
        Calibration.from_dict({k: v for k, v in good.items() if k != "scale"})
    with pytest.raises(ValueError, match="degenerate"):
        Calibration.from_dict(
            {**good, "scale": {"method": "panel", "theta_min": 1.0, "theta_max": 1.0}}
        )
    with pytest.raises(ValueError, match="panel"):
        Calibration.from_dict({**good, "panel": good["panel"][:-1]})


@settings(max_examples=60, deadline=None)
@given(
    lo=st.floats(-10, 10),
    width=st.floats(0.01, 20),
    method=st.sampled_from(["panel", "items", "logistic"]),
    b=st.lists(st.floats(-50, 50), min_size=1, max_size=20),
)
def test_to_z_is_monotone_bounded_and_survives_json(lo, width, method, b):
    keys = {
        "panel": ("theta_min", "theta_max"),
        "items": ("b_min", "b_max"),
        "logistic": ("c", "s"),
    }
    first, second = keys[method]
    scale = {"method": method, first: lo, second: lo + width if method != "logistic" else width}
    cal = Calibration(
        model="1pl", abilities={"m1": lo, "m2": lo + width}, scale=scale, panel=("m1", "m2")
    )
    b = np.sort(np.array(b))
    z = cal.to_z(b)
    assert np.all((z >= 0) & (z <= 1)) and np.all(np.diff(z) >= 0)
    again = Calibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert np.array_equal(again.to_z(b), z)


def test_calibrate_counts_equals_calibrate_items_bit_for_bit(bank_and_new):
    """The count-sequence entry (BenchFill's fast path) is the frame path without the frame:
    same cells, same arithmetic, so the same table to the last bit — shuffled rows,
    duplicated cells, all-solved and none-solved items included."""
    from curation.irt import calibrate_counts

    bank_fit, new, _ = bank_and_new
    cal = bank_fit.calibration
    rng = np.random.default_rng(5)
    part = new.filter(pl.col("item") < "item-01040")
    solved = part.filter(pl.col("item") == "item-01000").with_columns(
        item=pl.lit("all-solved"), n_correct=pl.col("n_trials")
    )
    failed = part.filter(pl.col("item") == "item-01001").with_columns(
        item=pl.lit("none-solved"), n_correct=pl.lit(0, dtype=part["n_correct"].dtype)
    )
    rows = pl.concat([part, part.head(7), solved, failed])  # head(7): duplicated cells
    rows = rows[rng.permutation(rows.height).tolist()]
    frame = calibrate_items(rows, cal)
    fast = calibrate_counts(
        rows["model"].to_list(),
        rows["item"].to_list(),
        rows["n_trials"].to_list(),
        rows["n_correct"].to_list(),
        cal,
    )
    assert fast.equals(frame)
    assert set(fast["bound"].drop_nulls()) >= {"all-solved", "none-solved"}
    with pytest.raises(ValueError, match="n_correct <= n_trials"):
        calibrate_counts(["m"], ["i"], [1], [2], cal)
