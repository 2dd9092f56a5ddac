"""Blind intervals (Theorem 2.3): where progress of a given width cannot move the score.

Progress confined to an interval P = [c − w/2, c + w/2] changes the success probability
only of items whose z lies in P's interior. If P fits inside a gap [z_L, z_R]
(z_L ≤ c − w/2 and c + w/2 ≤ z_R) no item is touched, the two checkpoints are
indistinguishable on this benchmark, and any level-α test has power α however many
re-evaluations are run. That is possible exactly in the gaps of width ≥ w.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numpy.typing import ArrayLike

from curation.measure._gaps import _gap_arrays
from curation.report.format import interval


@dataclass(frozen=True)
class BlindInterval:
    """A gap [left, right] wide enough to hide progress of width ``progress_width``.

    Every placement [s, s + w] with ``left ≤ s ≤ right − w`` is invisible; equivalently the
    progress centre c can be anywhere in ``centre_range``. The union of all invisible
    placements is the whole gap [left, right].
    """

    left: float
    right: float
    progress_width: float

    @property
    def gap_width(self) -> float:
        return self.right - self.left

    @property
    def slack(self) -> float:
        """How far an invisible placement can slide: gap width − w (≥ 0)."""
        return max(0.0, self.gap_width - self.progress_width)

    @property
    def centre_range(self) -> tuple[float, float]:
        """Centres c of the invisible placements: [left + w/2, right − w/2]."""
        half = 0.5 * self.progress_width
        lo, hi = self.left + half, self.right - half
        return (lo, max(lo, hi))

    @property
    def start_range(self) -> tuple[float, float]:
        """Left ends s of the invisible placements [s, s + w]: [left, right − w]."""
        return (self.left, max(self.left, self.right - self.progress_width))

    def label(self, digits: int = 3) -> str:
        return interval(self.left, self.right, digits)


_TOL = 1e-12
"""Widths are differences of floats (0.5 − 0.3 < 0.2): compare with this slack."""


def blind_intervals(z: ArrayLike, width: float) -> list[BlindInterval]:
    """Every gap [z_L, z_R] with z_R − z_L ≥ ``width``, widest first (ties by z_L).

    Each :class:`BlindInterval` carries the gap's ends and the progress width; its
    ``start_range`` / ``centre_range`` give the invisible sub-placements. An empty list
    means every placement of width ``width`` touches at least one item. Ends of [0, 1]
    count as gap ends, as in :func:`gaps`. Widths are compared with a 1e-12 tolerance so
    that rounding (0.5 − 0.3 < 0.2) does not drop a gap of exactly ``width``.
    """
    w = float(width)
    if not (math.isfinite(w) and 0.0 < w <= 1.0):
        raise ValueError(f"width must be in (0, 1], got {width!r}")
    left, right = _gap_arrays(z)
    return [
        BlindInterval(float(lo), float(hi), w)
        for lo, hi in zip(left, right, strict=True)
        if hi - lo >= w - _TOL
    ]
