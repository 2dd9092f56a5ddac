"""The intervals of a fill run: the panel's ability error, per item and for the Top-3 reduction.

Against known truth: the frame map against a root finder and its closed forms; the
ability error recovered from counts drawn with known shifts (and not invented from
model × item effects); the reduction's interval covering a known true reduction at
its nominal rate; a whole offline run writing what the schema says.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import brentq

from curation.calibrate import Z90, equal_score_b
from curation.candidates import BENCHFILL, CALIBRATED, INSERTED, Candidate
from curation.fill._targets import top_k_reduction
from curation.fill._uncertainty import (
    AbilityDraws,
    AbilityError,
    estimate_ability_error,
    panel_counts,
    reduction_interval,
    widen,
)
from curation.schemas import validate_records
from tests.fill import sim_bench

THETA = np.array(list(sim_bench.MODELS.values()))


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# ---- the frame map -------------------------------------------------------------------------


def test_equal_score_b_matches_a_root_finder_and_its_closed_forms():
    rng = np.random.default_rng(1)
    to = THETA + rng.normal(0, 0.5, THETA.size)
    b = np.array([-6.0, -2.0, 0.3, 2.2, 7.0])
    got = equal_score_b(b, THETA, to)
    for x, y in zip(b, got, strict=True):
        score = _expit(THETA - x).sum()
        root = brentq(lambda v, s=score: _expit(to - v).sum() - s, -60, 60, xtol=1e-12)
        assert y == pytest.approx(root, abs=1e-9)
    assert np.allclose(equal_score_b(b, THETA, THETA), b)
    assert np.allclose(equal_score_b(b, THETA, THETA + 0.7), b + 0.7)  # a common shift
    draws = np.stack([THETA, THETA + 0.7, to])
    both = equal_score_b(b, THETA, draws)
    assert both.shape == (3, b.size) and np.allclose(both[2], got)


# ---- the ability error ---------------------------------------------------------------------


def _counts(shift: np.ndarray, *, children: int, trials: int, interaction: float, seed: int):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(children):
        b = rng.uniform(-3.0, 3.0)
        logit = THETA + shift - b + interaction * rng.standard_normal(THETA.size)
        k = rng.binomial(trials, _expit(logit))
        out.append({m: (int(kk), trials) for m, kk in zip(sim_bench.MODELS, k, strict=True)})
    return out


def test_the_ability_error_is_recovered_from_children_drawn_with_known_shifts():
    rng = np.random.default_rng(7)
    shift = rng.normal(0, 0.5, THETA.size)
    shift -= shift.mean()
    true_sd = float(np.sqrt(np.sum(shift**2) / (THETA.size - 1)))
    err = estimate_ability_error(
        _counts(shift, children=300, trials=16, interaction=0.4, seed=1), sim_bench.calibration()
    )
    assert err.n_children > 250  # the children every model solved (or none did) say nothing
    assert err.sd == pytest.approx(true_sd, abs=0.12)
    est = np.array(list(err.shifts.values()))
    assert abs(est.mean()) < 1e-9  # centred: the abilities' mean anchors the scale
    assert np.corrcoef(est, shift)[0, 1] > 0.9


@pytest.mark.parametrize("interaction", [0.0, 1.0])
def test_no_ability_error_is_found_where_there_is_none(interaction):
    """Model × item effects move single cells, not a model: they count as noise."""
    err = estimate_ability_error(
        _counts(np.zeros(THETA.size), children=200, trials=16, interaction=interaction, seed=2),
        sim_bench.calibration(),
    )
    assert err.sd < 0.12


def test_too_few_children_give_no_estimate():
    cal = sim_bench.calibration()
    assert estimate_ability_error([], cal).sd == 0.0
    solved_by_all = {m: (8, 8) for m in sim_bench.MODELS}
    assert estimate_ability_error([solved_by_all] * 5, cal).n_children == 0


def test_draws_move_items_at_the_ends_of_the_panel_more_than_in_its_middle():
    cal = sim_bench.calibration()
    none = AbilityDraws(cal, AbilityError(0.0, {}, 0), draws=50, seed=0)
    assert not none.shift(np.array([-4.0, 0.0, 4.0])).any()
    draws = AbilityDraws(cal, AbilityError(0.4, {}, 100), draws=400, seed=0)
    assert np.allclose(draws.theta.mean(axis=1), THETA.mean())  # centred draws
    assert draws.frame_sd(3.5) > 2 * draws.frame_sd(0.0)
    assert draws.frame_sd(-3.5) > 2 * draws.frame_sd(0.0)
    exact = equal_score_b(np.array([1.234]), THETA, draws.theta)[:, 0] - 1.234
    assert np.allclose(draws.shift(np.array([1.234]))[:, 0], exact, atol=2e-3)  # the grid


# ---- per-item intervals --------------------------------------------------------------------


def _item(b: float, se: float, *, status: str = CALIBRATED, **lineage: object) -> Candidate:
    cal = sim_bench.calibration()
    z, lo, hi = (float(v) for v in cal.to_z(np.array([b, b - 1.645 * se, b + 1.645 * se])))
    return Candidate(
        benchmark=sim_bench.BENCH,
        candidate=f"c{b:+.2f}",
        method=BENCHFILL,
        parent="s1",
        round=1,
        target_z=z,
        question="q",
        answer="1",
        answer_type="numeric",
        status=status,  # type: ignore[arg-type]
        source="simulated",
        rewriter_model="simulated",
        prompt_hash=None,
        b=b,
        se=se,
        z=z,
        z_low=lo,
        z_high=hi,
        calibration="c.json",
        panel=json.dumps({"m00": [3, 8]}),
        lineage=json.dumps({"bound": None, **lineage}),
    )


def test_widening_adds_the_ability_error_and_keeps_what_the_trials_said():
    cal = sim_bench.calibration()
    draws = AbilityDraws(cal, AbilityError(0.4, {}, 100), draws=400, seed=0)
    for b in (0.0, 2.4):
        c = _item(b, 0.15)
        w = widen(c, draws)
        assert w.z_low <= c.z_low and w.z_high >= c.z_high  # type: ignore[operator]
        parts = w.lineage_dict()["interval"]
        assert parts["trials_only"] == [c.z_low, c.z_high]
        half = Z90 * np.hypot(0.15, parts["ability_sd_b"])
        assert w.z_high == pytest.approx(float(cal.to_z(np.array([b + half]))[0]))
    middle, end = widen(_item(0.0, 0.15), draws), widen(_item(2.2, 0.15), draws)
    assert (end.z_high - end.z_low) > (middle.z_high - middle.z_low)  # type: ignore[operator]
    assert (
        end.lineage_dict()["interval"]["ability_sd_b"]
        > 1.5 * middle.lineage_dict()["interval"]["ability_sd_b"]
    )
    bounded = widen(_item(2.4, 0.15, bound="none-solved"), draws)
    assert bounded.z_high == 1.0


def test_panel_counts_pool_the_selection_with_the_confirmation():
    c = _item(0.0, 0.2, selection={"panel": json.dumps({"m00": [5, 8], "m01": [1, 8]})})
    assert panel_counts(c) == {"m00": (8, 16), "m01": (1, 8)}


# ---- the Top-3 reduction's interval --------------------------------------------------------


def test_the_reduction_interval_covers_a_known_true_reduction_at_its_nominal_rate():
    """Correctly specified (the method is told the true ability SD): the construction
    itself must give ~90%: each replication draws a true panel frame and the inserted
    items' measurements around their true calibration-frame b."""
    cal = sim_bench.calibration()
    sd = 0.4
    draws = AbilityDraws(cal, AbilityError(sd, {}, 100), draws=400, seed=11)
    _, difficulty = sim_bench.tables()
    b_before = difficulty["b"].to_numpy()
    true_b = np.array([2.0, 2.5, 2.25])  # the top gap's midpoints-ish, calibration frame
    se = np.array([0.08, 0.1, 0.09])
    rng = np.random.default_rng(5)
    hits, reps = 0, 200
    for rep in range(reps):
        eps = rng.normal(0, sd, THETA.size)
        truth = THETA + eps - eps.mean()
        moved_before = equal_score_b(b_before, THETA, truth)
        moved_new = equal_score_b(true_b, THETA, truth)
        true_red = top_k_reduction(
            cal.to_z(moved_before), np.concatenate([cal.to_z(moved_before), cal.to_z(moved_new)])
        )
        measured = true_b + se * rng.standard_normal(3)
        items = [
            _item(float(m), float(s), status=INSERTED, pooled={"b": float(m), "se": float(s)})
            for m, s in zip(measured, se, strict=True)
        ]
        got = reduction_interval(items, b_before, draws, seed=rep)
        assert got is not None and got["low"] <= got["estimate"] <= got["high"]
        hits += got["low"] <= true_red <= got["high"]
    assert 0.84 <= hits / reps <= 0.96


def test_without_uncertainty_the_interval_is_the_plug_in_reduction():
    cal = sim_bench.calibration()
    draws = AbilityDraws(cal, AbilityError(0.0, {}, 0), draws=50, seed=0)
    _, difficulty = sim_bench.tables()
    b_before = difficulty["b"].to_numpy()
    items = [_item(2.25, 0.0, status=INSERTED, pooled={"b": 2.25, "se": 0.0})]
    plug_in = top_k_reduction(
        cal.to_z(b_before), np.concatenate([cal.to_z(b_before), cal.to_z(np.array([2.25]))])
    )
    got = reduction_interval(items, b_before, draws, seed=0)
    assert got is not None
    assert got["low"] == got["estimate"] == got["high"] == pytest.approx(plug_in, abs=1e-4)
    assert reduction_interval([], b_before, draws, seed=0) is None


# ---- a whole run ---------------------------------------------------------------------------


def test_an_offline_run_reports_the_ability_error_and_both_intervals(tmp_path):
    result = sim_bench.run(tmp_path, insertions=2, world={"theta_sd": 0.5})
    m = result.metrics
    validate_records([json.loads(json.dumps(m))], "fill_metrics", file="metrics")
    assert m["ability_error"]["sd"] > 0.2 and m["ability_error"]["n_children"] > 10
    for method in ("benchfill", "baseline", "oracle"):
        red = m["methods"][method]["top_3_reduction"]
        assert red["low"] <= red["estimate"] <= red["high"]
    rows = m["methods"]["benchfill"]["inserted"]
    for row, c in zip(rows, result.inserted["benchfill"], strict=True):
        lo, hi = c.lineage_dict()["interval"]["trials_only"]
        assert row["z_low"] <= lo and row["z_high"] >= hi
    off = sim_bench.run(
        tmp_path / "off", insertions=2, world={"theta_sd": 0.5}, intervals={"ability_error": False}
    )
    assert off.metrics["ability_error"]["sd"] == 0.0
    assert all("interval" not in c.lineage_dict() for c in off.inserted["benchfill"])
