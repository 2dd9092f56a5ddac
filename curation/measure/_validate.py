"""Input checks shared by every metric: difficulties are a non-empty 1-D sample in [0, 1].

All metrics live on the normalised axis (SPEC §3.4); a value outside [0, 1] means the
calibration was skipped or the wrong column was passed, so it is an error, never clipped.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def as_unit_sample(z: ArrayLike, *, name: str = "z") -> NDArray[np.float64]:
    """Return ``z`` as a 1-D float64 array, checking it is non-empty, finite and in [0, 1]."""
    try:
        arr = np.asarray(z, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected numbers, got {type(z).__name__} ({exc})") from None
    if arr.ndim == 0:
        raise ValueError(f"{name}: expected a 1-D array of difficulties, got a scalar")
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of difficulties, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty benchmark (no items); every metric needs at least one z")
    bad = ~np.isfinite(arr)
    if bad.any():
        idx = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name}: {int(bad.sum())} value(s) are NaN or infinite (first at index {idx})"
        )
    out = (arr < 0.0) | (arr > 1.0)
    if out.any():
        idx = int(np.flatnonzero(out)[0])
        raise ValueError(
            f"{name}: {int(out.sum())} value(s) outside [0, 1] (first: {name}[{idx}] = "
            f"{arr[idx]!r}); difficulties must be normalised to [0, 1] first"
        )
    return arr


def as_draws(z_draws: ArrayLike, *, name: str = "z_draws") -> NDArray[np.float64]:
    """Return posterior draws as a (n_draws, n_items) float64 array in [0, 1]."""
    arr = np.asarray(z_draws, dtype=np.float64)
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected shape (n_draws, n_items), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name}: needs at least one draw and one item, got shape {arr.shape}")
    as_unit_sample(arr.ravel(), name=name)
    return arr


def check_level(level: float) -> float:
    """Credible level in (0, 1)."""
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return level
