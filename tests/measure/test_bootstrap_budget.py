"""The gaps bootstrap at leaderboard size (issue 30 item 5): a 2PL item likelihood of a
large panel taken as normal at its mode (against the exact grid), the replicates cut by
``gaps.intervals.max_refit_cells``, and the Monte Carlo error the report then states."""

from __future__ import annotations

import numpy as np

from curation.irt import FitSettings, encode, simulate_responses
from curation.irt._data import Dense
from curation.irt._eb import NORMAL_MODELS, item_loglik, item_loglik_normal, posterior
from curation.irt._map import fit_map_2pl
from curation.measure import GapsSettings, monte_carlo_se
from curation.measure._settings import MIN_REPLICATES


def test_replicates_follow_the_cell_budget():
    iv = GapsSettings().intervals
    assert iv.replicates_for(42 * 1319) == iv.replicates == 200  # gsm8k's size: all of them
    assert iv.replicates_for(4030 * 250) == 19  # 20,000,000 // 1,007,500
    assert iv.replicates_for(4000 * 30_000) == MIN_REPLICATES  # never fewer
    few = GapsSettings.model_validate({"intervals": {"replicates": 5}}).intervals
    assert few.replicates_for(10**9) == 5  # never more than asked


def test_self_check_and_panel_share_what_the_bootstrap_leaves():
    iv = GapsSettings().intervals
    bundled = iv.budget_for(42 * 1319, 42)  # gsm8k: every part runs
    assert (bundled.replicates, bundled.worlds, bundled.panel, bundled.loo) == (200, 50, 50, True)
    board = iv.budget_for(4030 * 250, 4030)  # a leaderboard: the bootstrap takes it all
    assert (board.replicates, board.worlds, board.panel, board.loo) == (19, 0, 0, False)
    tight = GapsSettings.model_validate({"intervals": {"max_refit_cells": 300 * 42 * 1319}})
    cut = tight.intervals.budget_for(42 * 1319, 42)  # 100 refits left after 200
    assert (cut.worlds, cut.panel) == (50, 0)  # the self-check first; the panel skipped


def test_normal_item_likelihood_matches_the_exact_grid():
    """At NORMAL_MODELS models the posterior of b given the abilities barely moves: its
    mean by a small share of its SD, its SD by a few percent; bounded items stay exact."""
    df, _ = simulate_responses(
        n_models=NORMAL_MODELS + 44, n_items=80, n_trials=1, model="2pl", missing=0.1, seed=2
    )
    cells = encode(df)
    mp = fit_map_2pl(cells, FitSettings())
    lay = Dense(cells)
    k, n = lay.K.copy(), lay.N
    k[:, 0] = n[:, 0]  # an item every model solved: no mode, exact row
    grid = np.linspace(mp.theta.min() - 5, mp.theta.max() + 5, 121)
    theta = mp.theta + np.random.default_rng(0).normal(0, 1, mp.theta.size) * mp.theta_se
    exact = item_loglik(k, n, theta, mp.a, grid)
    approx = item_loglik_normal(k, n, theta, mp.a, grid, mp.b)
    assert np.allclose(approx[0] - approx[0].max(), exact[0] - exact[0].max())
    prior = -0.5 * (grid / 3.0) ** 2
    pe, pa = posterior(exact, prior), posterior(approx, prior)
    mean_e, mean_a = pe @ grid, pa @ grid
    sd_e = np.sqrt(pe @ grid**2 - mean_e**2)
    sd_a = np.sqrt(pa @ grid**2 - mean_a**2)
    assert np.max(np.abs(mean_a - mean_e) / sd_e) < 0.35
    assert np.median(np.abs(mean_a - mean_e) / sd_e) < 0.05
    assert np.max(np.abs(sd_a - sd_e) / sd_e) < 0.1


def _world(replicates: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    z_hat = np.sort(rng.beta(2, 3, 150))
    z_true = np.clip(z_hat[None, :] + rng.normal(0, 0.02, (replicates, 150)), 0, 1)
    z_refit = np.clip(z_true + rng.normal(0.01, 0.03, (replicates, 150)), 0, 1)
    return z_hat, z_true, z_refit


def test_monte_carlo_error_shrinks_with_the_replicates():
    few = monte_carlo_se(*_world(12))
    many = monte_carlo_se(*_world(400))
    assert 0 < many < few
    assert monte_carlo_se(*_world(12)) == few  # seeded


def test_a_cut_bootstrap_carries_both_counts_and_its_error():
    from curation.irt import fit
    from curation.measure import FittedBenchmark, measure_benchmark
    from curation.schemas import validate_record

    df, _ = simulate_responses(n_models=12, n_items=60, n_trials=1, seed=4)
    result = fit(df, model="1pl", method="map", seed=0)
    difficulty = result.items.select("item", "b", "z")
    fitted = FittedBenchmark.load(df, result.calibration, difficulty)
    full, _ = fitted.bootstrap(replicates=20, seed=0)
    assert full.replicates_requested is None and full.monte_carlo_se is None
    cut, _ = fitted.bootstrap(replicates=12, seed=0, requested=200)
    assert cut.n_draws == 12 and cut.replicates_requested == 200
    assert cut.monte_carlo_se is not None and cut.monte_carlo_se > 0
    m = measure_benchmark(fitted.z, name="sim", intervals=cut)
    metrics = m.to_metrics()
    assert metrics["intervals"]["replicates_requested"] == 200
    assert validate_record(metrics, "gaps_metrics") is None
    plain = measure_benchmark(fitted.z, intervals=full).to_metrics()["intervals"]
    assert "replicates_requested" not in plain and "monte_carlo_se" not in plain
