"""measure_benchmark and the one-page report (Markdown and self-contained HTML)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from curation.measure import (
    Beta,
    measure_benchmark,
    power_curve,
    render_gaps_html,
    render_gaps_report,
)

rng = np.random.default_rng(1)
CROWDED = np.linspace(0.0, 0.5, 21)  # DDM 0.25, Max Gap 0.5 ([0.5, 1]), Top-5 0.6: all flags
SPREAD = (np.arange(200) + 0.5) / 200  # evenly spread: no flag
SCORES = {"alpha": 0.81, "beta": 0.80, "gamma": 0.60, "delta": 0.20}


@pytest.fixture(scope="module")
def measures():
    draws = np.clip(CROWDED + rng.normal(0, 0.01, (100, CROWDED.size)), 0, 1)
    crowded = measure_benchmark(
        CROWDED,
        name="Crowded<b>",
        targets=["uniform", Beta(2, 5)],
        model_scores=SCORES,
        lipschitz=1.0,
        z_draws=draws,
    )
    spread = measure_benchmark(SPREAD, name="Spread")
    return crowded, spread


def test_measure_benchmark_values(measures) -> None:
    crowded, spread = measures
    assert crowded.n == 21
    assert crowded.primary_ddm == pytest.approx(0.25, abs=0.01)
    assert crowded.ddm_for("beta_2_5") == crowded.ddms[1].value
    assert crowded.max_gap.z_left == 0.5 and crowded.max_gap.z_right == 1.0
    assert crowded.flags.ddm and crowded.flags.max_gap and crowded.flags.top_5_sum
    assert not spread.flags.any
    assert [(b.left, b.right) for b in crowded.blind] == [(0.5, 1.0)]
    assert spread.blind == ()
    assert [(c.model_a, c.model_b) for c in crowded.certificates] == [
        ("alpha", "beta"),
        ("beta", "gamma"),
        ("gamma", "delta"),
    ]
    assert [c.certified for c in crowded.certificates] == [False, False, True]
    assert crowded.posterior is not None and crowded.posterior.n_draws == 100


def test_thresholds_are_keywords() -> None:
    m = measure_benchmark(SPREAD, ddm_threshold=0.0, max_gap_threshold=0.9, top5_threshold=0.9)
    assert m.flags.ddm and not m.flags.max_gap and not m.flags.top_5_sum


def test_metrics_are_json_ready(measures) -> None:
    crowded, spread = measures
    metrics = crowded.to_metrics()
    json.dumps(metrics, allow_nan=False)
    assert metrics["flags"] == {"ddm": True, "max_gap": True, "top_5_sum": True, "any": True}
    assert set(metrics["ddm"]) == {"uniform", "beta_2_5"}
    assert metrics["top_pairs_certified"] == 1 and metrics["intervals"]["n_draws"] == 100
    assert "intervals" not in spread.to_metrics()


def test_markdown_report(measures) -> None:
    power = power_curve(CROWDED, width=[0.2, 0.7], repeats=(1, 4), n_sims=20, seed=0)
    md = render_gaps_report(
        list(measures), figures={"Crowded<b>": ["plots/crowded_ecdf.png"]}, power=power
    )
    assert "**1 of 2 benchmark(s) flagged**" in md
    assert "## Flagged benchmarks" in md
    assert "DDM (uniform) 0.250 ≥ 0.10" in md
    assert "Max Gap 0.500 ≥ 0.10" in md and "Top-5 Sum 0.600 ≥ 0.30" in md
    assert "| DDM, Max Gap, Top-5 |" in md
    assert "[0.500, 1.000]" in md
    assert "none — every placement of this width touches an item" in md
    assert "alpha > beta" in md and "**no**" in md
    assert "DDM (Beta(2, 5))" in md
    assert "## Detectability (Theorem 2.3)" in md
    assert "![Crowded<b>: plots/crowded_ecdf.png](plots/crowded_ecdf.png)" in md


def test_html_report_is_self_contained(measures) -> None:
    page = render_gaps_html(list(measures), figures={"Spread": ["plots/spread strip.png"]})
    assert page.startswith("<!DOCTYPE html>")
    assert "<table>" in page and "<strong>" in page
    assert "Crowded&lt;b&gt;" in page and "Crowded<b>" not in page
    assert '<img src="plots/spread strip.png"' in page
    assert "http" not in page and "<script" not in page


def test_report_needs_a_benchmark() -> None:
    with pytest.raises(ValueError, match="at least one"):
        render_gaps_report([])


def test_draws_must_match_items() -> None:
    with pytest.raises(ValueError, match="z_draws"):
        measure_benchmark(SPREAD, z_draws=np.full((3, 5), 0.5))


def test_report_states_resolution_clipping_and_interval_method() -> None:
    """Clipped share, unresolved gaps and the fix are stated; every bracket holds its point."""
    import re

    from curation.measure import Panel, Resolution, summarize_bootstrap

    z = np.concatenate([np.zeros(60), np.round(np.arange(0.1, 1.0, 0.12), 6)])
    panel = Panel(-2.5, 1.5, weakest="tiny-model", strongest="big-model", n_models=9)
    res = Resolution.from_steps(
        z, np.clip(z - 0.12, 0, 1), np.clip(z + 0.12, 0, 1), panel=panel, trials_per_cell=1
    )
    noise = np.random.default_rng(0).normal(0, 0.01, (40, z.size))
    z_true = np.clip(z + noise, 0, 1)
    intervals = summarize_bootstrap(z, z_true, np.clip(z_true + noise[::-1], 0, 1))
    m = measure_benchmark(z, name="clippy", resolution=res, intervals=intervals)
    md = render_gaps_report([m])
    assert "## Resolution and anchoring" in md and "## Estimates with intervals" in md
    assert "88% of items (60 of 68) sit below the panel's weakest model (tiny-model" in md
    assert "none of the 5 largest gaps is wider than one score step" in md
    assert "cannot resolve gaps at the 0.10 flag threshold" in md
    assert "more trials per item" in md and "parametric bootstrap" in md
    for point, low, high in re.findall(r"(\d\.\d{3}) \[(\d\.\d{3}), (\d\.\d{3})\]", md):
        assert float(low) <= float(point) <= float(high)
    metrics = m.to_metrics()
    assert metrics["resolution"]["n_clipped_low"] == 60
    assert metrics["intervals"]["method"] == "bootstrap"
    assert not m.flags.max_gap  # every gap is one score step
