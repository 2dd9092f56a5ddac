"""Bad input fails loudly, with the shapes and names a user needs to fix it."""

from __future__ import annotations

import polars as pl
import pytest

from curation.irt import FitSettings, bic_compare, fit, loo_stability, simulate_responses


def _frame(rows):
    return pl.DataFrame(rows, schema=["model", "item", "n_trials", "n_correct"], orient="row")


GOOD = [("m1", "q1", 4, 2), ("m2", "q1", 4, 3), ("m1", "q2", 4, 0), ("m2", "q2", 4, 1)]


def test_n_correct_above_n_trials():
    with pytest.raises(ValueError, match=r"n_correct <= n_trials.*model='m2' item='q2'"):
        fit(_frame(GOOD[:3] + [("m2", "q2", 4, 5)]))


def test_negative_and_zero_trials():
    with pytest.raises(ValueError, match="n_trials >= 1"):
        fit(_frame(GOOD[:3] + [("m2", "q2", 0, 0)]))
    with pytest.raises(ValueError, match="1 of 4 rows"):
        fit(_frame(GOOD[:3] + [("m2", "q2", 4, -1)]))


def test_empty_frame():
    with pytest.raises(ValueError, match="empty"):
        fit(_frame(GOOD).head(0))


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match=r"missing column\(s\) \['n_correct'\]"):
        fit(_frame(GOOD).drop("n_correct"))


def test_nulls_and_fractions():
    with pytest.raises(ValueError, match="null"):
        fit(
            _frame(GOOD).with_columns(
                n_correct=pl.when(pl.col("item") == "q1").then(None).otherwise(1)
            )
        )
    with pytest.raises(ValueError, match="whole numbers"):
        fit(_frame(GOOD).with_columns(n_correct=pl.col("n_correct") / 3))


def test_one_model_is_not_enough():
    with pytest.raises(ValueError, match="at least 2 models"):
        fit(_frame(GOOD).filter(pl.col("model") == "m1"))


def test_not_a_dataframe():
    with pytest.raises(TypeError, match="polars DataFrame"):
        fit(GOOD)  # type: ignore[arg-type]


def test_bad_names_and_settings():
    df = _frame(GOOD)
    with pytest.raises(ValueError, match="model must be one of"):
        fit(df, model="4pl")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="method must be one of"):
        fit(df, method="vi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="scale must be one of"):
        fit(df, scale="minmax")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown fit setting\(s\) \['b_prior'\]"):
        fit(df, b_prior=2.0)
    with pytest.raises(ValueError, match=r"fit setting b_sd: Input should be greater than 0"):
        fit(df, b_sd=0.0)
    with pytest.raises(ValueError, match=r"fit setting target_accept: .*less than 1"):
        fit(df, settings=FitSettings(), target_accept=1.0)
    with pytest.raises(ValueError, match=r"fit setting max_iter: Input should be a valid int"):
        fit(df, max_iter=2.5)
    with pytest.raises(ValueError, match="unknown fit setting"):
        bic_compare(df, nonsense=1)


def test_loo_needs_three_models():
    with pytest.raises(ValueError, match="at least 3 models"):
        loo_stability(_frame(GOOD))


def test_simulate_rejects_bad_arguments():
    with pytest.raises(ValueError, match="missing"):
        simulate_responses(n_models=3, n_items=5, n_trials=1, missing=1.0, seed=0)
    with pytest.raises(ValueError, match="n_models >= 2"):
        simulate_responses(n_models=1, n_items=5, n_trials=1, seed=0)


def test_a_fit_settings_and_its_keywords_fit_alike():
    """``fit(settings=FitSettings(...))`` (the annotate stage) and ``fit(**keywords)`` (the
    library form) are one fit, and the calibration records the same settings."""
    df = _frame(GOOD)
    by_model = fit(df, settings=FitSettings(b_sd=2.0, max_iter=50))
    by_keywords = fit(df, b_sd=2.0, max_iter=50)
    assert by_model.calibration.settings == by_keywords.calibration.settings
    assert by_model.calibration.settings == {
        "method": "map",
        "seed": 0,
        "theta_sd": 3.0,
        "b_sd": 2.0,
        "log_a_sd": 0.5,
        "max_iter": 50,
        "tol": 1e-8,
    }
    assert by_model.items.equals(by_keywords.items)
    assert not by_model.items.equals(fit(df).items)  # the prior sd reached the fit
