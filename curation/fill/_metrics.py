"""What a fill run achieved and cost, per method (``metrics/fill/<benchmark>.json``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

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


def method_metrics(
    candidates: Sequence[Candidate],
    inserted: Sequence[Candidate],
    *,
    z_before: np.ndarray,
    n_targets: int,
    rounds: Sequence[int],
    fixed_budget: int,
) -> dict[str, Any]:
    """Gap reduction, closeness to target and cost of one method."""
    z_after = np.concatenate([z_before, [_z(c) for c in inserted]])
    devs = [abs(_z(c) - float(c.target_z)) for c in inserted]
    true_devs = []
    for c in inserted:
        sim = c.lineage_dict().get("simulation") or {}
        if sim.get("latent_z") is not None:
            true_devs.append(abs(sim["latent_z"] - float(c.target_z)))
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
        "max_gap_after": _r(max_gap(z_after)),
        "target_dev": _r(float(np.mean(devs))) if devs else None,
        "max_target_dev": _r(max(devs)) if devs else None,
        "true_target_dev": _r(float(np.mean(true_devs)))
        if true_devs and len(true_devs) == n_ins
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
                "dev": _r(abs(_z(c) - float(c.target_z))),
                "round": c.round,
                "parent": c.parent,
            }
            for c in inserted
        ],
    }


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is 0."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 6)
