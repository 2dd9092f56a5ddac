"""MAP fits recover known parameters; output contract; layouts; bounded items."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from curation.irt import fit, simulate_responses
from tests.irt.conftest import aligned

COLUMNS = [
    "item", "b", "se", "a", "c", "b_curve", "z", "z_low", "z_high", "n_models", "p_mean", "bound"
]  # fmt: skip


def test_1pl_recovers_b_12x2000(sim_1pl):
    df, truth = sim_1pl
    res = fit(df)
    est, true = aligned(res.items, truth)
    assert np.corrcoef(est, true)[0, 1] >= 0.99
    assert res.diagnostics["converged"]
    # identification: abilities centred, matching the centred truth
    theta = res.models["theta"].to_numpy()
    assert abs(theta.mean()) < 1e-10
    assert np.corrcoef(theta, truth["theta"])[0, 1] > 0.999


def test_1pl_laplace_intervals_are_calibrated(sim_1pl):
    df, truth = sim_1pl
    res = fit(df)
    est, true = aligned(res.items, truth)
    cover = np.mean(np.abs(est - true) <= 1.6449 * res.items["se"].to_numpy())
    assert 0.86 <= cover <= 0.94


def test_2pl_recovers_a_and_b(sim_2pl):
    df, truth = sim_2pl
    res = fit(df, model="2pl")
    b_hat, b_true = aligned(res.items, truth)
    a_hat, a_true = aligned(res.items, truth, column="a", key="a")
    assert res.diagnostics["converged"]
    assert np.corrcoef(b_hat, b_true)[0, 1] >= 0.99
    assert np.corrcoef(a_hat, a_true)[0, 1] >= 0.85
    assert res.items["a"].null_count() == 0


def test_missing_30pct_still_recovers():
    df, truth = simulate_responses(n_models=12, n_items=2000, n_trials=32, missing=0.3, seed=13)
    assert df.height < 0.75 * 12 * 2000
    res = fit(df)
    est, true = aligned(res.items, truth)
    assert np.corrcoef(est, true)[0, 1] >= 0.97
    assert res.items["n_models"].min() >= 1


def test_output_contract(sim_1pl):
    df, _ = sim_1pl
    res = fit(df, benchmark="toy")
    assert res.items.columns == COLUMNS
    assert res.models.columns == ["model", "theta", "se"]
    assert res.items["a"].null_count() == res.items.height  # 1PL: a is null
    assert res.draws_b is None and res.draws_z is None
    z = res.items.select("z_low", "z", "z_high").to_numpy()
    assert np.all((z >= 0) & (z <= 1))
    assert np.all(z[:, 0] <= z[:, 1]) and np.all(z[:, 1] <= z[:, 2])
    d = res.diagnostics
    for key in (
        "method",
        "interval_source",
        "converged",
        "iterations",
        "loglik",
        "n_params",
        "bic",
    ):
        assert key in d
    assert d["method"] == "map" and d["interval_source"] == "laplace"
    assert d["n_params"] == 11 + 2000
    cal = res.calibration
    assert cal.benchmark == "toy" and cal.model == "1pl" and len(cal.panel) == 12
    assert "mean ability 0" in cal.identification


def test_sparse_layout_matches_dense():
    df, _ = simulate_responses(n_models=8, n_items=300, n_trials=4, missing=0.5, seed=14)
    for model in ("1pl", "2pl"):
        dense = fit(df, model=model, layout="dense")
        sparse = fit(df, model=model, layout="sparse")
        assert dense.diagnostics["layout"] == "dense" and sparse.diagnostics["layout"] == "sparse"
        for col in ("b", "se", "z"):
            np.testing.assert_allclose(sparse.items[col], dense.items[col], rtol=1e-7, atol=1e-9)


def test_bounded_items_are_finite_and_flagged():
    df, _ = simulate_responses(n_models=6, n_items=50, n_trials=8, seed=15)
    models = df["model"].unique(maintain_order=True).to_list()
    extra = pl.DataFrame(
        {
            "model": models * 2,
            "item": ["easy"] * 6 + ["impossible"] * 6,
            "n_trials": [8] * 12,
            "n_correct": [8] * 6 + [0] * 6,
        }
    )
    for model in ("1pl", "2pl"):
        res = fit(pl.concat([df, extra]), model=model)
        rows = {r["item"]: r for r in res.items.iter_rows(named=True)}
        easy, hard = rows["easy"], rows["impossible"]
        assert easy["bound"] == "all-solved" and hard["bound"] == "none-solved"
        assert np.isfinite(easy["b"]) and np.isfinite(hard["b"])
        assert easy["b"] < res.items["b"].drop_nulls().median() < hard["b"]
        assert easy["z_low"] == 0.0 and hard["z_high"] == 1.0  # open-ended intervals
        counts = res.items["bound"].value_counts()
        n = dict(zip(counts["bound"], counts["count"], strict=True))
        assert res.diagnostics["n_all_solved"] == n["all-solved"]
        assert res.diagnostics["n_none_solved"] == n["none-solved"]
        p = res.items["p_mean"]
        assert ((p == 1.0) == (res.items["bound"] == "all-solved")).all()
        assert ((p == 0.0) == (res.items["bound"] == "none-solved")).all()


def test_duplicate_rows_are_summed(sim_1pl):
    df, _ = sim_1pl
    small = df.filter(pl.col("item") < "item-00100")
    half = small.with_columns(
        n_trials=pl.lit(16, dtype=pl.Int64), n_correct=pl.col("n_correct") // 2
    )
    rest = small.with_columns(
        n_trials=pl.lit(16, dtype=pl.Int64),
        n_correct=pl.col("n_correct") - pl.col("n_correct") // 2,
    )
    split = pl.concat([half, rest.with_columns(extra=pl.lit("ignored"))], how="diagonal")
    a, b = fit(small), fit(split.sample(fraction=1.0, shuffle=True, seed=1))
    joined = a.items.join(b.items, on="item", suffix="_split")
    np.testing.assert_allclose(joined["b"], joined["b_split"], atol=1e-9)


@pytest.mark.parametrize("scale", ["panel", "items", "logistic"])
def test_scales_map_into_unit_interval(sim_1pl, scale):
    df, _ = sim_1pl
    res = fit(df.filter(pl.col("item") < "item-00300"), scale=scale)
    z = res.items["z"].to_numpy()
    assert res.calibration.scale["method"] == scale
    assert np.all((z >= 0) & (z <= 1))
    b = res.items["b"].to_numpy()
    assert np.all(np.diff(z[np.argsort(b)]) >= 0)  # monotone in b
    if scale == "items":
        free = res.items.filter(pl.col("bound").is_null())["z"]
        assert free.min() == 0.0 and free.max() == 1.0


def test_matrix_free_fit_finds_the_same_mode_as_the_exact_one():
    """layout="chunked" (the leaderboard-sized path) solves the same Newton steps by CG."""
    import numpy as np

    from curation.irt import fit, simulate_responses

    df, _ = simulate_responses(n_models=30, n_items=200, n_trials=1, seed=3)
    df = df.filter(np.random.default_rng(0).random(df.height) >= 0.1)
    for model in ("1pl", "2pl"):
        exact = fit(df, model=model, layout="dense")
        big = fit(df, model=model, layout="chunked")
        assert big.diagnostics["layout"] == "chunked" and big.diagnostics["converged"]
        for col in ("b",) + (("a",) if model == "2pl" else ()):
            np.testing.assert_allclose(big.items[col], exact.items[col], atol=1e-9)
        np.testing.assert_allclose(big.models["theta"], exact.models["theta"], atol=1e-9)
        # standard errors: diagonal approximation of the ability block (closer with more models)
        np.testing.assert_allclose(big.items["se"], exact.items["se"], rtol=0.1)
        assert abs(big.diagnostics["loglik"] - exact.diagnostics["loglik"]) < 1e-6


def test_matrix_free_fit_with_bounded_items_and_enum_codes_matches_the_exact_one():
    """All-/none-solved items (almost no curvature: float32 noise moves them most) and an
    Enum-coded frame (codes used as they are) give the exact fit's mode on the big path."""
    df, _ = simulate_responses(n_models=40, n_items=150, n_trials=1, seed=5)
    models = df["model"].unique(maintain_order=True).to_list()
    extra = pl.DataFrame(
        {
            "model": models * 2,
            "item": ["easy"] * 40 + ["impossible"] * 40,
            "n_trials": [1] * 80,
            "n_correct": [1] * 40 + [0] * 40,
        }
    )
    df = pl.concat([df, extra])
    names = pl.Series(sorted(models))  # the order string ids are coded in
    items = pl.Series(sorted(df["item"].unique().to_list()))
    coded = df.with_columns(
        pl.col("model").cast(pl.Enum(names)), pl.col("item").cast(pl.Enum(items))
    )
    for model in ("1pl", "2pl"):
        exact = fit(df, model=model, layout="dense")
        big = fit(coded, model=model, layout="chunked")
        assert big.diagnostics["converged"]
        assert big.items["item"].to_list() == exact.items["item"].to_list()
        for col in ("b",) + (("a",) if model == "2pl" else ()):
            np.testing.assert_allclose(big.items[col], exact.items[col], atol=1e-9)
        assert abs(big.diagnostics["bic"] - exact.diagnostics["bic"]) < 1e-5


def test_matrix_free_fit_stopped_by_max_iter_reports_it():
    df, _ = simulate_responses(n_models=30, n_items=100, n_trials=1, seed=6)
    for model in ("1pl", "2pl"):
        res = fit(df, model=model, layout="chunked", max_iter=2)
        assert not res.diagnostics["converged"] and res.diagnostics["iterations"] == 2
        assert np.all(np.isfinite(res.items["se"].to_numpy()))
