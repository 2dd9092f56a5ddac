"""What BenchFill learns of its rewriter (offset, scale) and how it corrects its requests.

Against known truth: steps drawn from a rewriter with a stated offset and scale are
fitted back; a request made from the fit lands on the target in expectation; the
simulated rewriter's bias moves every child by exactly that much; and a whole offline
search with a biased rewriter learns the bias and asks for easier children.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from curation.calibrate import CalibrateSettings, b_of_z
from curation.candidates import BENCHFILL, CALIBRATED, Candidate
from curation.fill import RewriteSimulationSettings
from curation.fill._correction import (
    RewriterFit,
    Step,
    fit_rewriter,
    step_of,
    steps_of,
    unclipped_z,
)
from curation.fill._settings import CorrectionSettings, FillSettings
from curation.fill._simulate import Brief, SimulatedRewriter
from curation.irt import Calibration
from tests.fill import sim_bench

SETTINGS = CorrectionSettings()


def _steps(
    offset: float, scale: float, n: int, *, seed: int = 0, noise: float = 0.25
) -> list[Step]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        asked = float(rng.uniform(-1.5, 1.5))
        se_c = float(rng.uniform(0.05, 0.3))
        error = noise * rng.standard_normal() + se_c * rng.standard_normal()
        taken = offset + scale * asked + error
        out.append(Step(asked=asked, taken=taken, se_child=se_c, se_parent=0.0))
    return out


@pytest.mark.parametrize(("offset", "scale"), [(0.5, 0.7), (-0.5, 0.7), (0.0, 1.0), (0.3, 0.35)])
def test_the_fit_recovers_a_known_offset_and_scale(offset, scale):
    fit = fit_rewriter(_steps(offset, scale, 200, seed=int(10 * scale)), SETTINGS)
    assert fit.n == 200
    assert abs(fit.offset - offset) < 3 * fit.offset_se + 0.02  # type: ignore[operator]
    assert abs(fit.scale - scale) < 3 * fit.scale_se + 0.02  # type: ignore[operator]
    assert 0.15 < fit.tau < 0.4  # type: ignore[operator]  # the rewrite's own noise, 0.25


def test_without_children_the_request_is_the_target_and_the_prior_pulls_few():
    assert fit_rewriter([], SETTINGS) == RewriterFit()
    assert RewriterFit().request(-1.0, 0.4, SETTINGS) == 0.4
    one = fit_rewriter(_steps(0.5, 0.7, 1), SETTINGS)
    many = fit_rewriter(_steps(0.5, 0.7, 100), SETTINGS)
    assert abs(one.offset) < abs(many.offset)  # one child moves the prior a little only
    assert many.offset_se < one.offset_se  # type: ignore[operator]


def test_a_request_lands_on_the_target_in_expectation_and_stays_within_its_bounds():
    fit = RewriterFit(offset=0.5, scale=0.7, n=10)
    parent, target = -1.0, 0.2
    asked = fit.request(parent, target, SETTINGS)
    assert parent + fit.offset + fit.scale * (asked - parent) == pytest.approx(target)
    lazy = RewriterFit(offset=0.0, scale=0.05, n=10)  # a rewriter that barely moves
    step = lazy.request(-0.5, target, SETTINGS) + 0.5
    assert step == pytest.approx((target + 0.5) / SETTINGS.scale_min)
    far = RewriterFit(offset=-5.0, scale=1.0, n=10)
    assert far.request(parent, target, SETTINGS) == pytest.approx(target + SETTINGS.max_shift)
    off = CorrectionSettings(enabled=False)
    assert fit.request(parent, target, off) == target


def _calibration(method: str = "panel") -> Calibration:
    scale = (
        {"method": "panel", "theta_min": -2.0, "theta_max": 2.0}
        if method == "panel"
        else {"method": "logistic", "c": 0.0, "s": 1.0}
    )
    return Calibration(
        model="1pl",
        abilities={"a": -2.0, "b": 0.0, "c": 2.0},
        scale=scale,
        panel=("a", "b", "c"),
    )


def test_a_request_past_the_end_of_a_linear_axis_is_stated_not_clipped():
    cal = _calibration("panel")
    assert unclipped_z(cal, -3.0) == pytest.approx(-0.25)
    assert unclipped_z(cal, 3.0) == pytest.approx(1.25)
    for z in (-0.25, 0.1, 0.9, 1.25):
        assert unclipped_z(cal, b_of_z(cal, z)) == pytest.approx(z)
    logistic = _calibration("logistic")
    assert 0 < unclipped_z(logistic, 30.0) <= 1


def _child(method: str = BENCHFILL, **lineage: object) -> Candidate:
    return Candidate(
        benchmark="b",
        candidate="c1",
        method=method,  # type: ignore[arg-type]
        parent="p",
        round=1,
        target_z=0.5,
        question="q",
        answer="1",
        answer_type="numeric",
        status=CALIBRATED,
        source="simulated",
        rewriter_model="simulated",
        prompt_hash=None,
        b=0.9,
        se=0.2,
        z=0.6,
        calibration="c.json",
        lineage=json.dumps(lineage),
    )


def test_a_step_is_read_back_from_the_child_s_lineage():
    request = {"z": 0.55, "b": 0.6, "parent_b": 0.1, "parent_se": 0.3}
    step = step_of(_child(request=request, bound=None))
    assert step == Step(asked=0.5, taken=0.8, se_child=0.2, se_parent=0.3)
    assert step_of(_child(request=request, bound="all-solved")) is None  # a bound, no estimate
    assert step_of(_child()) is None  # asked for the target: no request recorded
    assert step_of(_child("baseline", request=request)) is None
    assert steps_of([_child(request=request), _child()]) == [step]


def test_the_simulated_rewriter_s_bias_moves_every_child_by_exactly_that():
    def child_b(bias: float, steered: bool) -> float:
        sim = RewriteSimulationSettings(bias=bias)
        rw = SimulatedRewriter(seed=3, simulation=sim)
        brief = Brief("p", "q", "1", "numeric", None, parent_b=-1.0, target_b=0.5, steered=steered)
        return rw.child_b("key", brief)

    for steered in (True, False):
        assert child_b(0.5, steered) - child_b(0.0, steered) == pytest.approx(0.5)
        assert child_b(-0.5, steered) - child_b(0.0, steered) == pytest.approx(-0.5)


def test_a_search_with_a_biased_rewriter_learns_the_bias_and_asks_for_easier(tmp_path):
    result = sim_bench.run(
        tmp_path, insertions=2, simulation={"skill": "good", "bias": 0.5}, baseline=False
    )
    candidates = result.inserted[BENCHFILL] + [
        Candidate.from_row(r)
        for r in result.candidates.filter(pl.col("method") == BENCHFILL).iter_rows(named=True)
    ]
    requests = [c.lineage_dict().get("request") for c in candidates]
    fits = [r["fit"] for r in requests if r is not None and r["fit"]["n"] > 0]
    last = max(fits, key=lambda f: f["n"])
    assert last["n"] >= 8
    assert abs(last["offset"] - 0.5) < max(2.5 * last["offset_se"], 0.15)
    learnt = [
        r["z"] - c.target_z
        for r, c in zip(requests, candidates, strict=True)
        if r is not None and r["fit"]["n"] >= 8
    ]
    assert learnt and np.mean(learnt) < 0  # children come out harder: it asks for easier ones
    # what it learns changes the output, so the correction is part of the journal's key
    cal = CalibrateSettings()
    on, off = FillSettings(), FillSettings(correction=CorrectionSettings(enabled=False))
    assert on.fingerprint_dict(cal, backend="simulate") != off.fingerprint_dict(
        cal, backend="simulate"
    )


def test_without_correction_every_request_is_the_target(tmp_path):
    result = sim_bench.run(
        tmp_path,
        insertions=1,
        simulation={"skill": "good", "bias": 0.5},
        correction={"enabled": False},
        baseline=False,
        oracle=False,
    )
    rows = list(result.candidates.filter(pl.col("method") == BENCHFILL).iter_rows(named=True))
    assert rows
    for row in rows:
        c = Candidate.from_row(row)
        assert c.lineage_dict()["request"]["z"] == c.target_z
