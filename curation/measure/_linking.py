"""Panel dependence: two panels that measured the same items, linked on those items.

z is a property of the panel that anchors it (SPEC §3.4: z = 0 at the weakest model's
ability, 1 at the strongest's). The same items measured by another panel — e.g. one
benchmark imported from two sources — get other b (each fit fixes its own location) and
other anchors, hence other z: GSM8K measured on two real panels gave DDM 0.361 and 0.101.

Common-item **mean–sigma linking** (Marco 1977) puts panel B's logits on panel A's scale
with the line b_A ≈ A·b_B + B, A = sd(b_A)/sd(b_B), B = mean(b_A) − A·mean(b_B), fitted on
the common items whose b both fits estimated from data (items every model, or none,
solved are only bounded: their b is set by the prior and would bend the line). Then:

* **raw drift** z_B − z_A on the common items: how much the reported z depends on the panel;
* **residual drift** z_{B→A} − z_A, with z_{B→A} panel B's b linked onto A's scale and
  mapped by A's calibration: what is left once the scales are aligned (measurement noise
  and item × panel interaction), the part no re-anchoring removes;
* panel B's ability range on A's scale, i.e. which stretch of A's axis B can measure.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from curation.measure._ddm import ddm

MIN_COMMON = 10
"""Fewer common (unbounded) items than this give no linking: mean and SD are too noisy."""


@dataclass(frozen=True)
class PanelLinking:
    """Mean–sigma linking of panel B onto panel A on their common items, and z drift."""

    panel_a: str
    panel_b: str
    n_common: int
    """Common items used for the line (both fits estimated their b from data)."""
    slope: float
    intercept: float
    """b on A's scale ≈ slope · b on B's scale + intercept."""
    raw_drift_mean: float
    """Mean of z_B − z_A over all common items."""
    raw_drift_mean_abs: float
    residual_drift_mean_abs: float
    """Mean |z_{B→A} − z_A|: drift left after linking."""
    residual_drift_max_abs: float
    ddm_a: float
    ddm_b: float
    """DDM to uniform of the common items on each panel's own z."""
    b_theta_on_a: tuple[float, float]
    """Panel B's weakest and strongest abilities on A's logit scale."""
    a_theta: tuple[float, float]

    def to_metrics(self) -> dict[str, Any]:
        return {
            "other": self.panel_b,
            "n_common": self.n_common,
            "slope": self.slope,
            "intercept": self.intercept,
            "raw_drift_mean": self.raw_drift_mean,
            "raw_drift_mean_abs": self.raw_drift_mean_abs,
            "residual_drift_mean_abs": self.residual_drift_mean_abs,
            "residual_drift_max_abs": self.residual_drift_max_abs,
            "ddm_self": self.ddm_a,
            "ddm_other": self.ddm_b,
        }

    def label(self) -> str:
        """One sentence for a report."""
        lo, hi = self.b_theta_on_a
        return (
            f"{self.n_common} items shared with **{self.panel_b}**: on those items mean "
            f"|Δz| = {self.raw_drift_mean_abs:.3f} between the two panels' z (DDM "
            f"{self.ddm_a:.3f} here vs {self.ddm_b:.3f} there); mean–sigma linking "
            f"(b here ≈ {self.slope:.3f}·b there {self.intercept:+.3f}) leaves mean |Δz| "
            f"{self.residual_drift_mean_abs:.3f}. {self.panel_b}'s panel spans θ "
            f"{lo:.2f} to {hi:.2f} on this scale (this panel: {self.a_theta[0]:.2f} to "
            f"{self.a_theta[1]:.2f})."
        )


def link_panels(
    b_a: Mapping[str, float],
    b_b: Mapping[str, float],
    *,
    to_z_a: Any,
    to_z_b: Any,
    theta_a: np.ndarray,
    theta_b: np.ndarray,
    names: tuple[str, str] = ("A", "B"),
    bounded: Collection[str] = (),
) -> PanelLinking | None:
    """Link panel B onto panel A on their common items (None if fewer than MIN_COMMON).

    ``b_a``, ``b_b``: item → difficulty (logits) on each fit's scale; ``to_z_a``/``to_z_b``
    each calibration's logit → z map (e.g. ``Calibration.to_z``); ``theta_a``/``theta_b``
    each panel's abilities; ``bounded``: items either fit only bounds (left out of the line,
    kept in the drift).
    """
    common = sorted(set(b_a) & set(b_b))
    free = [i for i in common if i not in set(bounded)]
    if len(free) < MIN_COMMON:
        return None
    xa = np.array([b_a[i] for i in free], dtype=np.float64)
    xb = np.array([b_b[i] for i in free], dtype=np.float64)
    sd_a, sd_b = float(np.std(xa, ddof=1)), float(np.std(xb, ddof=1))
    if not sd_b > 0:
        return None
    slope = sd_a / sd_b
    intercept = float(np.mean(xa) - slope * np.mean(xb))
    ba = np.array([b_a[i] for i in common], dtype=np.float64)
    bb = np.array([b_b[i] for i in common], dtype=np.float64)
    za, zb = np.asarray(to_z_a(ba)), np.asarray(to_z_b(bb))
    z_linked = np.asarray(to_z_a(slope * bb + intercept))
    resid = np.abs(z_linked - za)
    tb = slope * np.asarray(theta_b, dtype=np.float64) + intercept
    return PanelLinking(
        panel_a=names[0],
        panel_b=names[1],
        n_common=len(free),
        slope=slope,
        intercept=intercept,
        raw_drift_mean=float(np.mean(zb - za)),
        raw_drift_mean_abs=float(np.mean(np.abs(zb - za))),
        residual_drift_mean_abs=float(np.mean(resid)),
        residual_drift_max_abs=float(np.max(resid)),
        ddm_a=ddm(za),
        ddm_b=ddm(zb),
        b_theta_on_a=(float(tb.min()), float(tb.max())),
        a_theta=(float(np.min(theta_a)), float(np.max(theta_a))),
    )
