"""Measuring given items (no search) and writing a measurement into a candidate record."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from curation.calibrate._annotate import (
    MEASURED,
    ON_TARGET,
    Annotation,
    Child,
    Panel,
    annotate,
    describe,
)
from curation.calibrate._settings import AdaptiveSettings
from curation.candidates import CALIBRATED, INVALID, Candidate
from curation.irt import Calibration
from curation.llm import CallResult

NO_TARGET = 1.0
"""The tolerance :func:`measure` gives :func:`annotate`: every z is "on target", so only
precision or the trial budget ends collection (no off-target early stop)."""


async def measure(
    children: Sequence[Child],
    panel: Panel,
    *,
    targets: Mapping[str, float],
    tolerance: float,
    rule: AdaptiveSettings,
    on_result: Callable[[CallResult], None] | None = None,
) -> dict[str, Annotation]:
    """Measure ``children`` as precisely as ``rule`` allows, whatever their z.

    Collection goes on until ``SE(z) <= se_accept`` or ``max_trials`` (never an
    off-target stop: the item is not a search candidate). Each outcome then says
    whether the child is within ``tolerance`` of its own target (``targets[item]``):
    on target ("accepted") or "measured".
    """
    notes = await annotate(
        children,
        panel,
        target_z=0.5,
        tolerance=NO_TARGET,
        rule=rule,
        stop_on_target=False,
        on_result=on_result,
    )
    for item, a in notes.items():
        if a.outcome == ON_TARGET and abs((a.z or 0.0) - targets[item]) > tolerance:
            a.outcome = MEASURED  # precise, but not within tolerance of its target
    return notes


def record_measurement(
    record: Candidate,
    a: Annotation,
    *,
    target_z: float,
    tolerance: float,
    reason_prefix: str = "",
) -> Candidate:
    """``record`` with the panel's counts; calibrated (b, SE, z, interval) if it has a z.

    Without a z (no panel answer could be graded) it is ``invalid``.
    """
    record = record.replace(n_trials=a.n_trials, n_correct=a.n_correct, panel=a.panel_json())
    if a.z is None:
        return record.replace(status=INVALID, status_reason="no graded panel answer")
    return record.replace(
        status=CALIBRATED,
        status_reason=reason_prefix + describe(a, target_z=target_z, tolerance=tolerance),
        b=a.b,
        se=a.se,
        z=a.z,
        z_low=a.z_low,
        z_high=a.z_high,
    )


def simulation_lineage(
    calibration: Calibration, latent_b: float | None, **extra: Any
) -> dict[str, Any]:
    """The ``simulation`` lineage of a simulated item: the latent b it was answered from,
    its z on ``calibration``, and ``extra`` (where the b came from)."""
    latent_z = None if latent_b is None else float(calibration.to_z(np.array([latent_b]))[0])
    return {"latent_b": latent_b, "latent_z": latent_z, **extra}
