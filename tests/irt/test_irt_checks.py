"""Model checks: BIC picks the generating model; leave-one-model-out stability."""

from __future__ import annotations

import json

import numpy as np
import pytest

from curation.irt import bic_compare, loo_stability, simulate_responses


def test_bic_prefers_2pl_on_2pl_data():
    df, _ = simulate_responses(n_models=12, n_items=400, n_trials=32, model="2pl", seed=41)
    out = bic_compare(df, seed=0)
    assert out["choice"] == "2pl" and out["delta_bic"] < 0
    assert out["2pl"]["n_params"] == out["1pl"]["n_params"] + 400 - 1  # scale: mean log a = 0


def test_bic_prefers_1pl_on_1pl_data():
    df, _ = simulate_responses(n_models=12, n_items=400, n_trials=32, model="1pl", seed=42)
    out = bic_compare(df, seed=0)
    assert out["choice"] == "1pl" and out["delta_bic"] > 0
    assert out["2pl"]["loglik"] > out["1pl"]["loglik"]  # nested: 2PL fits at least as well
    json.dumps(out)


def test_loo_stability_shape():
    df, _ = simulate_responses(n_models=6, n_items=200, n_trials=16, seed=43)
    out = loo_stability(df, seed=0)
    assert out["n_models"] == 6 and len(out["per_model"]) == 6
    assert [r["dropped"] for r in out["per_model"]] == [f"model-{j:02d}" for j in range(6)]
    keys = {"max_abs_dz", "mean_abs_dz", "max_abs_dz_aligned", "mean_abs_dz_aligned"}
    assert keys <= set(out["overall"]) and {"min_spearman_b", "mean_spearman_b"} <= set(
        out["overall"]
    )
    for row in out["per_model"]:
        assert 0 <= row["mean_abs_dz"] <= row["max_abs_dz"] <= 1
        assert row["spearman_b"] > 0.95
    assert out["overall"]["max_abs_dz"] == max(r["max_abs_dz"] for r in out["per_model"])
    assert np.isfinite(out["overall"]["mean_abs_dz"])
    json.dumps(out)  # JSON-ready for metrics/irt.json


@pytest.mark.parametrize("model", ["1pl", "2pl"])
@pytest.mark.parametrize("scale", ["panel", "items"])
def test_loo_warm_start_matches_cold_refits(model, scale):
    """Warm-started refits reach the cold refits' modes: every metric within 1e-9.

    Binary data with missing cells and a small panel, so that dropping a model leaves
    items all- or none-solved (their b slides far towards the prior: the hard case for
    a warm start) and items with no response at all (dropped from the refit).
    """
    df, _ = simulate_responses(
        n_models=9, n_items=400, n_trials=1, model=model, missing=0.2, seed=44
    )
    warm = loo_stability(df, model=model, scale=scale)
    cold = loo_stability(df, model=model, scale=scale, method="refit")
    assert warm["method"] == "warm" and cold["method"] == "refit"
    for w, c in zip(warm["per_model"], cold["per_model"], strict=True):
        assert w["dropped"] == c["dropped"] and w["n_items"] == c["n_items"]
        for key in w:
            if key not in ("dropped", "n_items"):
                assert w[key] == pytest.approx(c[key], abs=1e-9), (w["dropped"], key)


def test_loo_refit_modes_match_exact_fit():
    """The warm refit is the exact MAP without the model (same b, θ to 1e-10)."""
    from curation.irt import FitSettings
    from curation.irt._data import encode
    from curation.irt._fit import fit_cells
    from curation.irt._loo import refit_1pl, refit_2pl, warm_start
    from curation.irt._map import fit_map_1pl, fit_map_2pl

    df, _ = simulate_responses(n_models=10, n_items=300, n_trials=1, model="2pl", seed=45)
    cells, s = encode(df), FitSettings()
    for model in ("1pl", "2pl"):
        full = fit_cells(cells, model=model, method="map", seed=0, scale="panel", settings=s)
        for j in (0, 4, 9):
            sub = cells.drop_model(j)
            idx = np.unique(cells.ii[cells.mi != j])
            keep = np.delete(np.arange(cells.n_models), j)
            th0, b0 = warm_start(
                full.models["theta"].to_numpy(), full.items["b"].to_numpy(), keep, idx
            )
            exact = fit_map_1pl(sub, s)
            if model == "2pl":
                al0 = np.log(full.items["a"].to_numpy()[idx])
                exact = fit_map_2pl(sub, s, exact)
                th, b, it, ok = refit_2pl(sub, s, th0, b0, al0)
            else:
                th, b, it, ok = refit_1pl(sub, s, th0, b0)
            assert ok and it <= exact.iterations
            np.testing.assert_allclose(b, exact.b, atol=1e-10)
            np.testing.assert_allclose(th, exact.theta, atol=1e-10)


def test_spearman_matches_scipy_with_ties():
    from scipy.stats import spearmanr

    from curation.irt._checks import rank_average, spearman

    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, 500).astype(float)
    y = x + rng.normal(size=500)
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    np.testing.assert_array_equal(rank_average(np.array([3.0, 1.0, 3.0, 2.0])), [3.5, 1, 3.5, 2])
    # rounding noise does not break a tie
    noisy = np.array([1.0, 1.0 + 1e-14, 2.0, 1.0 - 1e-14])
    np.testing.assert_array_equal(rank_average(noisy, 1e-9), [2, 2, 4, 2])
    assert np.isnan(spearman(np.ones(5), np.arange(5.0)))
