"""Parametric bootstrap pieces: batched fits, score steps, the smooth truth, the replicates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from curation.irt import FitSettings, parametric_bootstrap, score_steps, simulate_responses
from curation.irt._batch import fit_map_1pl_batch
from curation.irt._data import Cells, Dense, encode
from curation.irt._eb import SmoothTruth, draw_grid, fit_log_prior, posterior
from curation.irt._map import fit_map_1pl, fit_map_2pl


@pytest.fixture(scope="module")
def small() -> Cells:
    df, _ = simulate_responses(n_models=10, n_items=120, n_trials=1, missing=0.15, seed=3)
    return encode(df)


def test_batched_fits_land_on_the_single_fits_modes(small: Cells) -> None:
    s = FitSettings()
    lay = Dense(small)
    mp = fit_map_1pl(small, s)
    rng = np.random.default_rng(0)
    p = expit(mp.theta[:, None] - mp.b[None, :])
    k = rng.binomial(lay.N.astype(int)[None].repeat(5, 0), p[None].repeat(5, 0))
    batch = fit_map_1pl_batch(k, lay.N, s)
    assert batch.converged.all()
    for r in range(5):
        one = fit_map_1pl(
            Cells(small.models, small.items, small.mi, small.ii, k[r][small.mi, small.ii], small.n),
            s,
        )
        assert np.allclose(batch.theta[r], one.theta, atol=1e-9)
        assert np.allclose(batch.b[r], one.b, atol=1e-9)


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_score_steps_bracket_the_fit_and_reproduce_it(small: Cells, model: str) -> None:
    """The one-dimensional score equation at the item's own score gives back the joint MAP b
    (the joint mode solves every item's equation), and one more correct answer is easier."""
    s = FitSettings()
    mp = fit_map_1pl(small, s)
    if model == "2pl":
        mp = fit_map_2pl(small, s, mp)
    easier, harder = score_steps(small, mp.theta, mp.b, mp.a, b_sd=s.b_sd)
    k = np.bincount(small.ii, weights=small.k, minlength=small.n_items)
    n = np.bincount(small.ii, weights=small.n, minlength=small.n_items)
    ok_e, ok_h = k < n, k > 0
    assert np.all(easier[ok_e] < mp.b[ok_e]) and np.all(harder[ok_h] > mp.b[ok_h])
    assert np.isnan(easier[~ok_e]).all() and np.isnan(harder[~ok_h]).all()
    from curation.irt._resolution import solve_b

    again = solve_b(k, small, mp.theta, mp.a, s.b_sd, np.zeros(small.n_items))
    assert np.allclose(again, mp.b, atol=1e-6)


def test_single_trial_1pl_b_is_a_function_of_the_score() -> None:
    """Complete single-trial design: items with equal total score get equal b (sufficiency)."""
    df, _ = simulate_responses(n_models=8, n_items=300, n_trials=1, seed=5)
    cells = encode(df)
    mp = fit_map_1pl(cells, FitSettings())
    k = np.bincount(cells.ii, weights=cells.k, minlength=cells.n_items)
    for score in np.unique(k):
        assert np.ptp(mp.b[k == score]) < 1e-6
    assert np.unique(np.round(mp.b, 6)).size == np.unique(k).size


def test_log_prior_recovers_a_known_density() -> None:
    """g-modelling with exact (noise-free) observations recovers a smooth density."""
    rng = np.random.default_rng(1)
    grid = np.linspace(-5, 5, 201)
    x = rng.normal(0.5, 1.2, 4000)
    loglik = -0.5 * ((x[:, None] - grid[None, :]) / 0.05) ** 2
    lg = fit_log_prior(loglik, grid, df=10)
    w = np.exp(lg)
    mean = float(w @ grid)
    sd = float(np.sqrt(w @ (grid - mean) ** 2))
    assert mean == pytest.approx(0.5, abs=0.06) and sd == pytest.approx(1.2, abs=0.06)
    post = posterior(loglik[:3], lg)
    assert np.allclose(post.sum(axis=1), 1.0)
    draws = draw_grid(grid, post, rng)
    assert np.all(np.abs(draws - x[:3]) < 0.2)


def test_smooth_truth_draws_are_continuous_and_plausible(small: Cells) -> None:
    s = FitSettings()
    mp = fit_map_1pl(small, s)
    lay = Dense(small)
    st = SmoothTruth.fit(lay.K, lay.N, mp.theta, mp.theta_se)
    theta, b = st.draw(np.random.default_rng(0), 40)
    assert theta.shape == (40, small.n_models) and b.shape == (40, small.n_items)
    assert np.allclose(theta.mean(axis=1), 0.0)
    # Continuous: items with the same score no longer share one b.
    assert np.unique(np.round(b[0], 9)).size == small.n_items
    # Plausible: each ability draw sits near its estimate (within a few standard errors).
    assert np.all(np.abs(theta.mean(axis=0) - mp.theta) < 3 * mp.theta_se + 0.2)
    assert np.corrcoef(b.mean(axis=0), mp.b)[0, 1] > 0.95


def test_bootstrap_is_deterministic_and_plugin_truth_is_the_fit(small: Cells) -> None:
    a = parametric_bootstrap(small, replicates=8, seed=4)
    b = parametric_bootstrap(small, replicates=8, seed=4)
    assert np.array_equal(a.z_refit, b.z_refit) and np.array_equal(a.z_true, b.z_true)
    assert a.z_true.shape == (8, small.n_items) and a.n_unconverged == 0
    assert ((a.z_true >= 0) & (a.z_true <= 1)).all()
    plug = parametric_bootstrap(small, replicates=4, seed=4, truth="plugin")
    assert np.allclose(plug.z_true, plug.z_hat[None, :])
    # Each replicate's anchors are re-derived: the refits' weakest abilities vary.
    assert np.ptp(a.theta_range_refit[:, 0]) > 0


def test_bootstrap_2pl_runs_and_rejects_bad_input(small: Cells) -> None:
    out = parametric_bootstrap(small, model="2pl", replicates=3, seed=0)
    assert out.z_refit.shape == (3, small.n_items)
    with pytest.raises(ValueError, match="replicates"):
        parametric_bootstrap(small, replicates=1)
    with pytest.raises(ValueError, match="truth"):
        parametric_bootstrap(small, truth="oracle")  # type: ignore[arg-type]


def test_dense_refitter_lands_on_the_full_fits_modes() -> None:
    """The bootstrap's modes-only refit is the same Newton iteration as the full fit: same
    mode and convergence on a design with missing cells, counts of several trials included."""
    from curation.irt._refit import DenseRefitter

    s = FitSettings()
    for n_trials, missing in ((1, 0.1), (4, 0.3)):
        df, _ = simulate_responses(
            n_models=12, n_items=300, n_trials=n_trials, missing=missing, seed=5
        )
        cells = encode(df)
        lay = Dense(cells)
        got_th, got_b, ok = DenseRefitter(lay.N, s).fit(lay.K)
        ref = fit_map_1pl(cells, s)
        assert ok and ref.converged
        assert np.allclose(got_th, ref.theta, atol=1e-10, rtol=0)
        assert np.allclose(got_b, ref.b, atol=1e-10, rtol=0)


def test_cell_logits_pick_the_observed_cells(small: Cells) -> None:
    """The dense-then-gather logits equal θ[mi] − b[ii] cell by cell (with missing cells)."""
    from curation.irt._bootstrap import _cell_logits

    rng = np.random.default_rng(1)
    theta, b = rng.normal(size=(3, small.n_models)), rng.normal(size=(3, small.n_items))
    assert small.k.size < small.n_models * small.n_items  # the fixture has missing cells
    assert np.array_equal(_cell_logits(small, theta, b), theta[:, small.mi] - b[:, small.ii])
