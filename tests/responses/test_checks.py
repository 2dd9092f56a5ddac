"""Matrix checks against brute force and hand-computed cases."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from curation.responses import ResponseMatrix, WarnSettings, check_matrix


def _table(rates: np.ndarray, trials: int = 1) -> pl.DataFrame:
    rows = []
    for j, i in itertools.product(range(rates.shape[0]), range(rates.shape[1])):
        if not np.isnan(rates[j, i]):
            rows.append((f"m{j:02d}", f"i{i:03d}", trials, int(round(rates[j, i] * trials))))
    return pl.DataFrame(rows, schema=["model", "item", "n_trials", "n_correct"], orient="row")


def _brute(rates: np.ndarray):
    acc = np.nanmean(rates, axis=1)
    succ = np.nanmean(rates, axis=0)
    rev = cmp = 0
    for a, b in itertools.permutations(range(rates.shape[0]), 2):
        if acc[a] < acc[b]:
            both = ~np.isnan(rates[a]) & ~np.isnan(rates[b])
            rev += np.sum(rates[a][both] > rates[b][both])
            cmp += both.sum()
    model_rate = rev / cmp
    rev = cmp = 0
    for e, h in itertools.permutations(range(rates.shape[1]), 2):
        if succ[e] > succ[h]:
            both = ~np.isnan(rates[:, e]) & ~np.isnan(rates[:, h])
            rev += np.sum(rates[both, h] > rates[both, e])
            cmp += both.sum()
    return model_rate, rev / cmp


@pytest.mark.parametrize(
    "seed,trials,missing", [(0, 1, 0.0), (1, 1, 0.2), (2, 4, 0.1), (3, 3, 0.3)]
)
def test_reversal_rates_equal_brute_force(seed: int, trials: int, missing: float):
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=9)
    b = rng.normal(size=40)
    p = 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    rates = rng.binomial(trials, p) / trials
    rates[rng.random(rates.shape) < missing] = np.nan
    report = check_matrix(_table(rates, trials), benchmark="t")
    model_rate, item_rate = _brute(ResponseMatrix.from_responses(_table(rates, trials)).rates)
    assert report.model_reversal_rate == pytest.approx(model_rate, abs=1e-12)
    assert report.item_reversal_rate == pytest.approx(item_rate, abs=1e-12)


def test_perfect_guttman_matrix_has_no_reversals():
    # model j solves items 0..j-1: a perfect staircase
    rates = np.array([[1.0 if i < j else 0.0 for i in range(6)] for j in range(1, 6)])
    report = check_matrix(_table(rates), benchmark="g")
    assert report.model_reversal_rate == 0 and report.item_reversal_rate == 0
    assert report.all_solved == ["i000"] and report.none_solved == ["i005"]
    assert report.item_informativeness == pytest.approx(4 / 6)
    assert not report.offending_models and not report.offending_items


def test_informativeness_and_offenders_are_named():
    rates = np.array(
        [
            [1, 1, 1, 0, 0, 0],  # strong
            [1, 1, 0, 0, 0, 0],
            [0, 0, 0, 1, 1, 1],  # an odd model: solves exactly the hard ones
            [0, 0, 0, 0, 0, 0],  # at 0%: uninformative
        ],
        dtype=float,
    )
    report = check_matrix(_table(rates), benchmark="odd")  # check.warn's defaults
    assert report.model_informativeness == pytest.approx(0.75)
    assert any("m03" in w for w in report.warnings)
    lenient = WarnSettings(model_informativeness_below=0.75, per_model_reversal_factor=1e6)
    quiet = check_matrix(_table(rates), benchmark="odd", warn=lenient)
    assert not any("carry no information" in w for w in quiet.warnings)
    assert quiet.offending_models == []
    assert report.offending_models[0] == "m02"
    metrics = report.metrics()
    assert metrics["n_models"] == 4 and metrics["n_items"] == 6


def _brute_per_model(rates: np.ndarray) -> np.ndarray:
    """Each model's reversal share over every pair it is in (weaker wins), by definition."""
    acc = np.nanmean(rates, axis=1)
    rev = np.zeros(rates.shape[0])
    cmp = np.zeros(rates.shape[0])
    for a, b in itertools.permutations(range(rates.shape[0]), 2):
        if acc[a] < acc[b]:
            both = ~np.isnan(rates[a]) & ~np.isnan(rates[b])
            wins = np.sum(rates[a][both] > rates[b][both])
            for j in (a, b):
                rev[j] += wins
                cmp[j] += both.sum()
    return np.where(cmp > 0, rev / np.maximum(cmp, 1), 0.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_per_model_reversals_equal_the_pairwise_definition(seed):
    rng = np.random.default_rng(seed)
    rates = rng.integers(0, 5, size=(12, 30)) / 4  # ties in accuracy and in cells
    rates[rng.random(rates.shape) < 0.15] = np.nan
    rates[3] = rates[4]  # two models of equal accuracy: never compared
    report = check_matrix(_table(rates, trials=4), benchmark="b")
    want = _brute_per_model(rates)
    got = np.array([report.per_model_reversal[f"m{j:02d}"] for j in range(12)])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # the route taken above PAIRWISE_MAX_MODELS counts exactly the same
    from curation.responses._checks import _item_reversals, _model_reversals_pairwise

    acc = np.nanmean(rates, axis=1)
    total, per_model = _model_reversals_pairwise(rates, acc)
    swapped_total, swapped = _item_reversals(rates.T, acc)
    assert swapped_total == total
    np.testing.assert_array_equal(swapped, per_model)


def test_overview_figure_of_a_leaderboard_stays_small(tmp_path):
    """Thousands of models get a curve, not one labelled bar each (a 500-inch figure)."""
    import struct

    from curation.plots.check import plot_check_overview
    from curation.report.panel import LISTED_MODELS

    rng = np.random.default_rng(0)
    n = LISTED_MODELS * 4
    rates = (rng.random((n, 20)) < np.linspace(0.1, 0.9, n)[:, None]).astype(float)
    report = check_matrix(_table(rates), benchmark="lb")
    out = tmp_path / "check.png"
    plot_check_overview(report, out)
    width, height = struct.unpack(">II", out.read_bytes()[16:24])  # the PNG IHDR
    assert height < width  # 3.4 inches tall, not 0.13 inch per model


def test_the_missing_cells_warning_counts_them_out_of_every_cell():
    rng = np.random.default_rng(5)
    rates = rng.binomial(1, 0.5, size=(6, 30)).astype(float)
    rates[2, :7] = np.nan  # 7 missing cells of model m02, out of 6 x 30
    report = check_matrix(_table(rates), benchmark="t")
    said = [w for w in report.warnings if "cells are missing" in w]
    assert said and said[0].startswith("7 of 180 cells are missing"), report.warnings
    assert "m02 (7)" in said[0]
