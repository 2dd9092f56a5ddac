"""MIRT at leaderboard size (issue 30 item 3): the rank-flip search vectorised (the same
pair as the scan over every pair, in blocks), the report and the model figure summarising
a panel of more than ``LISTED_MODELS`` models (extremes listed, every model in a
searchable HTML page, a bounded number of labels), and the choice of d on a sample of
the models above the cell budget, with the chosen d refitted on every model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import curation.irt.mirt._flips as flips
from curation.irt.mirt import build_report, render_mirt_markdown, select_dimension, simulate_mirt
from curation.irt.mirt._markdown import render_models_html
from curation.plots.mirt import _labelled, plot_mirt_models
from curation.report.panel import LISTED_MODELS, SHOWN_EXTREMES
from curation.schemas import validate_record


def _scan(exp: np.ndarray, obs: np.ndarray, bx: int, by: int):
    """The pair search as it was written: every ordered pair, first strongest wins."""
    best, best_key = None, 0.0
    for ja, jb in itertools.permutations(range(exp.shape[0]), 2):
        if np.isnan(obs[[ja, jb]][:, [bx, by]]).any():
            continue
        lead_x = exp[ja, bx] - exp[jb, bx]
        lead_y = exp[jb, by] - exp[ja, by]
        if lead_x <= 0 or lead_y <= 0:
            continue
        if not (obs[ja, bx] > obs[jb, bx] and obs[jb, by] > obs[ja, by]):
            continue
        if min(lead_x, lead_y) > best_key:
            best, best_key = (ja, jb), min(lead_x, lead_y)
    return best, best_key


@pytest.mark.parametrize("block", [3, 512])
def test_the_vectorised_pair_search_finds_the_scans_pair(monkeypatch, block):
    monkeypatch.setattr(flips, "FLIP_BLOCK", block)
    rng = np.random.default_rng(block)
    for trial in range(25):
        m = int(rng.integers(2, 40))
        exp = np.round(rng.random((m, 3)), 1 if trial % 2 else 6)  # ties, and none
        obs = np.round(rng.random((m, 3)), 1)
        obs[rng.random((m, 3)) < 0.1] = np.nan  # models that did not answer a benchmark
        for bx, by in itertools.combinations(range(3), 2):
            assert flips._clearest_pair(exp, obs, bx, by) == _scan(exp, obs, bx, by)


@pytest.fixture(scope="module")
def leaderboard():
    """More models than a report lists, two benchmarks on two dimensions."""
    sim = simulate_mirt(LISTED_MODELS + 30, 60, 2, seed=4, benchmarks=("x", "y"))
    return sim, select_dimension(sim.data, d_max=2, holdout=0.1, seed=0)


def test_report_lists_the_extremes_and_the_page_every_model(leaderboard):
    sim, sel = leaderboard
    report = build_report(sim.data, sel)
    n = sim.data.n_models
    md = render_mirt_markdown(report)
    section = md.split("## Model ability vectors")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]  # no header
    assert len(rows) == 2 * SHOWN_EXTREMES + 1  # strongest, "… more", weakest
    assert f"… {n - 2 * SHOWN_EXTREMES} more" in section
    assert "reports/mirt-models.html" in section
    strongest = sim.data.models[int(np.argmax(report.analysis.theta[:, 0]))]
    assert rows[0].startswith(f"| {strongest} ")
    page = render_models_html(report)
    assert page.count("<tr>") == n + 1 and 'class="table-search"' in page
    assert all(f"<td>{m}</td>" in page for m in sim.data.models)
    assert "<script>" in page and "http" not in page.split("<body>")[1]  # offline


def test_model_figure_names_only_the_extremes(leaderboard, tmp_path):
    import struct

    sim, sel = leaderboard
    report = build_report(sim.data, sel)
    theta = report.analysis.theta
    named = _labelled(theta, len(theta))
    assert len(named) <= 2 * SHOWN_EXTREMES
    for dim in (0, 1):
        assert {int(np.argmax(theta[:, dim])), int(np.argmin(theta[:, dim]))} <= set(named)
    assert _labelled(theta[:50], 50) == list(range(50))  # a small panel: every model
    plot_mirt_models(report, tmp_path / "models.png", formats=("png",))
    width, height = struct.unpack(">II", (tmp_path / "models.png").read_bytes()[16:24])
    assert width < 4000 and height < 4000  # a square figure, not one grown per label


def test_d_is_chosen_on_a_sample_above_the_budget_and_fitted_on_everyone():
    sim = simulate_mirt(200, 80, 2, seed=11, benchmarks=("x", "y"))
    whole = select_dimension(sim.data, d_max=3, holdout=0.1, seed=0)
    sel = select_dimension(sim.data, d_max=3, holdout=0.1, seed=0, max_cells=6000)
    assert sel.n_models_selection == 75 and sel.max_cells == 6000  # 6,000 / 80 cells a model
    assert sel.chosen == whole.chosen == 2  # a clear second dimension survives sampling
    assert sel.fits[2].models == sim.data.models  # the analysed d: every model
    assert len(sel.fits[3].models) == 75  # the others: the sample's fits
    report = build_report(sim.data, sel)
    metrics = report.metrics()
    assert metrics["selection_sample"] == {"models": 75, "max_cells": 6000}
    assert validate_record(metrics, "mirt_metrics") is None
    assert set(metrics["abilities"]) == set(sim.data.models)
    assert "**Chosen on a sample:**" in render_mirt_markdown(report)
    under = select_dimension(sim.data, d_max=2, holdout=0.1, seed=0, max_cells=10**6)
    assert under.n_models_selection is None and "selection_sample" not in (
        build_report(sim.data, under).metrics()
    )


def test_one_dimension_of_a_leaderboard_is_a_histogram(leaderboard, tmp_path):
    import struct

    sim, _ = leaderboard
    report = build_report(sim.data, select_dimension(sim.data, d_max=1, holdout=0.1, seed=0))
    assert report.analysis.d == 1
    plot_mirt_models(report, tmp_path / "models.png", formats=("png",))
    width, height = struct.unpack(">II", (tmp_path / "models.png").read_bytes()[16:24])
    assert height < width  # 3.6 inches tall, not a row per model
