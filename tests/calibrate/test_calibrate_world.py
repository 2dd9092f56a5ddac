"""The simulated world is not the calibration; acceptance and confirmation are honest.

Small sizes, direct draws (the same seeded draws as the backend, without the call
machinery), each test well under a few seconds.
"""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from curation.calibrate import (
    ON_TARGET,
    AdaptiveSettings,
    Child,
    Panel,
    SimulatedWorld,
    WorldBackend,
    WorldSettings,
    annotate,
    b_of_z,
    decide,
    on_target_consistent,
)
from curation.calibrate._simulate import register_child
from curation.irt import Calibration
from curation.llm import (
    CollectSettings,
    CompletionCache,
    LLMSettings,
    PanelModel,
    SimulatedBackend,
)

THETA = {f"m{j:02d}": -3.0 + 6.0 * j / 29 for j in range(30)}
CAL = Calibration(
    model="1pl",
    abilities=THETA,
    scale={"method": "panel", "theta_min": -3.0, "theta_max": 3.0},
    panel=tuple(THETA),
    settings={"b_sd": 3.0},
)


def _world(**kw: float) -> SimulatedWorld:
    return SimulatedWorld(CAL, {"orig": 0.3}, settings=WorldSettings(**kw), seed=7)


def _panel(tmp_path, backend) -> Panel:
    def register(child: Child) -> None:
        register_child(
            backend,
            child.item,
            answer=child.answer,
            answer_type=child.answer_type,
            choices=None,
            latent_b=float(child.question.split("b=")[1]),
        )

    return Panel(
        models=tuple(PanelModel(name=m, model_id=m) for m in THETA),
        backend=backend,
        cache=CompletionCache(tmp_path / "cache.sqlite"),
        collect=CollectSettings(),
        llm=LLMSettings(),
        calibration=CAL,
        benchmark="toy",
        register=register,
        direct=True,
    )


def _child(item: str, b: float) -> Child:
    return Child(item, f"[{item}] b={b:.6f}", "7", "numeric")


def _measure(panel: Panel, children, *, trials: int, first_sample: int = 0):
    rule = AdaptiveSettings(enabled=False, first_batch=trials, batch=trials, max_trials=trials)
    return asyncio.run(
        annotate(
            children,
            panel,
            target_z=0.5,
            tolerance=0.01,
            rule=rule,
            stop_on_target=False,
            first_sample=first_sample,
        )
    )


def test_the_panel_does_not_answer_with_the_calibrations_own_1pl():
    world = _world(theta_sd=0.3, a_sd=0.3, b_sd=0.2, interaction_sd=0.4)
    backend = WorldBackend(benchmark="toy", world=world, seed=1)
    register_child(backend, "c", answer="7", answer_type="numeric", choices=None, latent_b=0.8)
    circular = [1 / (1 + math.exp(-(THETA[m] - 0.8))) for m in THETA]
    p = [backend.p_correct(m, "c") for m in THETA]
    assert max(abs(x - y) for x, y in zip(p, circular, strict=True)) > 0.05
    # its abilities are drawn around the fit (centred), not the fit itself
    shift = np.array([world.theta[m] - THETA[m] for m in THETA])
    assert np.abs(shift).max() > 0.1 and abs(shift.mean()) < 1e-9
    assert world.true_b("orig", 0.3) != 0.3
    # the namespace says which world answered: no cached answer crosses worlds
    other = WorldBackend(benchmark="toy", world=_world(theta_sd=0.1), seed=1)
    assert backend.namespace != other.namespace
    # a world with every spread 0 is the circular simulation, answer for answer
    flat = WorldBackend(benchmark="toy", world=_world(theta_sd=0, a_sd=0, b_sd=0), seed=1)
    plain = SimulatedBackend(benchmark="toy", truths={}, abilities=THETA, seed=1)
    for b in (flat, plain):
        register_child(b, "c", answer="7", answer_type="numeric", choices=None, latent_b=0.8)
    wz = _world(theta_sd=0, a_sd=0, b_sd=0, interaction_sd=0)
    flat = WorldBackend(benchmark="toy", world=wz, seed=1)
    register_child(flat, "c", answer="7", answer_type="numeric", choices=None, latent_b=0.8)
    assert [flat.is_correct(m, "c", s) for m in THETA for s in range(4)] == [
        plain.is_correct(m, "c", s) for m in THETA for s in range(4)
    ]


def test_online_estimates_recover_the_worlds_true_z_not_the_stated_latent(tmp_path):
    # no ability noise: what remains between estimate and truth is sampling alone, so
    # the 1PL estimate must recover the 1PL-equivalent true z of a 2PL item with model
    # x item effects — and, for steep items at the edge, not its 2PL location
    world = _world(theta_sd=0.0, a_sd=0.4, interaction_sd=0.4)
    backend = WorldBackend(benchmark="toy", world=world, seed=3)
    panel = _panel(tmp_path, backend)
    children = [_child(f"k{i}", b) for i, b in enumerate(np.linspace(-1.8, 1.8, 12))]
    notes = _measure(panel, children, trials=64)
    zs, truth, latent, se = [], [], [], []
    for c in children:
        a = notes[c.item]
        b = float(c.question.split("b=")[1])
        zs.append(a.z)
        se.append(a.se_z)
        truth.append(world.true_z(c.item, b))
        latent.append(float(CAL.to_z(np.array([b]))[0]))
    err = (np.array(zs) - np.array(truth)) / np.array(se)
    assert np.abs(err).max() < 3.5 and abs(err.mean()) < 1.2
    # the stated location is not what a 1PL panel measures: it is off by far more
    off = np.abs(np.array(zs) - np.array(latent))
    assert off.max() > 4 * np.median(se)


def test_on_target_only_when_the_interval_agrees():
    tol = 0.02
    assert on_target_consistent(z=0.505, se_z=0.005, target_z=0.5, tolerance=tol)
    assert on_target_consistent(z=0.51, se_z=0.01, target_z=0.5, tolerance=tol)  # SE <= tol/2
    # estimate inside the tolerance, interval three times wider: not on target
    assert not on_target_consistent(z=0.501, se_z=0.03, target_z=0.5, tolerance=tol)
    assert not on_target_consistent(z=0.525, se_z=0.001, target_z=0.5, tolerance=tol)
    rule = AdaptiveSettings(first_batch=2, batch=2, max_trials=32, se_accept=0.03, reject_k=2.0)
    kw = dict(lo=0.44, hi=0.56, bound=None, target_z=0.5, tolerance=tol, rule=rule)
    # inside the tolerance with a wide SE: keep collecting; at the budget: "budget"
    assert decide(z=0.501, se_z=0.025, trials_per_model=10, **kw) is None
    assert decide(z=0.501, se_z=0.025, trials_per_model=32, **kw) == "budget"
    assert decide(z=0.501, se_z=0.009, trials_per_model=20, **kw) == ON_TARGET
    # precise and outside: measured; a bounded child is never on target
    assert decide(z=0.53, se_z=0.02, trials_per_model=12, **kw) == "measured"
    bounded = {**kw, "bound": "all-solved"}
    assert decide(z=0.5, se_z=0.001, trials_per_model=32, **bounded) == "budget"
    # the fixed allocation applies the same rule at the end
    fixed = AdaptiveSettings(enabled=False, max_trials=32)
    assert decide(z=0.501, se_z=0.025, trials_per_model=32, **{**kw, "rule": fixed}) == "budget"


def test_confirmation_is_independent_of_the_selection(tmp_path):
    # 40 children all truly 0.04 above z*: the one whose *estimate* is closest is
    # chosen, so its selection estimate is biased towards z*; the confirmation uses
    # sample indices the search never used, so it is not
    world = _world(theta_sd=0.0, a_sd=0.0, interaction_sd=0.0)
    backend = WorldBackend(benchmark="toy", world=world, seed=11)
    panel = _panel(tmp_path, backend)
    z_star = 0.5
    b_true = b_of_z(CAL, z_star + 0.04)
    picked_sel, picked_conf = [], []
    for rep in range(6):
        kids = [_child(f"r{rep}-{i}", b_true) for i in range(40)]
        search = _measure(panel, kids, trials=4)
        best = min(kids, key=lambda c: abs(search[c.item].z - z_star))
        conf = _measure(panel, [best], trials=4, first_sample=4)[best.item]
        again = _measure(panel, [best], trials=4)[best.item]
        assert again.counts == search[best.item].counts  # the same indices: the same answers
        assert conf.counts != search[best.item].counts
        picked_sel.append(search[best.item].z - z_star)
        picked_conf.append(conf.z - z_star)
    assert np.mean(picked_sel) < 0.01  # the winner's curse: it looks on target
    assert np.mean(picked_conf) == pytest.approx(0.04, abs=0.025)  # it is not
