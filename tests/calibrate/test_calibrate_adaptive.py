"""Adaptive trial allocation against a controlled panel: it stops early, both ways."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from curation.calibrate import AdaptiveSettings, Child, Panel, annotate, b_of_z, z_slope
from curation.irt import Calibration
from curation.llm import ChatRequest, CollectSettings, Completion, CompletionCache, LLMSettings

THETA = {f"m{j:02d}": -3.0 + 6.0 * j / 39 for j in range(40)}
CAL = Calibration(
    model="1pl",
    abilities=THETA,
    scale={"method": "panel", "theta_min": -3.0, "theta_max": 3.0},
    panel=tuple(THETA),
    settings={"b_sd": 3.0},
)


class ControlledPanel:
    """Answers so that model j gets floor(n·p_j) of its first n trials right, p_j = σ(θ_j − b).

    A low-discrepancy rule instead of random draws: the panel's success rates are the
    1PL model's, with no sampling noise to make a test depend on a seed.
    """

    name = "controlled"
    namespace = "controlled-panel"

    def __init__(self, difficulty: dict[str, float]) -> None:
        self.difficulty = difficulty
        self.calls = 0

    def max_in_flight(self) -> int:
        return 4

    async def complete(self, request: ChatRequest) -> Completion:
        self.calls += 1
        p = 1.0 / (1.0 + math.exp(-(THETA[request.model] - self.difficulty[request.item])))
        s = request.sample
        right = math.floor((s + 1) * p + 0.5) - math.floor(s * p + 0.5) == 1
        return Completion(text=f"\\boxed{{{7 if right else 8}}}", backend="controlled")

    async def aclose(self) -> None:
        return None


def _panel(tmp_path, backend) -> Panel:
    from curation.llm import PanelModel

    return Panel(
        models=tuple(PanelModel(name=m, model_id=m) for m in THETA),
        backend=backend,
        cache=CompletionCache(tmp_path / "cache.sqlite"),
        collect=CollectSettings(),
        llm=LLMSettings(),
        calibration=CAL,
        benchmark="toy",
    )


def _child(item: str) -> Child:
    return Child(item, f"[{item}] What is 3 + 4?", "7", "numeric")


def _run(panel: Panel, children, **kw):
    return asyncio.run(annotate(children, panel, **kw))


def test_stops_early_on_clearly_off_and_clearly_on_children(tmp_path):
    z_star = 0.5
    difficulty = {"on": b_of_z(CAL, z_star), "off": b_of_z(CAL, 0.92)}
    backend = ControlledPanel(difficulty)
    panel = _panel(tmp_path, backend)
    rule = AdaptiveSettings(first_batch=2, batch=2, max_trials=32, se_accept=0.03, reject_k=2.0)
    notes = _run(
        panel,
        [_child("on"), _child("off")],
        target_z=z_star,
        tolerance=0.05,  # on target needs its 90% interval inside: reachable before 32
        rule=rule,
        stop_on_target=False,
    )
    off, on = notes["off"], notes["on"]
    assert off.outcome == "off-target" and off.trials_per_model == 2  # after the first batch
    assert off.n_trials == 2 * 40
    assert on.outcome == "accepted" and on.trials_per_model < 32
    assert abs(on.z - z_star) <= 0.02 and on.se_z <= 0.03
    # SE(z) is SE(b) times the map's slope
    assert on.se_z == pytest.approx(on.se * float(z_slope(CAL, np.array([on.b]))[0]))
    assert backend.calls == off.n_trials + on.n_trials
    # the fixed allocation spends the full budget on both
    fixed = _run(
        _panel(tmp_path / "fixed", ControlledPanel(difficulty)),
        [_child("on"), _child("off")],
        target_z=z_star,
        tolerance=0.05,
        rule=AdaptiveSettings(enabled=False, max_trials=32),
        stop_on_target=False,
    )
    assert fixed["on"].n_trials == fixed["off"].n_trials == 32 * 40
    assert fixed["on"].outcome == "accepted" and fixed["off"].outcome == "budget"
    saved = 1 - (on.n_trials + off.n_trials) / (2 * 32 * 40)
    assert saved > 0.5


def test_an_accepted_child_closes_its_open_siblings(tmp_path):
    # z* = 0.5 with a wide tolerance: both children are on target, but the one at the
    # panel's centre is measured more precisely per trial than the one near the top
    difficulty = {"centre": b_of_z(CAL, 0.5), "edge": b_of_z(CAL, 0.95)}
    rule = AdaptiveSettings(first_batch=2, batch=2, max_trials=32, se_accept=0.02)
    kw = dict(target_z=0.5, tolerance=0.46, rule=rule)
    alone = _run(
        _panel(tmp_path / "a", ControlledPanel(difficulty)),
        [_child("centre"), _child("edge")],
        stop_on_target=False,
        **kw,
    )
    assert alone["centre"].outcome == alone["edge"].outcome == "accepted"
    assert alone["centre"].trials_per_model < alone["edge"].trials_per_model
    stopped = _run(
        _panel(tmp_path / "b", ControlledPanel(difficulty)),
        [_child("centre"), _child("edge")],
        stop_on_target=True,
        **kw,
    )
    assert stopped["centre"].outcome == "accepted"
    assert stopped["edge"].outcome == "stopped"
    assert stopped["edge"].trials_per_model == stopped["centre"].trials_per_model
    assert stopped["edge"].z is not None  # it keeps the estimate it had


def test_a_rerun_is_served_from_the_cache(tmp_path):
    difficulty = {"on": 0.0}
    first = ControlledPanel(difficulty)
    rule = AdaptiveSettings(first_batch=2, batch=2, max_trials=8, se_accept=0.001)
    kw = dict(target_z=0.5, tolerance=0.01, rule=rule, stop_on_target=True)
    a = _run(_panel(tmp_path, first), [_child("on")], **kw)["on"]
    again = ControlledPanel(difficulty)
    b = _run(_panel(tmp_path, again), [_child("on")], **kw)["on"]
    assert first.calls == 8 * 40 and again.calls == 0
    assert (a.z, a.se, a.counts) == (b.z, b.se, b.counts) and b.cache_hits == 8 * 40
