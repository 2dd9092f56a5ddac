"""The simulated leaderboard (``curation.simulated_leaderboard``): a wide matrix shaped
like a leaderboard export, deterministic, with tasks that share their models, and a truth
that is not what the pipeline fits (a guessing floor, families of models)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from curation.simulated_leaderboard import simulate_leaderboard, write_wide_csv


def test_same_arguments_same_matrix_and_tasks_share_models():
    a, truth = simulate_leaderboard(n_models=40, n_items=12, seed=3)
    b, _ = simulate_leaderboard(n_models=40, n_items=12, seed=3)
    assert a.equals(b)
    assert a.columns[0] == "model" and a.width == 13 and a.height == 40
    assert a.get_column("model").to_list() == truth.models
    other, truth2 = simulate_leaderboard(n_models=40, n_items=7, seed=3, task=1, item_prefix="x")
    assert other.get_column("model").to_list() == truth.models  # the same models
    assert not set(other.columns[1:]) & set(a.columns[1:])
    # the tasks' abilities agree (general ability) without being the same
    r = np.corrcoef(truth.theta, truth2.theta)[0, 1]
    assert 0.5 < r < 0.999


def test_multiple_choice_floor_and_families():
    frame, truth = simulate_leaderboard(
        n_models=800, n_items=200, seed=0, n_choices=4, broken_share=0.05
    )
    y = frame.drop("model").to_numpy()
    assert set(np.unique(y)) == {0, 1}
    broken = truth.theta < -5
    assert broken.sum() > 10
    # a broken model answers at chance: 1 / n_choices, never below it on average
    assert abs(y[broken].mean() - 0.25) < 0.03
    assert y.mean(axis=1).min() > 0.1  # the guessing floor: no model near 0
    assert np.all(truth.guess == 0.25) and np.all(truth.top <= 0.99)
    names = truth.models
    assert names[0].split("/")[0] == names[7].split("/")[0] != names[8].split("/")[0]


def test_missing_cells_and_an_unnamed_model_column(tmp_path):
    frame, _ = simulate_leaderboard(n_models=30, n_items=20, seed=1, missing=0.2, model_column="")
    assert frame.columns[0] == ""
    share = frame.drop("").null_count().sum_horizontal().item() / (30 * 20)
    assert 0.1 < share < 0.3
    path = tmp_path / "lb.csv"
    write_wide_csv(frame, path)
    assert path.read_text().startswith(",q0000,")  # what pandas' df.to_csv() writes
    assert pl.read_csv(path).columns[0] == ""


def test_bad_shapes_are_refused():
    with pytest.raises(ValueError, match="n_models >= 2"):
        simulate_leaderboard(n_models=1, n_items=3, seed=0)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        simulate_leaderboard(n_models=5, n_items=3, seed=0, missing=1.0)
