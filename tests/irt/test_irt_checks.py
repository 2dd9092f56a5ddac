"""Model checks: BIC picks the generating model; leave-one-model-out stability."""

from __future__ import annotations

import json

import numpy as np

from curation.irt import bic_compare, loo_stability, simulate_responses


def test_bic_prefers_2pl_on_2pl_data():
    df, _ = simulate_responses(n_models=12, n_items=400, n_trials=32, model="2pl", seed=41)
    out = bic_compare(df, seed=0)
    assert out["choice"] == "2pl" and out["delta_bic"] < 0
    assert out["2pl"]["n_params"] == out["1pl"]["n_params"] + 400


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
