"""Held-out cells: choosing between models by how well they predict cells they never saw.

One home for what the mirt stage (choosing the number of dimensions d) and annotate
(choosing 1PL / 2PL / 3PL) both need:

* :func:`keep_trainable` — a held-out cell is put back where its item, then its model,
  would keep fewer than ``min_train`` training cells (a parameter fitted on nothing is
  a prior draw, and scoring it says nothing about the model);
* :func:`cell_folds` — every observed cell in one of K seeded folds (cell-wise K-fold:
  each cell is held out exactly once, so all of them are scored);
* :func:`rank_heldout` — the one-standard-error rule over candidates ordered from the
  simplest: the best candidate by mean held-out log likelihood per cell, and the
  simplest whose shortfall from it is within ``se_rule`` paired standard errors (an
  extra parameter must earn its keep).

Scores are per cell (binomial log likelihood of its counts), so two candidates are
compared on the same cells and the paired standard error of their difference is that of
a mean over cells. Cells are not independent, though: those of one item share its
estimated parameters, those of one model its ability, so a per-cell standard error
overstates how sure the comparison is (on the bundled panels by 1.5-2x). ``groups``
makes it cluster-robust over crossed factors (Cameron, Gelbach & Miller's multi-way
variance: the sum of the one-way cluster variances less the per-cell one).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


def keep_trainable(
    held: np.ndarray,
    mi: np.ndarray,
    ii: np.ndarray,
    n_models: int,
    n_items: int,
    min_train: int = 2,
) -> NDArray[np.bool_]:
    """``held`` (one flag per observed cell) with cells put back where an item, then a
    model, would keep fewer than ``min_train`` training cells."""
    held = np.array(held, dtype=bool)
    for index, size in ((ii, n_items), (mi, n_models)):
        train = np.bincount(index[~held], minlength=size)
        short = train < min_train
        if short.any():
            held &= ~short[index]
    return held


def cell_folds(n_cells: int, folds: int, seed: int) -> NDArray[np.uint8]:
    """A seeded fold (0..folds-1) for each of ``n_cells`` cells, uniformly at random."""
    if not 2 <= folds <= 255:
        raise ValueError(f"folds must be in 2..255, got {folds}")
    rng = np.random.default_rng(seed)
    out: NDArray[np.uint8] = rng.integers(0, folds, size=n_cells, dtype=np.uint8)
    return out


def binomial_cell_loglik(k: np.ndarray, n: np.ndarray, p: np.ndarray) -> NDArray[np.float64]:
    """log P(k correct of n | p) per cell, including the binomial coefficient."""
    from scipy.special import gammaln, xlog1py, xlogy

    p = np.clip(p, 1e-15, 1.0 - 1e-15)
    const = gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)
    out: NDArray[np.float64] = const + xlogy(k, p) + xlog1py(n - k, -p)
    return out


@dataclass(frozen=True)
class HeldoutRanking:
    """Candidates (simplest first) scored on the same held-out cells."""

    means: tuple[float, ...]
    """Mean held-out log likelihood per cell (higher is better)."""
    gaps: tuple[float, ...]
    """The best candidate's mean minus each one's (>= 0)."""
    gap_ses: tuple[float, ...]
    """Paired standard error of each gap (0 for the best)."""
    best: int
    chosen: int
    """The simplest candidate within ``se_rule`` paired standard errors of the best."""


def paired_se(diff: np.ndarray, groups: Sequence[np.ndarray] | None = None) -> float:
    """Standard error of ``diff.mean()``: per cell, or cluster-robust over ``groups`` (one
    integer label array per crossed factor, e.g. the item and the model of each cell)."""
    n = diff.size
    if n < 2:
        return 0.0
    per_cell = float(diff.std(ddof=1) / np.sqrt(n))
    if not groups:
        return per_cell
    centred = diff - diff.mean()
    total = -(per_cell**2)
    for g in groups:
        sums = np.bincount(g, weights=centred)
        k = int(np.count_nonzero(np.bincount(g)))
        total += float(sums @ sums) * k / max(k - 1, 1) / n**2
    # a multi-way variance can come out below the per-cell one on small samples: never less
    return float(np.sqrt(max(total, per_cell**2)))


def rank_heldout(
    per_cell: Sequence[np.ndarray],
    se_rule: float,
    groups: Sequence[np.ndarray] | None = None,
) -> HeldoutRanking:
    """The one-standard-error rule over candidates ordered from the simplest.

    ``per_cell[c]``: candidate c's held-out log likelihood of each cell (the same cells
    for every candidate); ``groups``: cluster labels of those cells (:func:`paired_se`).
    """
    if not per_cell:
        raise ValueError("no candidates to rank")
    if se_rule < 0:
        raise ValueError(f"se_rule must be >= 0, got {se_rule}")
    means = [float(v.mean()) for v in per_cell]
    best = max(range(len(means)), key=lambda c: means[c])
    gaps, ses = [], []
    for c, v in enumerate(per_cell):
        diff = per_cell[best] - v
        ses.append(paired_se(diff, groups) if c != best else 0.0)
        gaps.append(float(diff.mean()))
    chosen = min(c for c in range(len(means)) if gaps[c] <= se_rule * ses[c])
    return HeldoutRanking(tuple(means), tuple(gaps), tuple(ses), best, chosen)
