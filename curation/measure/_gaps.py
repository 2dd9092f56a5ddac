"""Coverage gaps: intervals of the difficulty axis that hold no item (SPEC §2).

The ends of [0, 1] count, so n items give n + 1 gaps whose widths sum to 1. Progress
that lands inside a gap cannot move the score (Theorem 2.3), which is why every gap is
reported as an interval [z_L, z_R] and not only by its width.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from curation.measure._validate import as_unit_sample
from curation.report.format import interval


@dataclass(frozen=True)
class Gap:
    """One empty interval [z_left, z_right] of the difficulty axis."""

    z_left: float
    z_right: float

    @property
    def width(self) -> float:
        return self.z_right - self.z_left

    @property
    def midpoint(self) -> float:
        """Where a single inserted item shrinks this gap the most (SPEC §4)."""
        return 0.5 * (self.z_left + self.z_right)

    def label(self, digits: int = 3) -> str:
        return interval(self.z_left, self.z_right, digits)


def _gap_arrays(z: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Left and right ends of the n + 1 gaps, sorted by width descending (ties: by z_left).

    Widths are right − left, so the widths telescope to exactly 1 up to rounding.
    """
    zs = np.sort(as_unit_sample(z))
    edges = np.concatenate([[0.0], zs, [1.0]])
    left, right = edges[:-1], edges[1:]
    order = np.lexsort((left, -(right - left)))
    return left[order], right[order]


def gaps(z: ArrayLike) -> pl.DataFrame:
    """Every gap as a row (z_left, z_right, width), widest first.

    There are always n + 1 rows: z_(1) − 0, the n − 1 inner gaps and 1 − z_(n); tied items
    give zero-width gaps. Rows of equal width are ordered by z_left (stable).
    """
    left, right = _gap_arrays(z)
    return pl.DataFrame({"z_left": left, "z_right": right, "width": right - left})


def largest_gaps(z: ArrayLike, k: int = 5) -> list[Gap]:
    """The ``k`` widest gaps as :class:`Gap` objects, widest first (fewer if n + 1 < k)."""
    k = _check_k(k)
    left, right = _gap_arrays(z)
    return [Gap(float(lo), float(hi)) for lo, hi in zip(left[:k], right[:k], strict=True)]


def max_gap(z: ArrayLike) -> float:
    """G(B): the width of the widest gap, ends of [0, 1] included."""
    left, right = _gap_arrays(z)
    return float(right[0] - left[0])


def top_k_sum(z: ArrayLike, k: int) -> float:
    """Sum of the ``k`` widest gaps (all n + 1 gaps, i.e. 1.0, if k > n + 1)."""
    k = _check_k(k)
    left, right = _gap_arrays(z)
    return float(np.sum((right - left)[:k]))


def _check_k(k: int) -> int:
    if isinstance(k, bool) or int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return int(k)


def gap_widths_sorted(zs_sorted: NDArray[np.float64]) -> NDArray[np.float64]:
    """The n + 1 gap widths (in axis order) for each row of sorted samples (rows, n)."""
    rows = zs_sorted.shape[0]
    edges = np.concatenate([np.zeros((rows, 1)), zs_sorted, np.ones((rows, 1))], axis=1)
    return np.diff(edges, axis=1)
