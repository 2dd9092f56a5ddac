"""How far one score step moves an item: the resolution of a fitted difficulty axis.

Given the panel's abilities (and, for 2PL, the item's discrimination), an item's MAP b
solves a one-dimensional equation that depends on its responses only through its total
correct count k_i: a·(Σ_j n_ij σ(a(θ_j − b)) − k_i) = b / b_sd². So with one trial per
cell a 1PL puts every item with the same score (and the same answering models) at the
same b, and consecutive scores are one lattice step apart. Solving the same equation at
k_i + 1 and k_i − 1 gives the difficulty the item would have had with one more or one
fewer correct answer: the smallest change in difficulty the data can express there.

A 3PL item sits on the axis at its 1PL-equivalent location (:mod:`curation.irt._floor`),
which is a function of the panel's expected score on it, so its steps are that
location at one more and one fewer expected correct answer.
"""

from __future__ import annotations

import numpy as np

from curation.irt._data import Cells
from curation.irt._map import logistic

_NEWTON_STEPS = 60


def solve_b(
    k_total: np.ndarray,
    cells: Cells,
    theta: np.ndarray,
    a: np.ndarray | None,
    b_sd: float,
    start: np.ndarray,
) -> np.ndarray:
    """Each item's MAP b with abilities (and a) fixed, at the total scores ``k_total``.

    The score equation is strictly decreasing in b (the prior makes it so even for an
    all- or none-solved item), so safeguarded Newton from ``start`` converges.
    """
    vb = b_sd**-2
    slope = np.ones(cells.n_items) if a is None else np.asarray(a, dtype=np.float64)
    b = np.array(start, dtype=np.float64)
    th = theta[cells.mi]
    for _ in range(_NEWTON_STEPS):
        p = logistic(slope[cells.ii] * (th - b[cells.ii]))
        expected = np.bincount(cells.ii, weights=cells.n * p, minlength=cells.n_items)
        info = np.bincount(cells.ii, weights=cells.n * p * (1.0 - p), minlength=cells.n_items)
        g = slope * (expected - k_total) - vb * b
        h = slope * slope * info + vb
        step = np.clip(g / h, -2.0, 2.0)  # g decreases in b: b += g / |g'|
        b += step
        if np.max(np.abs(step)) < 1e-10:
            break
    return b


def score_steps(
    cells: Cells,
    theta: np.ndarray,
    b: np.ndarray,
    a: np.ndarray | None = None,
    *,
    b_sd: float = 3.0,
    c: np.ndarray | None = None,
    b_curve: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Difficulty (logits) of each item with one more and one fewer correct answer.

    Returns ``(b_easier, b_harder)``; NaN where the score cannot move that way (an
    all-solved item cannot get one more right, a none-solved one fewer). ``theta``,
    ``b``, ``a`` and ``b_sd`` are the fit's (b is only the Newton start); a 3PL fit also
    gives its floors ``c`` and curve locations ``b_curve`` (``b`` is then the axis
    location, see the module doc).
    """
    k = np.bincount(cells.ii, weights=cells.k, minlength=cells.n_items)
    n = np.bincount(cells.ii, weights=cells.n, minlength=cells.n_items)
    if c is not None and b_curve is not None:
        from curation.irt._floor import expected_panel_score, invert_panel_score

        score = expected_panel_score(theta, b_curve, a, c)
        easier = invert_panel_score(theta, np.minimum(score + 1.0, theta.size - 1e-9))
        harder = invert_panel_score(theta, np.maximum(score - 1.0, 1e-9))
    else:
        easier = solve_b(np.minimum(k + 1.0, n), cells, theta, a, b_sd, b)
        harder = solve_b(np.maximum(k - 1.0, 0.0), cells, theta, a, b_sd, b)
    easier[k >= n] = np.nan
    harder[k <= 0] = np.nan
    return easier, harder
