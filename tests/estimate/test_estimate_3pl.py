"""Scores estimated on a 3PL bank (issue 29): the floor enters the prediction."""

from __future__ import annotations

import numpy as np
import polars as pl

from curation.estimate import EstimationSettings, ItemBank, estimate
from curation.irt import fit, simulate_leaderboard
from curation.subsets import model_scores


def _frame(cells) -> pl.DataFrame:  # type: ignore[no-untyped-def]
    return pl.DataFrame(
        {
            "model": [cells.models[j] for j in cells.mi],
            "item": [cells.items[i] for i in cells.ii],
            "n_trials": cells.n.astype(int),
            "n_correct": cells.k.astype(int),
        }
    )


def test_3pl_bank_estimates_held_out_scores_from_a_subset():
    cells, _ = simulate_leaderboard(n_models=230, n_items=150, truth="3pl", seed=4)
    resp = _frame(cells)
    models = list(cells.models)
    train, test = models[:200], models[200:]
    floor = dict.fromkeys(cells.items, 0.2)
    three = fit(resp.filter(pl.col("model").is_in(train)), model="3pl", floor=floor)
    bank = ItemBank.from_fit(three, benchmark="sim")
    assert bank.model == "3pl" and bank.c is not None and np.all(bank.c == 0.2)
    one = ItemBank.from_fit(fit(resp.filter(pl.col("model").is_in(train))), benchmark="sim")
    rng = np.random.default_rng(0)
    settings = EstimationSettings(draws=1000, random_draws=1)
    err3, err1, covered = [], [], 0
    for name in test:
        mine = resp.filter(pl.col("model") == name)
        truth = model_scores(mine)[name]
        seen = mine.filter(pl.col("item").is_in(rng.choice(cells.items, 50, replace=False)))
        e3 = estimate(bank, seen, settings=settings)
        e1 = estimate(one, seen, settings=settings)
        err3.append(abs(e3.estimate - truth))
        err1.append(abs(e1.estimate - truth))
        covered += e3.low <= truth <= e3.high
    # 50 of 150 items seen, one trial per cell: the 100 unseen items' own binomial noise
    # and the ability's error from 50 answers leave ~4 pp (4.2 here, 4.4 for a 1PL bank)
    assert np.mean(err3) < 0.05, np.mean(err3)
    assert np.mean(err3) <= np.mean(err1) + 0.005  # not worse than ignoring the floor
    assert covered >= 24  # of 30 held-out models, 90% intervals
