"""Power simulation for Theorem 2.3: progress hidden in a gap is invisible to any test.

The design, stated so it can be checked:

* base checkpoint A: per-item success probability from a 1PL curve on the difficulty
  axis, p_i = σ(slope·(ability − z_i)) (or user-given ``base_p``);
* improved checkpoint B: p_i + δ (clipped to [0, 1]) for items whose z lies strictly
  inside the progress interval P = [c − w/2, c + w/2], p_i elsewhere;
* each simulation draws r Bernoulli trials per item for both checkpoints and runs the
  same stratified randomisation test as :func:`progress_test` (trial scheme) at level α;
  the rejection rate over ``n_sims`` estimates the power.

If P fits in a gap, no item is touched, A and B are identical on the benchmark and the
rejection rate is α (at most; the permutation distribution is discrete) whatever r.
If P is wider than the gap, the touched items carry a fixed signal while the noise of
each item's difference shrinks like 1/√r, so the rejection rate climbs to 1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl
from numpy.typing import ArrayLike
from scipy import special

from curation.measure._gaps import largest_gaps, max_gap
from curation.measure._progress import (
    SeedLike,
    Weighting,
    check_alpha,
    check_repeats,
    item_weights,
    make_rng,
    stratum_labels,
    trial_pvalues,
)
from curation.measure._validate import as_unit_sample

_TOUCH_TOL = 1e-12
"""Items within this distance of P's ends count as outside (rounding of c ± w/2)."""


def progress_centre(z: ArrayLike, location: Literal["largest-gap"] | float) -> float:
    """Centre c of the progress interval: the largest gap's midpoint, or a given z."""
    if isinstance(location, str):
        if location != "largest-gap":
            raise ValueError(f"location must be 'largest-gap' or a number, got {location!r}")
        return largest_gaps(z, 1)[0].midpoint
    c = float(location)
    if not (math.isfinite(c) and 0.0 <= c <= 1.0):
        raise ValueError(f"location must be in [0, 1], got {location!r}")
    return c


def touched_items(z: ArrayLike, *, centre: float, width: float) -> np.ndarray:
    """Boolean mask of items strictly inside [centre − width/2, centre + width/2]."""
    zz = as_unit_sample(z)
    lo, hi = centre - 0.5 * width, centre + 0.5 * width
    return (zz > lo + _TOUCH_TOL) & (zz < hi - _TOUCH_TOL)


def contrast_widths(
    z: ArrayLike, *, inside: float = 0.5, outside: float = 2.0
) -> tuple[float, float]:
    """Two progress widths for the Theorem 2.3 contrast: ``inside``·G and ``outside``·G.

    With G the Max Gap, a width below G centred in the largest gap touches no item; a
    width above G spills over the gap's ends onto items. The outside width is capped at 1.
    """
    if not 0.0 < inside < 1.0 or outside <= 1.0:
        raise ValueError(
            f"need 0 < inside < 1 < outside, got inside={inside!r}, outside={outside!r}"
        )
    g = max_gap(z)
    return inside * g, min(1.0, outside * g)


def power_curve(
    z: ArrayLike,
    *,
    width: float | Sequence[float],
    location: Literal["largest-gap"] | float = "largest-gap",
    repeats: Sequence[int] = (1, 2, 4, 8, 16, 32),
    n_sims: int = 500,
    alpha: float = 0.05,
    delta: float = 0.3,
    ability: float = 0.5,
    slope: float = 8.0,
    base_p: ArrayLike | None = None,
    n_bins: int = 5,
    weighting: Weighting = "strata",
    n_permutations: int = 199,
    seed: SeedLike = 0,
) -> pl.DataFrame:
    """Rejection rate of the progress test, per progress width × number of repeats.

    Returns one row per (width, repeats) with columns: width, centre, progress_left,
    progress_right, n_touched (items inside the progress interval), blind (no item
    touched), repeats, n_sims, alpha, rejection_rate, mc_se (Monte-Carlo standard error).
    Use ``n_permutations + 1`` a multiple of 1/α (199 or 999 for α = 0.05) so the
    permutation test's size can reach α.
    """
    zz = as_unit_sample(z)
    widths = (
        [float(width)] if isinstance(width, int | float | np.number) else [float(w) for w in width]
    )
    if not widths or any(not (math.isfinite(w) and 0.0 < w <= 1.0) for w in widths):
        raise ValueError(f"width must be in (0, 1] (or a list of such), got {width!r}")
    reps = check_repeats(repeats)
    alpha = check_alpha(alpha)
    if isinstance(n_sims, bool) or int(n_sims) != n_sims or n_sims < 1:
        raise ValueError(f"n_sims must be a positive integer, got {n_sims!r}")
    if not (math.isfinite(delta) and 0.0 <= delta <= 1.0):
        raise ValueError(f"delta must be in [0, 1], got {delta!r}")
    if base_p is None:
        p_a = special.expit(slope * (ability - zz))
    else:
        p_a = np.asarray(base_p, dtype=np.float64)
        if p_a.shape != zz.shape or not ((p_a >= 0) & (p_a <= 1)).all():
            raise ValueError(
                f"base_p: expected {zz.shape} probabilities in [0, 1], got {p_a.shape}"
            )
    centre = progress_centre(zz, location)
    labels, e = stratum_labels(zz, n_bins=n_bins)
    v = item_weights(labels, e.size - 1, weighting)
    rng = make_rng(seed)
    rows = []
    for w in widths:
        touched = touched_items(zz, centre=centre, width=w)
        p_b = np.clip(p_a + delta * touched, 0.0, 1.0)
        for r in reps:
            trials = np.full(zz.size, r, dtype=np.int64)
            k_a = rng.binomial(r, p_a, size=(int(n_sims), zz.size))
            k_b = rng.binomial(r, p_b, size=(int(n_sims), zz.size))
            pvals = trial_pvalues(
                k_a, trials, k_b, trials, v, n_permutations=int(n_permutations), rng=rng
            )
            rate = float(np.mean(pvals <= alpha))
            rows.append(
                {
                    "width": w,
                    "centre": centre,
                    "progress_left": centre - 0.5 * w,
                    "progress_right": centre + 0.5 * w,
                    "n_touched": int(touched.sum()),
                    "blind": not bool(touched.any()),
                    "repeats": r,
                    "n_sims": int(n_sims),
                    "alpha": alpha,
                    "rejection_rate": rate,
                    "mc_se": math.sqrt(rate * (1.0 - rate) / n_sims),
                }
            )
    return pl.DataFrame(rows)


def power_table(frame: pl.DataFrame) -> pl.DataFrame:
    """Wide view of :func:`power_curve`: one row per repeats, one column per width."""
    wide = frame.with_columns(
        pl.format(
            "w={} ({})",
            pl.col("width").round(3),
            pl.when(pl.col("blind")).then(pl.lit("blind")).otherwise(pl.lit("touches items")),
        ).alias("progress")
    )
    return wide.pivot(on="progress", index="repeats", values="rejection_rate").sort("repeats")
