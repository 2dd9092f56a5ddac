"""Adaptive tests: which items a model should answer next, given what it answered so far.

A fixed subset spends most of its items where a given model has little to learn from
them (a strong model on easy items, a weak one on hard items), so the ability behind
the estimate stays uncertain. An adaptive test (computerised adaptive testing; for LLMs,
fluid benchmarking) starts every model on the same ``start`` items (stratified on b),
then in blocks of ``block`` items picks those that most lower the expected variance of
the full-score estimate at the model's current ability posterior, until ``m`` items are
answered. The estimate is the same as for any items (:func:`curation.estimate.estimate`):
the likelihood does not depend on how the items were chosen, given the answers.

The criterion, greedy over the unseen items (as the static ``information`` design, but
on this model's posterior instead of the panel's range)::

    loss(i) = sum_g w_g S'(theta_g)^2 / (precision_g + info_i(theta_g))

with w the posterior on a grid, S the full-benchmark expected score, ``precision`` the
posterior precision plus the information of the items already picked in this block.

On the bundled benchmarks, held out 5-fold (``benchmarks/bench_subsets.py``), 20 start
items + blocks of 10 up to 100 cut the error of a stratified 100-item subset on
math-l5 and crux; on GSM8K, where most models solve almost every item, it did not.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from curation.estimate._bank import FloatArray, ItemBank, argmin_tied
from curation.estimate._estimate import Observed, theta_posterior

CRITERION_POINTS = 41
"""Grid points the criterion is averaged over (the posterior's grid, coarsened)."""


def _coarse(grid: FloatArray, w: FloatArray, points: int) -> tuple[FloatArray, FloatArray]:
    """The posterior on at most ``points`` points: each block of the fine grid by its
    weighted mean and total weight."""
    if grid.size <= points:
        return grid, w
    blocks = np.array_split(np.arange(grid.size), points)
    mass = np.array([w[b].sum() for b in blocks])
    centre = np.array(
        [w[b] @ grid[b] / m if m > 0 else grid[b].mean() for b, m in zip(blocks, mass, strict=True)]
    )
    return centre, mass


def next_items(
    bank: ItemBank,
    obs: Observed,
    k: int,
    *,
    allowed: Iterable[int] | None = None,
    grid_points: int = 401,
) -> np.ndarray:
    """Positions (in ``bank``) of the ``k`` unseen items that most lower the expected
    variance of the full-score estimate at ``obs``' ability posterior, best first.
    ``allowed``: positions to choose from (default: every unseen item). Deterministic:
    ties go to the first item id. Fewer than ``k`` when fewer are free."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    grid, w = theta_posterior(bank, obs, grid_points)
    mean = float(w @ grid)
    var = max(float(w @ (grid - mean) ** 2), 1e-6)
    g, wg = _coarse(grid, w, CRITERION_POINTS)
    free = np.zeros(bank.n_items, dtype=bool)
    if allowed is None:
        free[:] = True
    else:
        free[np.fromiter(allowed, dtype=np.int64)] = True
    free[obs.idx] = False
    order = bank.id_order()
    cand: np.ndarray = order[free[order]]  # in id order: ties go to the first id
    if cand.size == 0:
        return cand
    dp, info_all = bank.slope_info(g)  # grid x items (a 3PL's floor included)
    slope = dp.mean(axis=1)  # S'(theta)
    info = info_all[:, cand]  # grid x candidates
    total = np.full(g.size, 1.0 / var)
    weight = wg * slope**2
    taken = np.zeros(cand.size, dtype=bool)
    chosen: list[int] = []
    for _ in range(min(k, cand.size)):
        loss = weight @ (1.0 / (total[:, None] + info))
        loss[taken] = np.inf
        best = argmin_tied(loss)
        taken[best] = True
        total = total + info[:, best]
        chosen.append(int(cand[best]))
    return np.array(chosen, dtype=np.int64)


def run_adaptive(
    bank: ItemBank,
    full: Observed,
    start: np.ndarray,
    m: int,
    block: int,
    *,
    grid_points: int = 401,
) -> np.ndarray:
    """The positions an adaptive test of ``m`` items gives a model whose answers on every
    item are ``full`` (validation: the held-out model "answers" each block from its
    recorded responses; only items it has a response on can be chosen): the start items,
    then blocks of ``block`` by :func:`next_items`."""
    answered = set(full.idx.tolist())
    seen = [int(i) for i in start if int(i) in answered]
    lookup = {int(i): j for j, i in enumerate(full.idx)}
    while len(seen) < m:
        rows = np.array([lookup[i] for i in seen], dtype=np.int64)
        order = np.argsort(full.idx[rows], kind="stable")
        rows = rows[order]
        obs = Observed(idx=full.idx[rows], k=full.k[rows], n=full.n[rows])
        picked = next_items(
            bank, obs, min(block, m - len(seen)), allowed=full.idx, grid_points=grid_points
        )
        if picked.size == 0:
            break
        seen.extend(int(i) for i in picked)
    return np.array(sorted(seen), dtype=np.int64)
