"""One panel's difficulty in another's frame: the b with the same expected panel score.

A difficulty on the logit scale means something only against the abilities it was
fitted with. If the panel's abilities are really ``theta_to`` and not ``theta_from``,
an item fitted at b (with every model answering equally often) sits at the b' with
Σ_j σ(theta_to_j − b') = Σ_j σ(theta_from_j − b): the same expected score. In the
middle of the panel b' ≈ b; towards the ends only the strongest (weakest) models
answer anything, so b' follows their abilities' error. The simulated world places its
truth with it (:class:`~curation.calibrate.SimulatedWorld`), and BenchFill's intervals
draw abilities around the fitted ones and move every item with it
(:mod:`curation.fill._uncertainty`).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

_LIMIT = 60.0
_STEPS = 60
"""Bisection halvings of [−60, 60]: ~1e-16 logits, below float resolution."""
_CELLS = 1 << 21
"""Draw × item × model cells per chunk (~16 MB per temporary)."""


def equal_score_b(b: ArrayLike, theta_from: ArrayLike, theta_to: ArrayLike) -> NDArray[np.float64]:
    """b' with Σ σ(theta_to − b') = Σ σ(theta_from − b), elementwise over ``b``.

    ``theta_to`` may be 2-D (draws × models): the result is then draws × len(b).
    Vectorised bisection (the score is monotone in b'), so it cannot fail to converge;
    memory is bounded by chunks of ``b``. Many draws of many items are better served by
    a grid of b and interpolation (the map is smooth).
    """
    b = np.asarray(b, dtype=np.float64)
    t_from = np.asarray(theta_from, dtype=np.float64)
    t_to = np.asarray(theta_to, dtype=np.float64)
    draws = t_to.reshape(-1, t_to.shape[-1])  # (D, J)
    flat = b.reshape(-1)
    out = np.empty((draws.shape[0], flat.size))
    step = max(1, _CELLS // (draws.shape[0] * draws.shape[1]))  # bounded memory
    for start in range(0, flat.size, step):
        out[:, start : start + step] = _solve(flat[start : start + step], t_from, draws)
    return out.reshape(b.shape) if t_to.ndim == 1 else out.reshape((draws.shape[0], *b.shape))


def _solve(b: np.ndarray, t_from: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """:func:`equal_score_b` of a chunk: (D, len(b)), by vectorised bisection."""
    score = (1.0 / (1.0 + np.exp(-(t_from[None, :] - b[:, None])))).sum(axis=1)
    target = np.broadcast_to(score, (draws.shape[0], score.size))
    lo = np.full(target.shape, -_LIMIT)
    hi = np.full(target.shape, _LIMIT)
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        s = (1.0 / (1.0 + np.exp(-(draws[:, None, :] - mid[:, :, None])))).sum(axis=2)
        above = s > target  # too easy: the difficulty is higher
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    return (lo + hi) / 2
