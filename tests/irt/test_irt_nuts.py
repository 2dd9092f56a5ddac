"""NUTS: posterior intervals cover the truth, diagnostics are reported, JAX stays lazy."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from curation.irt import fit, simulate_responses
from tests.irt.conftest import aligned


@pytest.mark.long(seconds=50)
def test_nuts_90pct_intervals_cover_truth():
    df, truth = simulate_responses(n_models=12, n_items=300, n_trials=32, seed=21)
    res = fit(df, method="nuts", seed=3)
    d = res.diagnostics
    assert d["method"] == "nuts" and d["interval_source"] == "posterior"
    assert d["max_rhat"] <= 1.01
    assert d["divergences"] == 0
    assert d["min_ess_bulk"] >= 400 and d["min_ess_tail"] >= 400
    assert d["chains"] == 4 and d["converged"]
    assert res.draws_b.shape == (d["chains"] * d["draws"], 300)
    _, true = aligned(res.items, truth)
    lo, hi = np.quantile(res.draws_b, [0.05, 0.95], axis=0)
    cover = np.mean((true >= lo) & (true <= hi))
    assert 0.85 <= cover <= 0.95, cover
    # z interval is the b interval through the calibration's scale
    np.testing.assert_allclose(res.items["z_high"], res.calibration.to_z(hi))
    est, _ = aligned(res.items, truth)
    assert np.corrcoef(est, true)[0, 1] >= 0.99


def test_nuts_falls_back_to_map_above_size_limit():
    df, _ = simulate_responses(n_models=4, n_items=30, n_trials=8, seed=22)
    res = fit(df, method="nuts", nuts_max_cells=10)
    d = res.diagnostics
    assert d["requested_method"] == "nuts" and d["method"] == "map"
    assert d["interval_source"] == "laplace" and "fallback_reason" in d
    assert res.draws_b is None


def test_importing_irt_does_not_import_jax():
    code = "import sys, curation.irt, curation.plots.irt; sys.exit('jax' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_missing_numpyro_says_how_to_install(monkeypatch):
    import os
    import sys

    monkeypatch.setenv("XLA_FLAGS", os.environ.get("XLA_FLAGS", ""))  # restored afterwards
    monkeypatch.setitem(sys.modules, "numpyro", None)  # makes `import numpyro` fail
    df, _ = simulate_responses(n_models=3, n_items=5, n_trials=2, seed=23)
    with pytest.raises(ImportError, match=r"pip install 'benchcurate\[bayes\]'"):
        fit(df, method="nuts")
