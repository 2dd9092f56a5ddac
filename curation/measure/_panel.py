"""Panel uncertainty: what another panel of as many similar models would measure.

The within-panel intervals (bootstrap, self-checked) hold the panel fixed: they answer
"what is this benchmark's DDM *as this panel measures it*". A user comparing with another
lab's figure needs the other question — another panel of N similar models. Two answers,
from :mod:`curation.irt._panel`:

* the panel bootstrap: the models resampled with replacement and refitted; the
  ``level`` interval of each metric over the resamples (percentile offsets from their
  median, times √2: another panel's figure carries its own error as well as this one's),
  each resample's plug-in moved by the within-panel bias correction so that it is the
  figure the report would print — "another panel of N similar models would give DDM in
  [a, b]";
* leave one model out: each metric's range over the refits without one model, and the
  model whose absence moves DDM most (the panel's most influential member).

A resampled panel repeats some models and misses others, so its spread includes the
within-panel noise too; it is the wider, and the honest, figure for "another panel".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from curation.irt import PanelRefits
from curation.measure._posterior import METRIC_NAMES, Interval, _interval, _per_draw
from curation.measure._targets import TargetLike


@dataclass(frozen=True)
class LeaveOneOut:
    """Each metric's [min, max] over the leave-one-model-out refits, and who moves DDM most."""

    ranges: dict[str, tuple[float, float]]
    most_influential: str
    """The model whose absence moves DDM furthest from the full panel's."""
    ddm_shift: float
    """That model's |ΔDDM|."""

    def to_metrics(self) -> dict[str, object]:
        return {
            **{name: {"low": lo, "high": hi} for name, (lo, hi) in self.ranges.items()},
            "most_influential_model": self.most_influential,
            "ddm_shift": self.ddm_shift,
        }


@dataclass(frozen=True)
class PanelUncertainty:
    """Panel-bootstrap intervals (``None`` when skipped) and the leave-one-out ranges."""

    n_models: int
    replicates: int
    intervals: dict[str, Interval] | None
    loo: LeaveOneOut | None
    skipped: str | None = None
    """Why the panel bootstrap did not run (e.g. ``max_refit_cells``), if it did not."""

    def to_metrics(self) -> dict[str, object]:
        out: dict[str, object] = {"n_models": self.n_models, "replicates": self.replicates}
        if self.intervals is not None:
            for name, iv in self.intervals.items():
                out[name] = {
                    "estimate": iv.point, "low": iv.low, "high": iv.high, "level": iv.level
                }  # fmt: skip
        out["loo"] = None if self.loo is None else self.loo.to_metrics()
        out["skipped"] = self.skipped
        return out

    def sentence(self, metric: str = "ddm", label: str = "DDM") -> str | None:
        """ "another panel of N similar models would give DDM in [a, b]" (None if not run)."""
        if self.intervals is None:
            return None
        iv = self.intervals[metric]
        return (
            f"another panel of {self.n_models} similar models would give {label} in "
            f"[{iv.low:.3f}, {iv.high:.3f}] ({iv.level:.0%}, {self.replicates} resampled panels)"
        )


def _metrics(z: NDArray[np.float64], target: TargetLike) -> dict[str, NDArray[np.float64]]:
    zs = np.sort(z, axis=1)
    return {name: _per_draw(zs, name, target) for name in METRIC_NAMES}


PREDICTION = float(np.sqrt(2.0))
"""Another panel's figure differs from this one's by the difference of two independent
panels' errors: √2 times one panel's spread (tests/measure/test_panel.py)."""


def _prediction(values: NDArray[np.float64], level: float) -> Interval:
    """Where another panel's figure falls: the resamples' percentile offsets from their
    median scaled by :data:`PREDICTION` (the median is the
    point; clipped to [0, 1])."""
    iv = _interval(values, level)
    mid = iv.point
    low = mid - PREDICTION * (mid - iv.low)
    high = mid + PREDICTION * (iv.high - mid)
    return Interval(
        mean=iv.mean,
        low=float(np.clip(low, 0.0, 1.0)),
        high=float(np.clip(high, 0.0, 1.0)),
        level=level,
        estimate=mid,
    )


def panel_uncertainty(
    z_hat: NDArray[np.float64],
    models: tuple[str, ...],
    *,
    resampled: PanelRefits | None,
    loo: PanelRefits | None,
    target: TargetLike = "uniform",
    level: float = 0.9,
    skipped: str | None = None,
    shifts: Mapping[str, float] | None = None,
) -> PanelUncertainty:
    """Metric intervals over resampled panels and ranges over leave-one-out panels.

    ``shifts`` (metric → within-panel estimate minus plug-in): the bias correction the
    within-panel bootstrap applied, applied to every resampled panel's plug-in too, so the
    interval is of the figure another panel's report would print.
    """
    intervals = None
    if resampled is not None and resampled.refits < 2:
        skipped = skipped or "fewer than 2 resampled panels had a scale"
        resampled = None
    if resampled is not None:
        values = _metrics(resampled.z, target)
        shift = shifts or {}
        intervals = {
            name: _prediction(v + shift.get(name, 0.0), level) for name, v in values.items()
        }
    out_loo = None
    if loo is not None and loo.refits:
        dropped = _metrics(loo.z, target)
        full = float(_per_draw(np.sort(z_hat)[None, :], "ddm", target)[0])
        moved = np.abs(dropped["ddm"] - full)
        j = int(np.argmax(moved))
        left_out = set(range(len(models))) - set(loo.panels[j])
        out_loo = LeaveOneOut(
            ranges={name: (float(v.min()), float(v.max())) for name, v in dropped.items()},
            most_influential=models[left_out.pop()],
            ddm_shift=float(moved[j]),
        )
    return PanelUncertainty(
        n_models=len(models),
        replicates=0 if resampled is None else resampled.refits,
        intervals=intervals,
        loo=out_loo,
        skipped=skipped,
    )
