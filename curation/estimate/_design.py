"""Designs: which m items of a calibrated bank a new model should answer.

* ``random`` — m items uniformly at random (the baseline every design is compared with).
* ``anchor`` — tinyBenchmarks' anchor points: k-means with m clusters on the items'
  embeddings (the panel's success rates on each item, or the IRT prediction of them),
  the item nearest each centroid stands for its cluster, weight = cluster size / N.
* ``stratified`` — strata of equal size on b, proportional allocation, one random
  item per stratum by default; weight = stratum size / (N x items drawn from it).
* ``information`` — greedy: each step adds the item that most lowers the score's
  variance from the ability, mean over a grid of the panel's theta range of
  S'(theta)^2 / (prior precision + Fisher information of the subset at theta), with
  S(theta) the full-benchmark expected score. Unweighted.
* ``adaptive`` — the start of an adaptive test of m items: ``start`` items stratified
  on b (every model answers them first); the rest are chosen per model
  (:func:`curation.estimate.next_items`). Unweighted.
* ``quantile`` — the project's calibrated subsets (SPEC §6,
  :func:`curation.subsets.match_quantiles`): z (the calibration's map of b) matched
  greedily to the quantiles of a target, uniform by default. Deterministic, unweighted:
  difficulty-balanced, so its plain accuracy is not the full score.

Every design is seeded; :func:`select` is the one entry point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from curation.estimate._bank import FloatArray, ItemBank, argmin_tied, tie_keys
from curation.estimate._settings import DESIGNS, DesignName, Embedding

if TYPE_CHECKING:
    from curation.measure import TargetLike

_KMEANS_ITER = 100
_INFO_GRID = 41


@dataclass(frozen=True)
class Design:
    """A selection of items and, when the design has them, the weights that rebuild the
    full score from them (they sum to 1)."""

    design: str
    items: tuple[str, ...]
    weights: tuple[float, ...] | None = None
    seed: int = 0
    budget: int | None = None
    """Adaptive tests: items a model answers in all (``items`` are the start)."""
    block: int | None = None
    """Adaptive tests: items chosen per step after the start."""

    @property
    def m(self) -> int:
        """Items in the subset (an adaptive test's start items)."""
        return len(self.items)

    @property
    def total(self) -> int:
        """Items a model answers: the budget of an adaptive test, else m."""
        return self.budget if self.budget is not None else self.m

    @property
    def adaptive(self) -> bool:
        """An adaptive test (its items are only the start)."""
        return self.budget is not None

    def weight_map(self) -> dict[str, float] | None:
        if self.weights is None:
            return None
        return dict(zip(self.items, self.weights, strict=True))

    def to_dict(self) -> dict[str, Any]:
        return {
            "design": self.design,
            "m": self.m,
            "seed": self.seed,
            "items": list(self.items),
            "weights": None if self.weights is None else list(self.weights),
            "budget": self.budget,
            "block": self.block,
        }


def correctness_matrix(bank: ItemBank, responses: pl.DataFrame) -> FloatArray:
    """Items x panel models success rates; a missing cell gets the IRT prediction."""
    pred = bank.p(bank.theta).T  # items x models
    index = bank.index()
    models = {m: j for j, m in enumerate(bank.panel)}
    df = responses.filter(
        pl.col("item").is_in(list(index)) & pl.col("model").is_in(list(models))
    ).filter(pl.col("n_trials") > 0)
    df = df.group_by("model", "item").agg(pl.col("n_correct").sum(), pl.col("n_trials").sum())
    out = pred.copy()
    if df.height:
        ii = np.array([index[i] for i in df["item"].to_list()])
        jj = np.array([models[m] for m in df["model"].to_list()])
        out[ii, jj] = df["n_correct"].to_numpy() / df["n_trials"].to_numpy()
    return out


def _refill_empty(labels: np.ndarray, dist: FloatArray, k: int) -> None:
    """Give every empty cluster one point, in place: the point farthest from its own
    centre among clusters that keep a member after it leaves, each point moved at most
    once. (Moving "the farthest point" blindly can empty its own singleton cluster, or
    move one point to two empty clusters in turn: an empty cluster, a NaN centre.)"""
    counts = np.bincount(labels, minlength=k)
    empties = np.flatnonzero(counts == 0)
    if not empties.size:
        return
    far = dist[np.arange(labels.size), labels].copy()
    for empty in empties:
        movable = np.where(counts[labels] > 1, far, -np.inf)
        i = int(np.argmax(movable))
        counts[labels[i]] -= 1
        labels[i] = int(empty)
        counts[empty] = 1
        far[i] = -np.inf


def _kmeans(x: FloatArray, k: int, rng: np.random.Generator) -> tuple[FloatArray, np.ndarray]:
    """Lloyd's k-means with k-means++ seeding; an emptied cluster is re-seeded at the point
    farthest from its centre."""
    n = x.shape[0]
    centres = np.empty((k, x.shape[1]))
    centres[0] = x[rng.integers(n)]
    d2 = ((x - centres[0]) ** 2).sum(axis=1)
    for c in range(1, k):
        total = d2.sum()
        i = int(rng.choice(n, p=d2 / total)) if total > 0 else int(rng.integers(n))
        centres[c] = x[i]
        d2 = np.minimum(d2, ((x - centres[c]) ** 2).sum(axis=1))
    labels = np.full(n, -1)
    sq = (x**2).sum(axis=1)
    for _ in range(_KMEANS_ITER):
        dist = sq[:, None] - 2.0 * x @ centres.T + (centres**2).sum(axis=1)[None, :]
        new = np.argmin(dist, axis=1)
        _refill_empty(new, dist, k)
        if np.array_equal(new, labels):
            break
        labels = new
        for c in range(k):
            centres[c] = x[labels == c].mean(axis=0)
    return centres, labels


def _anchor(
    bank: ItemBank, m: int, rng: np.random.Generator, embedding: FloatArray
) -> tuple[list[int], list[float]]:
    # distinct embeddings only: k-means cannot make more clusters than distinct points
    _, first, inverse = np.unique(embedding, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if first.size <= m:
        # every distinct pattern is a cluster (one random member, weighted by its size);
        # the rest of the m items are random extras of weight 0
        groups = [np.flatnonzero(inverse == u) for u in range(first.size)]
        picks = [int(g[rng.integers(g.size)]) for g in groups]
        rest = rng.permutation(np.setdiff1d(np.arange(bank.n_items), picks))[: m - len(picks)]
        weights = [g.size / bank.n_items for g in groups] + [0.0] * rest.size
        return picks + [int(i) for i in rest], weights
    centres, labels = _kmeans(embedding, m, rng)
    chosen, weights = [], []
    for c in range(m):
        members = np.flatnonzero(labels == c)
        d = ((embedding[members] - centres[c]) ** 2).sum(axis=1)
        chosen.append(int(members[int(np.argmin(d))]))
        weights.append(members.size / bank.n_items)
    return chosen, weights


def _allocate(m: int, share: FloatArray, caps: np.ndarray) -> np.ndarray:
    """m items over strata in proportion to ``share`` (largest remainders), each at
    most its size ``caps``."""
    quota = m * share / share.sum()
    alloc: np.ndarray = np.minimum(np.floor(quota).astype(int), caps)
    gap = quota - np.floor(quota)
    while int(alloc.sum()) < m:  # the largest remainders first, then by share
        room = alloc < caps
        key = np.where(room, gap, -np.inf)
        take = np.argsort(-key, kind="stable")[: min(m - int(alloc.sum()), int(room.sum()))]
        alloc[take] += 1
        gap = np.where(room, share, -np.inf)
    return alloc


def _stratified(
    bank: ItemBank, m: int, rng: np.random.Generator, strata: int | None
) -> tuple[list[int], list[float]]:
    n = bank.n_items
    # ties in b (equal item totals under a 1PL) in random order, b equal up to the fit's
    # last bits counting as tied (else the BLAS kernel or library version decides them)
    order = np.lexsort((rng.random(n), tie_keys(bank.b)))
    groups = np.array_split(order, min(strata or m, m))
    sizes = np.array([g.size for g in groups])
    alloc = _allocate(m, sizes.astype(np.float64), sizes)
    chosen: list[int] = []
    weights: list[float] = []
    for g, take in zip(groups, alloc, strict=True):
        if take:
            chosen.extend(int(i) for i in rng.choice(g, size=int(take), replace=False))
            weights.extend([g.size / (n * int(take))] * int(take))
    return chosen, weights


def _information(bank: ItemBank, m: int, rng: np.random.Generator) -> list[int]:
    lo, hi = float(bank.theta.min()), float(bank.theta.max())
    grid = np.linspace(lo, hi, _INFO_GRID)
    dp, info = bank.slope_info(grid)  # grid x items
    slope = dp.mean(axis=1)  # dS/dtheta
    sd = max(float(np.std(bank.theta, ddof=1)), 0.05)
    total = np.full(grid.size, 1.0 / sd**2)
    w = slope**2
    order = rng.permutation(bank.n_items)  # ties (equal items) broken at random
    info = info[:, order]
    free = np.ones(bank.n_items, dtype=bool)
    chosen: list[int] = []
    for _ in range(m):
        loss = (w[:, None] / (total[:, None] + info)).mean(axis=0)
        loss[~free] = np.inf
        best = argmin_tied(loss)
        free[best] = False
        total = total + info[:, best]
        chosen.append(int(order[best]))
    return chosen


def _quantile(bank: ItemBank, m: int, target: TargetLike) -> list[int]:
    from curation.subsets import match_quantiles

    if bank.calibration is None:
        raise ValueError("design 'quantile' needs the bank's calibration (its map of b to z)")
    z = bank.calibration.to_z(bank.b)
    subset = match_quantiles(bank.items, z, target=target, m=m)
    index = bank.index()
    return [index[i] for i in subset.items]


def select(
    design: DesignName,
    bank: ItemBank,
    m: int,
    *,
    seed: int = 0,
    responses: pl.DataFrame | None = None,
    embedding: Embedding = "correctness",
    strata: int | None = None,
    target: TargetLike = "uniform",
    start: int = 20,
    block: int = 10,
) -> Design:
    """m items of ``bank`` chosen by ``design`` (``random``, ``anchor``, ``stratified``,
    ``information``, ``quantile``), seeded. ``responses``: the panel's long table, the
    correctness embedding of ``anchor`` (without it, or with ``embedding="irt"``, the IRT
    prediction of each item's success over the panel stands in). ``target``: the
    distribution ``quantile`` matches. ``start``, ``block``: an ``adaptive`` test's
    start items (stratified on b, at most m) and step size. Items are returned in bank
    order.
    """
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {list(DESIGNS)}, got {design!r}")
    if not 1 <= m <= bank.n_items:
        raise ValueError(f"m must be between 1 and the bank's {bank.n_items} items, got {m}")
    listed = bank
    bank = bank.in_id_order()  # the draws follow the items, not the fit's listing order
    rng = np.random.default_rng(seed)
    weights: list[float] | None = None
    if design == "random":
        chosen = [int(i) for i in rng.choice(bank.n_items, size=m, replace=False)]
    elif design == "anchor":
        if embedding == "correctness" and responses is not None:
            emb = correctness_matrix(bank, responses)
        else:
            emb = bank.p(bank.theta).T
        chosen, weights = _anchor(bank, m, rng, emb)
    elif design == "stratified":
        chosen, weights = _stratified(bank, m, rng, strata)
    elif design == "adaptive":
        if start < 1 or block < 1:
            raise ValueError(
                f"an adaptive test needs start >= 1 and block >= 1, got {start}, {block}"
            )
        chosen, _ = _stratified(bank, min(start, m), rng, None)
    elif design == "quantile":
        chosen = _quantile(bank, m, target)
    else:
        chosen = _information(bank, m, rng)
    index = listed.index()
    order = np.argsort([index[bank.items[c]] for c in chosen], kind="stable")
    items = tuple(bank.items[chosen[i]] for i in order)
    w = None if weights is None else tuple(float(weights[i]) for i in order)
    if design == "adaptive":
        return Design(design, items, None, seed, budget=m, block=block)
    return Design(design=design, items=items, weights=w, seed=seed)
