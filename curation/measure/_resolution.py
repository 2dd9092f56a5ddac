"""What the data can resolve on the difficulty axis, and where the panel anchors it.

Two properties of the *measurement*, not of the benchmark, shape every gap figure:

* **Resolution.** With one trial per cell a 1PL z depends only on an item's total score,
  so z takes a few dozen values and neighbouring values are one score step apart; a gap
  between two consecutive score levels is the axis's resolution, not an empty stretch of
  difficulty. The *score step* of an item is how far its z moves with one more or one
  fewer correct answer (from :func:`curation.irt.score_steps`); the benchmark's
  **resolution** is the median central step, (z(k − 1) − z(k + 1)) / 2, over the items
  strictly inside (0, 1). A gap is **resolved** only if it is wider than one score step
  of the items on its two edges (the larger of the step from the left edge's items
  towards harder and the step from the right edge's items towards easier): only then
  does the data say that no item sits inside it.
* **Anchoring.** The panel scale maps the weakest model's ability to z = 0 and the
  strongest's to z = 1 and clips beyond, so an item easier than the weakest model (it
  sits below the panel) gets z = 0 whatever its true difficulty, and one harder than the
  strongest gets z = 1. Many clipped items make DDM mostly a statement about the panel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from curation.measure._gaps import Gap

_LEVEL_TOL = 1e-9
"""z values closer than this are one level (they come from the same score)."""


@dataclass(frozen=True)
class Panel:
    """The abilities that anchor the scale: weakest and strongest model, in logits."""

    theta_min: float
    theta_max: float
    weakest: str
    strongest: str
    n_models: int

    @property
    def span(self) -> float:
        return self.theta_max - self.theta_min


@dataclass(frozen=True)
class Resolution:
    """Levels, score steps, clipped items and panel span of one benchmark's z."""

    n_items: int
    n_levels: int
    resolution: float
    """Median central score step in z over the items inside (0, 1) (NaN if none)."""
    coarsest_step: float
    """Largest one-sided score step over items inside (0, 1) (NaN if none)."""
    coarsest_at: float
    """z of the item with that step."""
    n_clipped_low: int
    n_clipped_high: int
    panel: Panel
    trials_per_cell: float
    """Median trials per observed (model, item) cell."""
    scale: str = "panel"
    z: NDArray[np.float64] = field(repr=False, default_factory=lambda: np.zeros(0))
    step_up: NDArray[np.float64] = field(repr=False, default_factory=lambda: np.zeros(0))
    """Per item: z(one fewer correct) − z (NaN for a none-solved item)."""
    step_down: NDArray[np.float64] = field(repr=False, default_factory=lambda: np.zeros(0))
    """Per item: z − z(one more correct) (NaN for an all-solved item)."""

    @classmethod
    def from_steps(
        cls,
        z: NDArray[np.float64],
        z_easier: NDArray[np.float64],
        z_harder: NDArray[np.float64],
        *,
        panel: Panel,
        trials_per_cell: float,
        scale: str = "panel",
    ) -> Resolution:
        """From each item's z and its z with one more (easier) / fewer (harder) correct."""
        z = np.asarray(z, dtype=np.float64)
        up = np.asarray(z_harder, dtype=np.float64) - z
        down = z - np.asarray(z_easier, dtype=np.float64)
        inside = (z > 0.0) & (z < 1.0)
        central = np.nanmean(np.stack([up, down]), axis=0) if z.size else z
        resolution = float(np.nanmedian(central[inside])) if np.any(inside) else math.nan
        one_sided = np.fmax(up, down)
        if np.any(inside & np.isfinite(one_sided)):
            idx = int(np.nanargmax(np.where(inside, one_sided, np.nan)))
            coarsest, at = float(one_sided[idx]), float(z[idx])
        else:
            coarsest, at = math.nan, math.nan
        clipped = scale == "panel"
        return cls(
            n_items=int(z.size),
            n_levels=int(np.unique(np.round(z / _LEVEL_TOL)).size),
            resolution=resolution,
            coarsest_step=coarsest,
            coarsest_at=at,
            n_clipped_low=int(np.sum(z <= 0.0)) if clipped else 0,
            n_clipped_high=int(np.sum(z >= 1.0)) if clipped else 0,
            panel=panel,
            trials_per_cell=float(trials_per_cell),
            scale=scale,
            z=z,
            step_up=up,
            step_down=down,
        )

    @property
    def share_clipped_low(self) -> float:
        return self.n_clipped_low / self.n_items if self.n_items else 0.0

    @property
    def share_clipped_high(self) -> float:
        return self.n_clipped_high / self.n_items if self.n_items else 0.0

    def gap_step(self, gap: Gap) -> float:
        """The score step at a gap's edges: the larger of the left edge items' step towards
        harder and the right edge items' step towards easier (0 where no item or no step)."""
        steps = [0.0]
        for edge, arr in ((gap.z_left, self.step_up), (gap.z_right, self.step_down)):
            at = np.abs(self.z - edge) <= _LEVEL_TOL
            vals = arr[at]
            vals = vals[np.isfinite(vals)]
            if vals.size:
                steps.append(float(vals.max()))
        return max(steps)

    def resolves(self, gap: Gap) -> bool:
        """Whether the gap is wider than one score step at its edges."""
        return gap.width > self.gap_step(gap) * (1.0 + 1e-9) + 1e-12

    def cannot_resolve(self, threshold: float) -> bool:
        """True if somewhere inside (0, 1) one score step is at least ``threshold``."""
        return math.isfinite(self.coarsest_step) and self.coarsest_step >= threshold

    def to_metrics(self) -> dict[str, Any]:
        """JSON-ready (no NaN) summary for metrics files and cards."""

        def num(x: float) -> float | None:
            return None if not math.isfinite(x) else float(x)

        p = self.panel
        return {
            "n_items": self.n_items,
            "n_levels": self.n_levels,
            "resolution": num(self.resolution),
            "coarsest_step": num(self.coarsest_step),
            "coarsest_at": num(self.coarsest_at),
            "n_clipped_low": self.n_clipped_low,
            "n_clipped_high": self.n_clipped_high,
            "share_clipped_low": self.share_clipped_low,
            "share_clipped_high": self.share_clipped_high,
            "trials_per_cell": self.trials_per_cell,
            "scale": self.scale,
            "panel": {
                "n_models": p.n_models,
                "theta_min": p.theta_min,
                "theta_max": p.theta_max,
                "span": p.span,
                "weakest": p.weakest,
                "strongest": p.strongest,
            },
        }


def resolution_of_fit(
    cells: Any,
    calibration: Any,
    b: NDArray[np.float64],
    a: NDArray[np.float64] | None = None,
    c: NDArray[np.float64] | None = None,
    b_curve: NDArray[np.float64] | None = None,
) -> Resolution:
    """:class:`Resolution` of a fitted benchmark.

    ``cells`` are the encoded responses (:func:`curation.irt._data.encode`), ``calibration``
    the fit's :class:`curation.irt.Calibration` (its abilities, stored scale and b prior),
    ``b`` (and ``a`` for 2PL/3PL, ``c`` and ``b_curve`` for 3PL) the items' estimates in
    ``cells.items`` order.
    """
    from curation.irt import score_steps

    theta = np.array([calibration.abilities[m] for m in cells.models], dtype=np.float64)
    b_sd = float(calibration.settings.get("b_sd", 3.0))
    easier, harder = score_steps(
        cells, theta, np.asarray(b, dtype=np.float64), a, b_sd=b_sd, c=c, b_curve=b_curve
    )
    lo, hi = int(np.argmin(theta)), int(np.argmax(theta))
    panel = Panel(
        theta_min=float(theta[lo]),
        theta_max=float(theta[hi]),
        weakest=str(cells.models[lo]),
        strongest=str(cells.models[hi]),
        n_models=len(cells.models),
    )

    def to_z(x: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.full_like(x, np.nan)
        ok = np.isfinite(x)
        out[ok] = calibration.to_z(x[ok])
        return out

    return Resolution.from_steps(
        calibration.to_z(np.asarray(b, dtype=np.float64)),
        to_z(easier),
        to_z(harder),
        panel=panel,
        trials_per_cell=float(np.median(cells.n)),
        scale=str(calibration.scale.get("method", "panel")),
    )
