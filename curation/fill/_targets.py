"""Where to insert next (SPEC §4 step 1), and what insertions do to the gaps.

A single item placed at the midpoint of a gap halves it, which is the most one
insertion can shrink that gap; so the default target is the midpoint of the current
largest gap, recomputed after every insertion.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from curation.measure import Gap, largest_gaps, top_k_sum


@dataclass(frozen=True)
class Target:
    """One target difficulty z* and the gap it sits in."""

    z: float
    gap: Gap | None
    """The gap whose midpoint it is (None for an explicit target)."""


def gap_containing(z: ArrayLike, z_star: float) -> Gap:
    """The gap of ``z`` (ends of [0, 1] included) in which ``z_star`` lies."""
    zs = np.sort(np.asarray(z, dtype=np.float64))
    i = int(np.searchsorted(zs, z_star, side="right"))
    left = float(zs[i - 1]) if i > 0 else 0.0
    right = float(zs[i]) if i < zs.size else 1.0
    return Gap(left, right)


def next_target(
    z_now: ArrayLike,
    index: int,
    *,
    mode: str | Sequence[float],
    z_start: ArrayLike,
    insertions: int,
) -> Target:
    """Target number ``index`` (0-based) given the track's current difficulties ``z_now``.

    * ``largest``: midpoint of the largest gap of ``z_now`` (recomputed each time);
    * ``top_k``: midpoint of the ``index``-th largest gap of ``z_start`` (fixed plan);
    * a list of z values: the ``index``-th value.
    """
    if not isinstance(mode, str):
        z_star = float(mode[index])
        return Target(z_star, gap_containing(z_now, z_star))
    if mode == "largest":
        gap = largest_gaps(z_now, 1)[0]
        return Target(gap.midpoint, gap)
    if mode == "top_k":
        plan = largest_gaps(z_start, insertions)
        if index >= len(plan):
            raise ValueError(f"top_k: only {len(plan)} gaps, asked for target {index + 1}")
        return Target(plan[index].midpoint, plan[index])
    raise ValueError(f"unknown target mode {mode!r}")


def n_targets(mode: str | Sequence[float], insertions: int) -> int:
    """How many insertions a target mode asks for."""
    return insertions if isinstance(mode, str) else len(mode)


def top_k_reduction(z_before: ArrayLike, z_after: ArrayLike, k: int = 3) -> float:
    """Reduction of the Top-k Sum in percent: 100·(T_k(before) − T_k(after)) / T_k(before)."""
    before = top_k_sum(z_before, k)
    after = top_k_sum(z_after, k)
    return 100.0 * (before - after) / before if before > 0 else 0.0


def oracle_insertions(
    z: ArrayLike, *, mode: str | Sequence[float] = "largest", insertions: int = 3
) -> list[Target]:
    """The oracle: each item placed exactly at its target, gaps recomputed in between."""
    z_start = np.asarray(z, dtype=np.float64)
    z_now = z_start.copy()
    out = []
    for i in range(n_targets(mode, insertions)):
        target = next_target(z_now, i, mode=mode, z_start=z_start, insertions=insertions)
        out.append(target)
        z_now = np.append(z_now, target.z)
    return out
