"""The one-step leave-one-model-out approximation against exact refits (issue 30 item 2)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from curation.irt import loo_stability, simulate_responses
from curation.irt._checks import LOO_APPROX_TOL

REPO = Path(__file__).resolve().parents[2]


GSM8K_RAW = REPO / "data" / "raw" / "zeroeval" / "gsm_responses.csv"


def _gsm8k() -> pl.DataFrame:
    """The bundled GSM8K panel (42 models x 1,319 items, one trial) as a long table, read
    from the committed raw matrix: a fresh clone has it, unlike the DVC outputs."""
    wide = pl.read_csv(GSM8K_RAW)
    long = wide.unpivot(index="model", variable_name="item", value_name="n_correct")
    return long.drop_nulls("n_correct").with_columns(
        pl.col("n_correct").cast(pl.Int64), pl.lit(1, dtype=pl.Int64).alias("n_trials")
    )


def _col(result: dict, key: str) -> np.ndarray:
    return np.array([r[key] for r in result["per_model"]])


def _both(df: pl.DataFrame, model: str) -> tuple[dict, dict]:
    exact = loo_stability(df, model=model)
    approx = loo_stability(df, model=model, exact_max_models=1, exact_top=0)
    return exact, approx


def _check_close(exact: dict, approx: dict) -> None:
    assert exact["mode"] == "exact" and approx["mode"] == "approximate"
    assert [r["dropped"] for r in exact["per_model"]] == [r["dropped"] for r in approx["per_model"]]
    assert _col(exact, "n_items").tolist() == _col(approx, "n_items").tolist()
    for key in ("max_abs_dz", "mean_abs_dz", "max_abs_dz_aligned", "mean_abs_dz_aligned"):
        err = np.max(np.abs(_col(exact, key) - _col(approx, key)))
        assert err <= LOO_APPROX_TOL, (key, err)
    # 0.025: with the 2PL scale identified by mean log a = 0 (issue 29), the approximation
    # misses two of GSM8K's models by 0.018-0.020 (gemma-2-2b-it: rho 0.950 exact, 0.931
    # approximated; 0.004 apart before); every other model stays within 0.002, and in
    # the stage the most influential models are the ``exact_top`` refitted exactly
    assert np.max(np.abs(_col(exact, "spearman_b") - _col(approx, "spearman_b"))) <= 0.025
    assert abs(exact["overall"]["max_abs_dz"] - approx["overall"]["max_abs_dz"]) <= LOO_APPROX_TOL


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_approximation_matches_exact_refits_on_simulated_data(model: str) -> None:
    df, _ = simulate_responses(
        n_models=60, n_items=150, n_trials=1, model=model, missing=0.1, seed=3
    )
    _check_close(*_both(df, model))


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_approximation_matches_exact_refits_on_gsm8k(model: str) -> None:
    _check_close(*_both(_gsm8k(), model))


def test_top_k_catches_the_most_influential_model() -> None:
    """A planted outlier (the strongest model by far: the panel scale's top end) is the
    model whose removal moves z most; the approximate mode must refit it exactly."""
    df, _ = simulate_responses(n_models=40, n_items=120, n_trials=1, model="1pl", seed=7)
    items = df["item"].unique().sort()
    star = pl.DataFrame({"model": "model-star", "item": items})
    star = star.join(df.select("item", "n_trials").unique("item"), on="item")
    star = star.with_columns(pl.col("n_trials").alias("n_correct"))
    star = star.select(df.columns).cast(dict(df.schema))  # type: ignore[arg-type]
    df = pl.concat([df, star])
    exact = loo_stability(df, model="1pl")
    worst = exact["per_model"][int(np.argmax(_col(exact, "max_abs_dz")))]["dropped"]
    assert worst == "model-star"
    approx = loo_stability(df, model="1pl", exact_max_models=10, exact_top=3)
    assert approx["mode"] == "approximate" and approx["n_exact"] == 3
    row = next(r for r in approx["per_model"] if r["dropped"] == worst)
    ref = next(r for r in exact["per_model"] if r["dropped"] == worst)
    assert row == ref  # refitted exactly, not approximated
    assert approx["overall"]["max_abs_dz"] == exact["overall"]["max_abs_dz"]
    assert approx["approx_error"] <= LOO_APPROX_TOL


def test_exact_mode_at_or_below_the_threshold_is_todays_result() -> None:
    df, _ = simulate_responses(n_models=12, n_items=40, n_trials=2, model="1pl", seed=1)
    today = loo_stability(df, model="1pl")
    at = loo_stability(df, model="1pl", exact_max_models=12, exact_top=0)
    assert at == today and at["mode"] == "exact"


def test_budgets_sample_the_dropped_models_and_cap_the_exact_refits() -> None:
    """Leaderboard budgets (annotate.loo_approx_max_work, loo_exact_max_cells): a sample
    of models is dropped, each row the unbudgeted approximation's own; no exact refit
    fits the budget, so no error is claimed; the caller's full fit is reused as is."""
    from curation.irt import encode, fit

    df, _ = simulate_responses(n_models=60, n_items=150, n_trials=1, missing=0.1, seed=3)
    cells = encode(df)
    every = loo_stability(cells, exact_max_models=1, exact_top=0)
    work = 10 * cells.n_models * cells.n_items  # room for 10 dropped models
    got = loo_stability(
        cells, exact_max_models=1, exact_top=5, approx_max_work=work, exact_max_cells=10
    )
    assert got["sampled"] is True and got["n_dropped"] == 10
    assert got["n_exact"] == 0 and got["approx_error"] is None
    by_name = {r["dropped"]: r for r in every["per_model"]}
    assert len({r["dropped"] for r in got["per_model"]}) == 10
    for row in got["per_model"]:
        assert row == by_name[row["dropped"]]
    assert got["overall"]["max_abs_dz"] <= every["overall"]["max_abs_dz"]
    full = fit(cells, method="map")
    assert loo_stability(cells, full=full) == loo_stability(cells)
