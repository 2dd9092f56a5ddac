"""Small elementwise functions of the fits, in numpy alone.

scipy.special and scipy.linalg cost ~0.4 s each to import, more than a fit of a real
panel takes; the fitting path (``from curation.irt import fit``) uses only these.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray


def expit(x: np.ndarray) -> NDArray[np.float64]:
    """1 / (1 + e^-x), accurate in both tails (the form scipy uses): never exactly 0 or 1
    where the true value is representable."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    pos = x >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-x[pos]))
    e = np.exp(x[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def logit(p: np.ndarray) -> NDArray[np.float64]:
    """log(p / (1 − p))."""
    p = np.asarray(p, dtype=np.float64)
    out: NDArray[np.float64] = np.log(p) - np.log1p(-p)
    return out


def log_factorials(n_max: int) -> np.ndarray:
    """log k! for k = 0..n_max (exact to the last digit of math.lgamma; counts are small)."""
    return np.array([math.lgamma(k + 1.0) for k in range(n_max + 1)], dtype=np.float64)


def cholesky_solve(s: np.ndarray, rhs: np.ndarray) -> np.ndarray | None:
    """Solve s x = rhs for a symmetric positive-definite s; None when s is not."""
    if s.size == 0:
        return np.zeros(0)
    try:
        low = np.linalg.cholesky(s)
    except np.linalg.LinAlgError:
        return None
    return np.linalg.solve(low.T, np.linalg.solve(low, rhs))
