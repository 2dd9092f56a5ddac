"""Panel dependence: mean–sigma linking of two panels on common items, against known truth."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.special import expit

from curation.irt import fit
from curation.measure import link_panels
from curation.measure._linking import MIN_COMMON


def _responses(theta: np.ndarray, b: np.ndarray, trials: int, seed: int) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    k = rng.binomial(trials, expit(theta[:, None] - b[None, :]))
    mi, ii = np.meshgrid(np.arange(theta.size), np.arange(b.size), indexing="ij")
    return pl.DataFrame(
        {
            "model": [f"m{j}" for j in mi.ravel()],
            "item": [f"i{i:03d}" for i in ii.ravel()],
            "n_trials": np.full(k.size, trials),
            "n_correct": k.ravel(),
        }
    )


@pytest.fixture(scope="module")
def two_panels():
    """One bank of 150 items, measured by a strong and by a weak panel (8 trials per cell)."""
    rng = np.random.default_rng(11)
    b = rng.normal(0.0, 1.5, 150)
    theta_a = np.linspace(-2.0, 2.5, 10)
    theta_b = np.linspace(-3.5, 0.5, 10)  # weaker models: the easy items are resolved here
    fit_a = fit(_responses(theta_a, b, 8, 1))
    fit_b = fit(_responses(theta_b, b, 8, 2))
    return b, theta_a, theta_b, fit_a, fit_b


def _link(fit_a, fit_b):
    ba = dict(zip(fit_a.items["item"], fit_a.items["b"], strict=True))
    bb = dict(zip(fit_b.items["item"], fit_b.items["b"], strict=True))
    bounded = {
        i
        for f in (fit_a, fit_b)
        for i, bound in zip(f.items["item"], f.items["bound"], strict=True)
        if bound is not None
    }
    return link_panels(
        ba,
        bb,
        to_z_a=fit_a.calibration.to_z,
        to_z_b=fit_b.calibration.to_z,
        theta_a=fit_a.calibration.theta,
        theta_b=fit_b.calibration.theta,
        names=("strong", "weak"),
        bounded=bounded,
    )


def test_linking_recovers_the_known_shift_and_removes_the_drift(two_panels) -> None:
    """Each 1PL fit centres its own abilities, so b on A's scale = b on B's scale +
    (mean θ_B − mean θ_A) = −1.5 exactly in truth, with slope 1."""
    _, theta_a, theta_b, fit_a, fit_b = two_panels
    link = _link(fit_a, fit_b)
    assert link is not None and link.n_common >= 100
    assert link.slope == pytest.approx(1.0, abs=0.08)
    assert link.intercept == pytest.approx(theta_b.mean() - theta_a.mean(), abs=0.15)
    # z moves a lot between panels (different anchors), little once linked.
    assert link.raw_drift_mean_abs > 0.15
    assert link.residual_drift_mean_abs < 0.3 * link.raw_drift_mean_abs
    # The weak panel's range, put on the strong panel's scale, sits at its lower end.
    lo, hi = link.b_theta_on_a
    assert lo == pytest.approx(theta_b.min() - theta_a.mean(), abs=0.4)
    assert hi == pytest.approx(theta_b.max() - theta_a.mean(), abs=0.4) and hi < link.a_theta[1]
    assert link.ddm_a != pytest.approx(link.ddm_b, abs=0.02)
    assert "shared with **weak**" in link.label() and link.to_metrics()["other"] == "weak"


def test_too_few_common_items_give_no_linking(two_panels) -> None:
    _, _, _, fit_a, fit_b = two_panels
    ba = dict(zip(fit_a.items["item"][: MIN_COMMON - 1], fit_a.items["b"], strict=False))
    bb = dict(zip(fit_b.items["item"], fit_b.items["b"], strict=True))
    out = link_panels(
        ba,
        bb,
        to_z_a=fit_a.calibration.to_z,
        to_z_b=fit_b.calibration.to_z,
        theta_a=fit_a.calibration.theta,
        theta_b=fit_b.calibration.theta,
    )
    assert out is None


def test_report_and_metrics_carry_the_linking(two_panels) -> None:
    from dataclasses import replace

    from curation.measure import measure_benchmark, render_gaps_report
    from curation.schemas import validate_records

    _, _, _, fit_a, fit_b = two_panels
    link = _link(fit_a, fit_b)
    m = replace(measure_benchmark(fit_a.items["z"].to_numpy(), name="strong"), linkings=(link,))
    md = render_gaps_report([m])
    assert "## Panel dependence" in md and "items shared with **weak**" in md
    metrics = m.to_metrics()
    validate_records([metrics], "gaps_metrics", file="metrics/gaps.json")
    assert metrics["linking"][0]["n_common"] == link.n_common
