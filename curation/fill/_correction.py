"""What the search learns about its rewriter: offset and scale, and the corrected request.

A rewriter asked to move a parent of difficulty b_p to b* rarely lands on b*: it may
move only part of the way (a *scale* below 1), or make every child harder or easier
than asked (an *offset*). Both are properties of the rewriting model and the prompt,
so they can be measured on the run's own children, whose difficulty the panel
calibrates anyway. With the logit step asked for, ``d = b_request − b_p``, and the step
measured, ``y = b_child − b_p``, the model is

    y = offset + scale · d + e,   Var(e) = τ² + SE(b_child)² + (1 − scale)² SE(b_p)²

(the parent's own error enters through the part of the step the rewriter does not
take). :func:`fit_rewriter` fits it by weighted least squares with a normal prior
centred on a rewriter that does what it is asked (offset 0, scale 1), τ² by the
method of moments on the residuals; :meth:`RewriterFit.request` inverts it: to land on
b* from b_p, ask for ``b_p + (b* − b_p − offset) / scale``. Every round refits on all
of BenchFill's measured children so far (online, across targets), so the correction
follows the journal exactly on a resumed run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from curation.calibrate import b_of_z
from curation.candidates import BENCHFILL, CALIBRATED, INSERTED, Candidate
from curation.fill._settings import CorrectionSettings
from curation.irt import Calibration

_ITERATIONS = 4
"""Reweighting rounds of the fit (τ² and the parent-error weight depend on the fit)."""


@dataclass(frozen=True)
class Step:
    """One measured rewrite: the step asked for and the step taken (logits)."""

    asked: float
    """b_request − b_parent."""
    taken: float
    """b_child − b_parent (the child's calibrated b)."""
    se_child: float
    se_parent: float


@dataclass(frozen=True)
class RewriterFit:
    """The rewriter's estimated offset and scale (``identity()``: none learnt yet)."""

    offset: float = 0.0
    scale: float = 1.0
    offset_se: float | None = None
    scale_se: float | None = None
    tau: float | None = None
    """SD of a rewrite's own error around the fitted line (logits)."""
    n: int = 0
    """Measured children the fit rests on."""

    def request(self, parent_b: float, target_b: float, settings: CorrectionSettings) -> float:
        """The b to ask for so that a child of ``parent_b`` lands on ``target_b`` in
        expectation; the step's scale is at least ``scale_min`` and the request at most
        ``max_shift`` logits from the target."""
        if not settings.enabled or self.n == 0:
            return target_b
        scale = max(self.scale, settings.scale_min)
        asked = parent_b + (target_b - parent_b - self.offset) / scale
        return float(np.clip(asked, target_b - settings.max_shift, target_b + settings.max_shift))

    def describe(self) -> dict[str, Any]:
        """The lineage record of the fit a request was made with."""
        return {
            "offset": round(self.offset, 6),
            "scale": round(self.scale, 6),
            "offset_se": None if self.offset_se is None else round(self.offset_se, 6),
            "scale_se": None if self.scale_se is None else round(self.scale_se, 6),
            "tau": None if self.tau is None else round(self.tau, 6),
            "n": self.n,
        }


def fit_rewriter(steps: Sequence[Step], settings: CorrectionSettings) -> RewriterFit:
    """Posterior mean (and SEs) of offset and scale given ``steps`` (module docstring)."""
    if not steps:
        return RewriterFit()
    d = np.array([s.asked for s in steps], dtype=np.float64)
    y = np.array([s.taken for s in steps], dtype=np.float64)
    se_c = np.array([s.se_child for s in steps], dtype=np.float64)
    se_p = np.array([s.se_parent for s in steps], dtype=np.float64)
    x = np.column_stack([np.ones_like(d), d])
    prior_mean = np.array([0.0, 1.0])
    prior_prec = np.diag([settings.offset_sd**-2, settings.scale_sd**-2])
    beta = prior_mean.copy()
    tau2 = settings.tau**2
    cov = np.linalg.inv(prior_prec)
    for _ in range(_ITERATIONS):
        var = tau2 + se_c**2 + (1.0 - beta[1]) ** 2 * se_p**2
        w = 1.0 / var
        prec = prior_prec + (x * w[:, None]).T @ x
        cov = np.linalg.inv(prec)
        beta = cov @ (prior_prec @ prior_mean + x.T @ (w * y))
        resid = y - x @ beta
        noise = se_c**2 + (1.0 - beta[1]) ** 2 * se_p**2
        if len(steps) >= 3:  # τ² from the residuals once there are a few
            tau2 = max(float(np.mean(resid**2 - noise)), settings.tau_min**2)
    return RewriterFit(
        offset=float(beta[0]),
        scale=float(beta[1]),
        offset_se=float(np.sqrt(cov[0, 0])),
        scale_se=float(np.sqrt(cov[1, 1])),
        tau=float(np.sqrt(tau2)),
        n=len(steps),
    )


def step_of(c: Candidate) -> Step | None:
    """The measured step of a BenchFill child asked for with a recorded request, or None
    (not calibrated, a bound instead of an estimate, no request in its lineage)."""
    if c.method != BENCHFILL or c.status not in (CALIBRATED, INSERTED) or c.b is None:
        return None
    lineage = c.lineage_dict()
    request = lineage.get("request") or {}
    asked, parent_b, parent_se = (request.get(k) for k in ("b", "parent_b", "parent_se"))
    b, se = c.b, c.se  # an inserted child's: its confirmation (fresh, unselected)
    if asked is None or parent_b is None or lineage.get("bound") is not None or se is None:
        return None
    if not np.isfinite(se) or se <= 0:
        return None
    return Step(
        asked=float(asked) - float(parent_b),
        taken=float(b) - float(parent_b),
        se_child=float(se),
        se_parent=float(parent_se or 0.0),
    )


def steps_of(candidates: Iterable[Candidate]) -> list[Step]:
    """:func:`step_of` of every candidate that has one."""
    return [s for c in candidates if (s := step_of(c)) is not None]


def unclipped_z(calibration: Calibration, b: float) -> float:
    """z of ``b`` on the calibration's map, extended linearly past [0, 1] on a linear
    map (``panel``, ``items``: the stored z is clipped there); the logistic map is
    inside (0, 1) anyway."""
    if calibration.scale["method"] == "logistic":
        return float(calibration.to_z(np.array([b]))[0])
    lo, hi = b_of_z(calibration, 0.0), b_of_z(calibration, 1.0)
    return (b - lo) / (hi - lo)
