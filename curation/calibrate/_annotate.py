"""Online calibration of new items: the panel answers, abilities fixed, b and z — adaptively.

The panel answers through ``curation.llm`` exactly as in ``collect`` (same prompt
templates, same cache, same graders). Instead of a fixed k per model, trials go out
in batches to every new item ("child") still open, all children of a round in
lock-step; after each batch all open children are calibrated at once (abilities
fixed, vectorised, :func:`curation.irt.calibrate_counts`) and each one is closed by the
rule of :class:`~curation.calibrate.AdaptiveSettings`, with a
:data:`CalibrationOutcome`. With ``stop_on_target`` (BenchFill), the first child on
target also closes its open siblings ("stopped"): the search for this target is over.

The outcome values are recorded in every candidate's lineage (``decision``), so they
are part of the published record format: ``"accepted"`` there means *on target*
(a calibration outcome), never a reviewer's decision (:class:`curation.review.Decision`).

Sample indices run 0, 1, 2, … per (model, child) across batches, so a batch is the
next slice of the same planned calls and a rerun is served from the cache.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

import numpy as np
import polars as pl

from curation.calibrate._settings import AdaptiveSettings
from curation.candidates import COLLECTED, SIMULATED, Source
from curation.grading import GradingSettings
from curation.irt import Calibration, calibrate_counts
from curation.llm import (
    Backend,
    CallResult,
    CollectSettings,
    CompletionCache,
    LLMSettings,
    PanelModel,
    grade_calls,
    plan_calls,
    run_calls,
)

CalibrationOutcome = Literal["accepted", "measured", "off-target", "budget", "stopped"]
"""Why collection on a new item stopped (see :class:`~curation.calibrate.AdaptiveSettings`):
on target ("accepted"), precise but off target ("measured"), clearly off target, trial
budget spent, or "stopped" because a sibling reached the target. Recorded as
``decision`` in the candidate lineage (values are part of the record format)."""
ON_TARGET: Final = "accepted"
"""The outcome of a child on target and known well enough (persisted as ``"accepted"``)."""
MEASURED: Final = "measured"
OFF_TARGET: Final = "off-target"
BUDGET: Final = "budget"
STOPPED: Final = "stopped"
Z90: Final = 1.6448536269514722
"""Half-width of a two-sided 90% normal interval, in SEs."""
OUTCOMES: tuple[CalibrationOutcome, ...] = get_args(CalibrationOutcome)


@dataclass(frozen=True)
class Child:
    """A new item, as the panel sees it (checked gradable by :func:`gradable_problem`)."""

    item: str
    question: str
    answer: str
    answer_type: str
    choices: tuple[str, ...] | None = None


@dataclass
class Annotation:
    """What the panel said about one child, and why collection stopped."""

    item: str
    counts: dict[str, list[int]] = field(default_factory=dict)
    """model -> [n_correct, n_trials]."""
    b: float | None = None
    se: float | None = None
    z: float | None = None
    z_low: float | None = None
    z_high: float | None = None
    se_z: float | None = None
    bound: str | None = None
    outcome: CalibrationOutcome | None = None
    """Why collection stopped (None while open); ``decision`` in the lineage."""
    trials_per_model: int = 0
    batches: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    cache_hits: int = 0

    @property
    def n_trials(self) -> int:
        return sum(n for _, n in self.counts.values())

    @property
    def n_correct(self) -> int:
        return sum(k for k, _ in self.counts.values())

    def panel_json(self) -> str:
        return json.dumps({m: list(v) for m, v in sorted(self.counts.items())}, sort_keys=True)

    def cost(self) -> dict[str, int]:
        """Panel trials and tokens spent on this item."""
        return {
            "panel_trials": self.n_trials,
            "panel_prompt_tokens": self.prompt_tokens,
            "panel_completion_tokens": self.completion_tokens,
        }


@dataclass(frozen=True)
class Panel:
    """The answering panel and everything needed to ask it and calibrate its answers."""

    models: tuple[PanelModel, ...]
    backend: Backend
    cache: CompletionCache
    collect: CollectSettings
    """Prompt templates and the sampling seed (``calibrate.seed``)."""
    llm: LLMSettings
    calibration: Calibration
    benchmark: str
    grading: GradingSettings | None = None
    register: Callable[[Child], None] | None = None
    """Simulation: make a child answerable before it is asked."""
    direct: bool = False
    """Simulation only (benchmarks): draw the backend's answers without prompts, cache
    or grading — the same seeded draws, much faster."""

    @property
    def size(self) -> int:
        return len(self.models)

    @property
    def source(self) -> Source:
        """``simulated`` when the simulation answers (so every record says so)."""
        return SIMULATED if self.backend.name == "simulated" else COLLECTED

    async def aclose(self) -> None:
        await self.backend.aclose()


def z_slope(calibration: Calibration, b: np.ndarray) -> np.ndarray:
    """dz/db of the calibration's map, ignoring clipping (see :class:`AdaptiveSettings`)."""
    sc = calibration.scale
    if sc["method"] == "panel":
        return np.full_like(b, 1.0 / (sc["theta_max"] - sc["theta_min"]))
    if sc["method"] == "items":
        return np.full_like(b, 1.0 / (sc["b_max"] - sc["b_min"]))
    z = 1.0 / (1.0 + np.exp(-(b - sc["c"]) / sc["s"]))
    return z * (1.0 - z) / sc["s"]


def b_of_z(calibration: Calibration, z: float) -> float:
    """The logit difficulty whose z is ``z`` (inverse of the stored map, inside (0, 1))."""
    sc = calibration.scale
    if sc["method"] == "panel":
        return sc["theta_min"] + z * (sc["theta_max"] - sc["theta_min"])
    if sc["method"] == "items":
        return sc["b_min"] + z * (sc["b_max"] - sc["b_min"])
    zc = min(max(z, 1e-9), 1 - 1e-9)
    return sc["c"] + sc["s"] * float(np.log(zc / (1 - zc)))


def on_target_consistent(
    *, z: float, se_z: float, target_z: float, tolerance: float, k: float = Z90
) -> bool:
    """On target *given the uncertainty*: the 90% interval ``z ± k·SE`` lies within
    ``[z* − tolerance, z* + tolerance]``, or ``SE ≤ tolerance/2`` with z inside it.

    An estimate inside the tolerance with an SE three times the tolerance says
    nothing about the item being on target; this is the rule that lets "on target"
    mean what it says on the true difficulty, not only on the estimate.
    """
    dev = abs(z - target_z)
    if dev > tolerance:
        return False
    return dev + k * se_z <= tolerance or se_z <= tolerance / 2


def decide(
    *,
    z: float,
    se_z: float,
    lo: float,
    hi: float,
    bound: str | None,
    target_z: float,
    tolerance: float,
    rule: AdaptiveSettings,
    trials_per_model: int,
) -> CalibrationOutcome | None:
    """The stopping rule after a batch (None = collect another batch).

    ``lo``/``hi`` are the ends of ``b ± reject_k·SE`` mapped to z (a bounded child's
    interval open to its end of the axis). A child is on target only when that is
    consistent with its SE (:func:`on_target_consistent`); one whose estimate is
    inside the tolerance but not yet known well enough keeps collecting until it is,
    or the budget is spent ("budget": within tolerance as far as the trials can tell).
    """
    consistent = bound is None and on_target_consistent(
        z=z, se_z=se_z, target_z=target_z, tolerance=tolerance
    )
    if not rule.enabled:
        if trials_per_model < rule.max_trials:
            return None
        return ON_TARGET if consistent else BUDGET
    if lo > target_z + tolerance or hi < target_z - tolerance:
        return OFF_TARGET
    if consistent and se_z <= rule.se_accept:
        return ON_TARGET
    if bound is None and se_z <= rule.se_accept and abs(z - target_z) > tolerance:
        return MEASURED
    if trials_per_model >= rule.max_trials:
        return BUDGET
    return None


def _frame(children: Sequence[Child]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "item": [c.item for c in children],
            "question": [c.question for c in children],
            "answer": [c.answer for c in children],
            "answer_type": [c.answer_type for c in children],
            "choices": [list(c.choices) if c.choices else None for c in children],
        },
        schema={
            "item": pl.String,
            "question": pl.String,
            "answer": pl.String,
            "answer_type": pl.String,
            "choices": pl.List(pl.String),
        },
    )


def calibrate_annotations(notes: Sequence[Annotation], calibration: Calibration) -> None:
    """Fit b, SE and z of each annotation from its counts (abilities fixed), in place."""
    rows = [(m, a.item, n, k) for a in notes for m, (k, n) in a.counts.items() if n > 0]
    if not rows:
        return
    models, items, n_trials, n_correct = zip(*rows, strict=True)
    table = calibrate_counts(models, items, n_trials, n_correct, calibration)
    by_item = {r["item"]: r for r in table.iter_rows(named=True)}
    for a in notes:
        r = by_item.get(a.item)
        if r is None:
            continue
        b, se = float(r["b"]), float(r["se"])
        a.b, a.se, a.z = b, se, float(r["z"])
        a.z_low, a.z_high, a.bound = float(r["z_low"]), float(r["z_high"]), r["bound"]
        a.se_z = float(se * z_slope(calibration, np.array([b]))[0])


def _band(a: Annotation, calibration: Calibration, k: float) -> tuple[float, float]:
    lo, hi = calibration.to_z(np.array([a.b - k * a.se, a.b + k * a.se]))  # type: ignore[operator]
    lo, hi = float(lo), float(hi)
    if a.bound == "all-solved":
        lo = 0.0
    elif a.bound == "none-solved":
        hi = 1.0
    return lo, hi


def _draw_direct(
    open_: Sequence[Child], panel: Panel, notes: dict[str, Annotation], start: int, stop: int
) -> None:
    """Simulation: the same seeded draws the backend would answer, without the calls."""
    backend = panel.backend
    is_correct = backend.is_correct  # type: ignore[attr-defined]
    for c in open_:
        cells = notes[c.item].counts
        for m in panel.models:
            cell = cells[m.name]
            cell[0] += sum(is_correct(m.name, c.item, s) for s in range(start, stop))
            cell[1] += stop - start


async def _ask(
    open_: Sequence[Child],
    panel: Panel,
    notes: dict[str, Annotation],
    start: int,
    stop: int,
    on_result: Callable[[CallResult], None] | None,
) -> None:
    """One batch through ``curation.llm``: samples ``start`` … ``stop − 1`` per model."""
    models = [m.model_copy(update={"trials": stop}) for m in panel.models]
    calls, skipped = plan_calls(
        _frame(open_),
        models,
        collect=panel.collect,
        llm=panel.llm,
        namespace=panel.backend.namespace,
        grading=panel.grading,
        stage="fill",
        first_sample=start,
    )
    if skipped:  # validity screens these out; a safety net, not a path
        raise ValueError(f"ungradable children reached the panel: {skipped}")
    results, _ = await run_calls(calls, panel.backend, panel.cache, progress=False)
    samples = grade_calls(
        calls, results, benchmark=panel.benchmark, source=panel.source, grading=panel.grading
    )
    for call in calls:
        result = results[call.key]
        a = notes[call.request.item]  # type: ignore[index]
        completion = result.completion
        a.prompt_tokens += completion.prompt_tokens or 0
        a.completion_tokens += completion.completion_tokens or 0
        a.requests += 0 if result.cached else 1
        a.cache_hits += 1 if result.cached else 0
        if on_result is not None:
            on_result(result)
    for item, model, correct in samples.select("item", "model", "correct").iter_rows():
        if correct is None:
            continue
        cell = notes[item].counts[model]
        cell[0] += int(bool(correct))
        cell[1] += 1


async def annotate(
    children: Sequence[Child],
    panel: Panel,
    *,
    target_z: float,
    tolerance: float,
    rule: AdaptiveSettings,
    stop_on_target: bool,
    on_result: Callable[[CallResult], None] | None = None,
    first_sample: int = 0,
) -> dict[str, Annotation]:
    """Ask the panel about ``children`` in batches until each is decided; calibrate them.

    ``on_result`` sees every panel call (accounting). ``first_sample`` offsets the
    sample indices: a confirmation round asks for *fresh* trials, indices the search
    never used, so its estimate is independent of the one the child was chosen by.
    """
    notes = {c.item: Annotation(c.item, {m.name: [0, 0] for m in panel.models}) for c in children}
    if not children:
        return notes
    if panel.register is not None:
        for c in children:
            panel.register(c)
    open_ = list(children)
    done = 0
    while open_:
        step = (
            rule.max_trials if not rule.enabled else (rule.first_batch if done == 0 else rule.batch)
        )
        upto = min(done + step, rule.max_trials)
        if panel.direct:
            _draw_direct(open_, panel, notes, first_sample + done, first_sample + upto)
        else:
            await _ask(open_, panel, notes, first_sample + done, first_sample + upto, on_result)
        active = [notes[c.item] for c in open_]
        for a in active:
            a.trials_per_model = upto
            a.batches += 1
        calibrate_annotations(active, panel.calibration)
        on_target = False
        still: list[Child] = []
        for c in open_:
            a = notes[c.item]
            if a.z is None:
                a.outcome = BUDGET
                continue
            lo, hi = _band(a, panel.calibration, rule.reject_k)
            a.outcome = decide(
                z=a.z,
                se_z=a.se_z if a.se_z is not None else float("inf"),
                lo=lo,
                hi=hi,
                bound=a.bound,
                target_z=target_z,
                tolerance=tolerance,
                rule=rule,
                trials_per_model=upto,
            )
            if a.outcome is None:
                still.append(c)
            elif a.outcome == ON_TARGET:
                on_target = True
        if on_target and stop_on_target:
            for c in still:
                notes[c.item].outcome = STOPPED
            still = []
        open_ = still
        done = upto
    return notes


def describe(a: Annotation, *, target_z: float, tolerance: float) -> str:
    """The candidate's ``status_reason`` for a calibrated child."""
    dev = abs((a.z or 0.0) - target_z)
    se = f"SE(z) {a.se_z:.4f}" if a.se_z is not None else "no SE"
    tail = f"after {a.trials_per_model} trials per model"
    text = {
        ON_TARGET: f"on target: |z - z*| = {dev:.4f} <= {tolerance:g} with {se} {tail}",
        MEASURED: f"off target: |z - z*| = {dev:.4f} > {tolerance:g} with {se} {tail}",
        OFF_TARGET: f"clearly off target (|z - z*| = {dev:.4f}, {se}) {tail}",
        BUDGET: (
            f"within tolerance but not confirmed on target (|z - z*| = {dev:.4f} <= "
            f"{tolerance:g}, {se}: the interval is wider than the tolerance) {tail}"
            if dev <= tolerance
            else f"trial budget spent: |z - z*| = {dev:.4f}, {se} {tail}"
        ),
        STOPPED: f"stopped: a sibling reached the target; |z - z*| = {dev:.4f}, {se} {tail}",
    }
    return text.get(a.outcome or "", f"calibrated {tail}")


def annotation_lineage(a: Annotation) -> dict[str, Any]:
    """The annotation fields an item record keeps as its difficulty lineage (the persisted
    key of the outcome is ``decision``)."""
    return {
        "decision": a.outcome,  # the persisted key of the outcome
        "trials_per_model": a.trials_per_model,
        "batches": a.batches,
        "se_z": a.se_z,
        "bound": a.bound,
    }
