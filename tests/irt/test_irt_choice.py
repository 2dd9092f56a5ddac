"""Model choice (issue 29): held-out likelihood picks the truth's model on simulated
multiple-choice leaderboards, and a degenerate fit is set aside with its reason.

The worlds (:func:`curation.irt.simulate_leaderboard`) are not the fits' model: a pile of
near-chance models, floors drawn around 1/options rather than at it. The 4,000 x 250
version of these checks is ``benchmarks/bench_model_choice.py``; here 300 x 120 worlds
prove the same rule in seconds.
"""

from __future__ import annotations

import numpy as np
import pytest

from curation.irt import ModelChoiceSettings, choose_model, simulate_leaderboard
from curation.irt._checks import spearman
from curation.irt._choice import problems_of
from curation.irt._data import Cells
from curation.irt._heldout import paired_se, rank_heldout
from curation.irt._map import MapFit

WORLDS = 10
SHAPE = {"n_models": 300, "n_items": 120}


def _choices(truth: str, floor: float | None) -> list[tuple[str, float, float | None]]:
    out = []
    for seed in range(WORLDS):
        cells, true = simulate_leaderboard(**SHAPE, truth=truth, seed=seed)
        known = None if floor is None else np.full(cells.n_items, floor)
        choice = choose_model(cells, floor=known, seed=0)
        fit = choice.fits[choice.chosen]
        top_a = None if fit.a is None else float(fit.a.max())
        out.append((choice.chosen, spearman(fit.theta, true["theta"]), top_a))
    return out


def test_guessing_truth_picks_a_guessing_model():
    """Five-option items, a true floor around 0.2: 3PL in >= 9 of 10 worlds, abilities
    rank-correlate with the truth >= 0.95, no a above the stated bound."""
    got = _choices("3pl", 0.2)
    assert sum(m == "3pl" for m, _, _ in got) >= 9, got
    bound = ModelChoiceSettings().max_a
    assert all(rho >= 0.95 for _, rho, _ in got), got
    assert all(a is None or a <= bound for _, _, a in got), got


@pytest.mark.parametrize("truth", ["1pl", "2pl"])
def test_no_guessing_truth_picks_its_model(truth: str):
    """Options unknown (a matrix-only leaderboard): the 3PL estimates its floor and must
    not win where there is no guessing; 1PL and 2PL truths are told apart."""
    got = _choices(truth, None)
    assert sum(m == truth for m, _, _ in got) >= 9, got


def test_degenerate_candidate_is_set_aside_with_its_reason():
    cells, _ = simulate_leaderboard(**SHAPE, truth="2pl", seed=0)
    strict = ModelChoiceSettings(max_a=1.2)  # every 2PL fit here has an a above 1.2
    choice = choose_model(cells, candidates=["1pl", "2pl"], choice=strict, seed=0)
    assert choice.heldout_choice == "2pl" and choice.chosen == "1pl"
    assert choice.reason.startswith("2PL set aside (a up to")
    record = choice.to_metrics()
    assert record["candidates"]["2pl"]["degenerate"] and record["chosen"] == "1pl"


def _fit(theta: np.ndarray, a: np.ndarray | None, c: np.ndarray | None = None) -> MapFit:
    n = 5
    return MapFit(theta, theta * 0 + 0.1, np.zeros(n), np.ones(n), a, None, 0.0, 0.0, 1, True,
                  0.0, "dense", "observed", c)  # fmt: skip


def test_checks_flag_reordered_squeezed_and_steep_fits():
    one = _fit(np.linspace(-3, 3, 40), None)
    checks = ModelChoiceSettings()
    assert problems_of(_fit(np.linspace(-3, 3, 40), np.ones(5)), one, checks) == []
    rng = np.random.default_rng(0)
    shuffled = _fit(rng.permutation(np.linspace(-3, 3, 40)), np.ones(5))
    assert "rank-correlate" in problems_of(shuffled, one, checks)[0]
    squeezed = _fit(np.linspace(-0.9, 0.14, 40), np.full(5, 105.0))
    found = " ".join(problems_of(squeezed, one, checks))
    assert "a up to 105 > 10" in found and "squeezed to 0.17" in found
    no_floor = _fit(np.linspace(-3, 3, 40), np.ones(5), np.full(5, 0.002))
    assert "the 2PL" in problems_of(no_floor, one, checks)[0]


def test_paired_se_is_cluster_robust():
    rng = np.random.default_rng(1)
    items = np.repeat(np.arange(50), 40)
    models = np.tile(np.arange(40), 50)
    iid = rng.normal(0, 1, items.size)
    assert paired_se(iid, [np.arange(items.size)]) == pytest.approx(
        paired_se(iid), rel=0.05
    )  # singleton clusters: the per-cell error
    clustered = iid + rng.normal(0, 1, 50)[items]  # an effect shared by each item's cells
    assert paired_se(clustered, [items, models]) > 3 * paired_se(clustered)
    # a 0.0007 gain: ~2 per-cell SEs, but half a clustered one
    better = 0.01 * (clustered - clustered.mean()) + 0.0007
    plain = rank_heldout([np.zeros(items.size), better], 1.0)
    robust = rank_heldout([np.zeros(items.size), better], 1.0, [items, models])
    assert plain.best == robust.best == 1
    assert plain.chosen == 1 and robust.chosen == 0  # within one clustered SE: the simpler


def test_no_cell_held_out_falls_back_to_bic():
    """Two models: every item keeps both its cells, so nothing can be held out."""
    rng = np.random.default_rng(2)
    k = (rng.random((2, 60)) < 0.5).astype(float)
    mi, ii = np.nonzero(np.ones((2, 60)))
    cells = Cells(("m0", "m1"), tuple(f"i{j}" for j in range(60)), mi.astype(np.int32),
                  ii.astype(np.int32), k[mi, ii], np.ones(mi.size))  # fmt: skip
    choice = choose_model(cells, candidates=["1pl", "2pl"], seed=0)
    assert choice.rule == "bic" and choice.heldout_choice is None and choice.n_scored == 0
    assert choice.chosen == choice.bic_choice and "by BIC" in choice.reason


def test_large_matrix_scores_a_subset_of_models():
    """Above ``max_cells`` the folds use a seeded subset of models; the choice holds."""
    cells, _ = simulate_leaderboard(**SHAPE, truth="2pl", seed=1)
    capped = ModelChoiceSettings(max_cells=15_000)  # about half of the 36,000 cells
    choice = choose_model(cells, candidates=["1pl", "2pl"], choice=capped, seed=0)
    assert choice.chosen == "2pl"
    assert 0 < choice.n_scored <= 15_000
    assert choice.fits["2pl"].theta.size == cells.n_models  # the full fits: every model


def test_the_chosen_full_fit_is_reused_bit_for_bit() -> None:
    """annotate hands the choice's full-data mode to the fit (``fitted=``): the same
    result as solving again, so a leaderboard's fit is not solved twice."""
    import polars as pl

    from curation.irt import choose_model, encode, fit, simulate_responses

    df, _ = simulate_responses(n_models=40, n_items=80, n_trials=1, model="2pl", seed=4)
    cells = encode(df)
    choice = choose_model(cells, candidates=["1pl", "2pl"], seed=0)
    for model in ("1pl", "2pl"):
        again = fit(cells, model=model)
        reused = fit(cells, model=model, fitted=choice.fits[model])
        assert reused.items.equals(again.items) and reused.models.equals(again.models)
        assert isinstance(reused.items, pl.DataFrame)


def test_above_the_full_fit_budget_the_candidates_are_fitted_on_the_model_subset() -> None:
    """annotate.choice.full_fits_max_cells: BIC and the checks on the held-out subset's
    models, no full-data fit offered for reuse, and the record says what was fitted."""
    from curation.irt import choose_model, encode, simulate_responses
    from curation.irt._settings import ModelChoiceSettings

    df, _ = simulate_responses(n_models=60, n_items=80, n_trials=1, model="2pl", seed=4)
    cells = encode(df)
    budget = ModelChoiceSettings(max_cells=2000, full_fits_max_cells=3000)
    got = choose_model(cells, candidates=["1pl", "2pl"], choice=budget, seed=0)
    assert got.fits == {} and got.fits_on is not None
    assert got.fits_on["of_cells"] == cells.k.size
    assert got.fits_on["cells"] <= 2000 + 80 and got.fits_on["models"] < 60
    assert got.to_metrics()["fits_on"] == got.fits_on
    whole = choose_model(cells, candidates=["1pl", "2pl"], seed=0)
    assert whole.fits_on is None and "fits_on" not in whole.to_metrics()
    assert set(whole.fits) == {"1pl", "2pl"}
