"""What a fill run achieved and cost, per method (``metrics/fill/<benchmark>.json``).

Every figure is on the **estimated** z — what a real run can know: an inserted item's
z is its confirmation estimate (fresh trials, independent of the selection), so
``target_dev`` has no winner's curse, and ``target_dev_se`` says how well it is known.
In simulation the same figures are given on the world's **true** z
(:class:`curation.calibrate.SimulatedWorld`): ``true_top_3_reduction_pct`` (the
benchmark's items at their calibrated z — the axis the targets are set on — and the
inserted items at their true z) and ``true_target_dev``; ``world_top_3_reduction_pct``
also puts the benchmark's own items at their true z, which adds their estimation
error (no insertion method can fix that; see the gaps report's resolution).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from curation.calibrate import on_target_consistent
from curation.candidates import Candidate
from curation.fill._targets import top_k_reduction
from curation.measure import max_gap, top_k_sum


def _r(x: float | None, digits: int = 6) -> float | None:
    return None if x is None else round(float(x), digits)


def _z(c: Candidate) -> float:
    if c.z is None:
        raise ValueError(f"inserted candidate {c.candidate} has no z")
    return float(c.z)


def failure_reason(status_reason: str) -> str:
    """A countable form of a candidate's status reason (ids and numbers dropped).

    ``unparseable rewrite: no JSON object in the output`` stays as it is; ``same question
    as q12`` -> ``same question``; ``judge: unparseable judge output: ...`` ->
    ``judge: unparseable``.
    """
    r = status_reason.strip()
    if r.startswith("unparseable rewrite:"):
        return r.split(" (", 1)[0].split(": {", 1)[0].split(": '", 1)[0]
    if r.startswith("same question as"):
        return "same question"
    if r.startswith("near-duplicate of"):
        return "near-duplicate"
    if r.startswith("judge:"):
        body = r.removeprefix("judge:").strip().removeprefix("[simulated]").strip()
        for prefix, label in (
            ("unparseable judge output", "unparseable"),
            ("not judged", "no-own-answer"),
        ):
            if body.startswith(prefix):
                return f"judge: {label}"
        return "judge: rejected"
    return r.split(":", 1)[0]


def true_z(c: Candidate) -> float | None:
    """Simulation: an inserted item's true z (the oracle's is its target), else None."""
    sim = c.lineage_dict().get("simulation") or {}
    value = sim.get("true_z", sim.get("latent_z"))
    return None if value is None else float(value)


def _true_target(c: Candidate) -> float:
    """The target in the true frame (the calibration's z* translated), else z*."""
    sim = c.lineage_dict().get("simulation") or {}
    value = sim.get("true_target_z")
    return float(c.target_z if value is None else value)


def _se_z(c: Candidate) -> float | None:
    """SE of a child's z, or None when the data do not give one.

    A child every panel trial failed (or every trial solved) has its b only bounded:
    the delta-method SE then runs to 1e22 on a [0, 1] axis. An SE that is not finite or
    wider than the whole axis says nothing, so it is reported as unknown (and the
    child never counts as on target) rather than printed as ``± 1.6e22``."""
    value = c.lineage_dict().get("se_z")
    if value is None and c.se == 0.0:
        return 0.0  # the oracle: placed, not measured
    if value is None:
        return None
    se = float(value)
    return se if np.isfinite(se) and se <= 1.0 else None


def _pct(before: np.ndarray, added: Sequence[float]) -> float:
    return top_k_reduction(before, np.concatenate([before, np.asarray(added, dtype=float)]), 3)


def method_metrics(
    candidates: Sequence[Candidate],
    inserted: Sequence[Candidate],
    *,
    z_before: np.ndarray,
    n_targets: int,
    rounds: Sequence[int],
    fixed_budget: int,
    tolerance: float,
    z_axis_before: np.ndarray | None = None,
    z_world_before: np.ndarray | None = None,
    reduction: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Gap reduction, closeness to target and cost of one method (module docstring).

    Simulation: ``z_axis_before``, the benchmark's items at their calibrated b in the
    true panel's frame (their estimates, no estimation error added); ``z_world_before``,
    at their true z. ``reduction``: the Top-3 reduction's posterior median and 90%
    interval (:func:`curation.fill._uncertainty.reduction_interval`).
    """
    z_after = np.concatenate([z_before, [_z(c) for c in inserted]])
    devs = [abs(_z(c) - float(c.target_z)) for c in inserted]
    ses = [_se_z(c) for c in inserted]
    known = [x for x in ses if x is not None]
    sel = [(c.lineage_dict().get("selection") or {}).get("z", c.z) for c in inserted]
    on_target = sum(
        se is not None
        and on_target_consistent(z=_z(c), se_z=se, target_z=float(c.target_z), tolerance=tolerance)
        for c, se in zip(inserted, ses, strict=True)
    )
    truths = [true_z(c) for c in inserted]
    complete = z_world_before is not None and all(t is not None for t in truths)
    true_zs = [float(t) for t in truths if t is not None]
    true_devs = [abs(t - _true_target(c)) for c, t in zip(inserted, true_zs, strict=False)]
    sel_devs = [
        abs(float(z) - float(c.target_z))
        for z, c in zip(sel, inserted, strict=True)
        if z is not None
    ]
    cost: Counter[str] = Counter()
    for c in candidates:
        cost.update(c.lineage_dict().get("cost") or {})
    trials = int(cost["panel_trials"])
    n_ins = len(inserted)
    per_insertion = trials / n_ins if n_ins else None
    return {
        "n_targets": n_targets,
        "n_inserted": n_ins,
        "top_3_after": _r(top_k_sum(z_after, 3)),
        "top_3_reduction_pct": _r(top_k_reduction(z_before, z_after, 3), 4),
        "top_3_reduction": reduction,
        "max_gap_after": _r(max_gap(z_after)),
        "target_dev": _r(float(np.mean(devs))) if devs else None,
        "target_dev_se": _r(float(np.sqrt(np.sum(np.square(known)))) / len(known))
        if known and len(known) == n_ins
        else None,
        "selection_target_dev": _r(float(np.mean(sel_devs))) if sel_devs else None,
        "n_on_target": int(on_target),
        "max_target_dev": _r(max(devs)) if devs else None,
        "true_target_dev": _r(float(np.mean(true_devs))) if complete and inserted else None,
        "true_top_3_reduction_pct": _r(_pct(z_axis_before, true_zs), 4)
        if complete and z_axis_before is not None
        else None,
        "world_top_3_reduction_pct": _r(_pct(z_world_before, true_zs), 4)  # type: ignore[arg-type]
        if complete
        else None,
        "rounds": list(rounds),
        "n_candidates": len(candidates),
        "by_status": dict(sorted(Counter(c.status for c in candidates).items())),
        "failure_reasons": dict(
            sorted(
                Counter(
                    failure_reason(c.status_reason)
                    for c in candidates
                    if c.status_reason and c.status not in ("calibrated", "inserted")
                ).items()
            )
        ),
        "rewriter_calls": int(cost["rewriter_calls"]),
        "panel_trials": trials,
        "tokens": {
            "rewriter_prompt": int(cost["rewriter_prompt_tokens"]),
            "rewriter_completion": int(cost["rewriter_completion_tokens"]),
            "panel_prompt": int(cost["panel_prompt_tokens"]),
            "panel_completion": int(cost["panel_completion_tokens"]),
            "total": int(cost["tokens"]),
        },
        "trials_per_insertion": _r(per_insertion, 2),
        "trials_vs_fixed": _r(per_insertion / fixed_budget)
        if per_insertion is not None and fixed_budget
        else None,
        "inserted": [
            {
                "candidate": c.candidate,
                "target_z": _r(c.target_z),
                "z": _r(c.z),
                "se": _r(c.se),
                "se_z": _r(_se_z(c)),
                "z_low": _r(c.z_low),
                "z_high": _r(c.z_high),
                "selection_z": _r(z),
                "true_z": _r(true_z(c)),
                "dev": _r(abs(_z(c) - float(c.target_z))),
                "round": c.round,
                "parent": c.parent,
            }
            for c, z in zip(inserted, sel, strict=True)
        ],
    }


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 6)
