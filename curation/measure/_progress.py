"""Stratified randomisation test for "checkpoint B is better than checkpoint A" (SPEC §7).

Both checkpoints answer the same items. Under H0 ("no progress") the two checkpoints have
the same success probability on every item, so their labels are exchangeable *within
each item*:

* with per-trial data (counts and trials, or 0/1 outcomes per trial) the 2r trial
  outcomes of an item are pooled and relabelled at random: A's successes follow a
  hypergeometric law given the item's total. More re-evaluations shrink the null spread
  of an item's difference, which is why power grows with repeats (Theorem 2.3);
* with per-item success rates only, the two rates of an item are swapped at random
  (a sign flip of the difference). With one trial both schemes coincide.

Strata are bins of difficulty z. Relabelling happens within items, hence within strata;
the strata set the statistic's weights. By default (``weighting="strata"``) each
non-empty difficulty bin counts equally — the uniform target's view — so progress in a
sparse band is not drowned by a dense one; ``weighting="items"`` gives the plain score
difference. The p-value is one-sided with the +1 correction,
(1 + #{T_perm ≥ T_obs}) / (1 + n_permutations), so it is never 0 and the test is valid
at every level.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from curation.measure._validate import as_unit_sample

Weighting = Literal["strata", "items"]
SeedLike = int | np.random.Generator | None

_CHUNK_ELEMENTS = 4_000_000
"""Largest permutation block (sims × permutations × items) held in memory at once."""


@dataclass(frozen=True)
class StratumEffect:
    """One difficulty bin: its items, the checkpoints' mean success and B − A."""

    z_low: float
    z_high: float
    n_items: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    weight: float
    """Share of the test statistic this bin carries (0 for an empty bin)."""


@dataclass(frozen=True)
class ProgressResult:
    """Outcome of :func:`progress_test` (one-sided: B better than A)."""

    p_value: float
    effect: float
    """Observed statistic: weighted mean of B − A per item (weights per ``weighting``)."""
    mean_diff: float
    """Unweighted mean of B − A: the benchmark score difference."""
    n_items: int
    n_permutations: int
    weighting: str
    scheme: str
    """``trials`` (relabel trial outcomes within item) or ``rates`` (swap item rates)."""
    strata: tuple[StratumEffect, ...]

    def strata_frame(self) -> pl.DataFrame:
        return pl.DataFrame(
            [asdict(s) for s in self.strata],
            schema={
                "z_low": pl.Float64,
                "z_high": pl.Float64,
                "n_items": pl.Int64,
                "mean_a": pl.Float64,
                "mean_b": pl.Float64,
                "mean_diff": pl.Float64,
                "weight": pl.Float64,
            },
        )

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["strata"] = [asdict(s) for s in self.strata]
        return out


def make_rng(seed: SeedLike) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def stratum_labels(
    z: NDArray[np.float64], *, n_bins: int = 5, edges: ArrayLike | None = None
) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """Bin index of every item, and the bin edges (equal-width on [0, 1] by default).

    Bins are [e_k, e_{k+1}) except the last, which is closed so z = 1 has a bin.
    """
    if edges is None:
        if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
            raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}")
        e = np.linspace(0.0, 1.0, int(n_bins) + 1)
    else:
        e = np.asarray(edges, dtype=np.float64)
        if e.ndim != 1 or e.size < 2 or not np.isfinite(e).all() or not (np.diff(e) > 0).all():
            raise ValueError("edges must be a strictly increasing 1-D array of >= 2 numbers")
        if e[0] > z.min() or e[-1] < z.max():
            raise ValueError(
                f"edges [{e[0]!r}, {e[-1]!r}] do not cover z in [{z.min()!r}, {z.max()!r}]"
            )
    labels = np.clip(np.searchsorted(e, z, side="right") - 1, 0, e.size - 2)
    return labels, e


def item_weights(
    labels: NDArray[np.intp], n_strata: int, weighting: Weighting
) -> NDArray[np.float64]:
    """Per-item weights v (sum 1) of the statistic T = Σ v_i (rate_B,i − rate_A,i)."""
    n = labels.size
    if weighting == "items":
        return np.full(n, 1.0 / n)
    if weighting == "strata":
        counts = np.bincount(labels, minlength=n_strata).astype(np.float64)
        n_nonempty = np.count_nonzero(counts)
        return 1.0 / (n_nonempty * counts[labels])
    raise ValueError(f"weighting must be 'strata' or 'items', got {weighting!r}")


def _tolerance(scale: float) -> float:
    """Slack for 'T_perm ≥ T_obs' so that equal sums computed in a different order tie."""
    return 1e-10 * max(1.0, scale)


def trial_pvalues(
    k_a: NDArray[np.int64],
    n_a: NDArray[np.int64],
    k_b: NDArray[np.int64],
    n_b: NDArray[np.int64],
    v: NDArray[np.float64],
    *,
    n_permutations: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """One-sided p-values for S independent experiments (rows of ``k_a``, ``k_b``: (S, n)).

    T = Σ v_i (k_b/n_b − k_a/n_a). Given the pooled successes s_i, relabelling gives
    K_i ~ Hypergeometric(n_a + n_b, s_i, n_a) A-successes and
    T_perm = const − Σ u_i K_i with u = v (1/n_a + 1/n_b), so T_perm ≥ T_obs is
    Σ u_i K_i ≤ Σ u_i k_a,i. Each row gets its own permutations.
    """
    s = k_a + k_b
    m = n_a + n_b
    u = v * (1.0 / n_a + 1.0 / n_b)
    obs = k_a @ u
    tol = _tolerance(float(np.sum(np.abs(u) * n_a)))
    rows = k_a.shape[0]
    counts = np.zeros(rows, dtype=np.int64)
    informative = (s > 0) & (s < m)
    # Items with s ∈ {0, m} have a fixed K (0 or n_a): keep them out of the random draw.
    fixed = np.where(s >= m, n_a, 0) @ u
    if not informative.any():
        return np.ones(rows)
    cols = np.flatnonzero(informative.any(axis=0))
    s_c, m_c, na_c, u_c = s[:, cols], m[cols], n_a[cols], u[cols]
    mask = informative[:, cols]
    ngood = np.where(mask, s_c, 0)
    nbad = np.where(mask, m_c - s_c, na_c)
    # Masked cells draw K = 0 of n_a from (0 good, n_a bad): deterministic, cheap, and
    # their real (fixed) contribution is already in ``fixed``.
    per_row = max(1, _CHUNK_ELEMENTS // max(1, cols.size))
    row_chunk = max(1, min(rows, per_row))
    for r0 in range(0, rows, row_chunk):
        r1 = min(rows, r0 + row_chunk)
        g, b = ngood[r0:r1, None, :], nbad[r0:r1, None, :]
        perm_chunk = max(1, per_row // (r1 - r0))
        done = 0
        while done < n_permutations:
            p = min(perm_chunk, n_permutations - done)
            draws = rng.hypergeometric(g, b, na_c, size=(r1 - r0, p, cols.size))
            stat = draws @ u_c + fixed[r0:r1, None]
            counts[r0:r1] += np.count_nonzero(stat <= obs[r0:r1, None] + tol, axis=1)
            done += p
    return np.asarray((1.0 + counts) / (1.0 + n_permutations), dtype=np.float64)


def signflip_pvalues(
    d: NDArray[np.float64],
    v: NDArray[np.float64],
    *,
    n_permutations: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """One-sided p-values when only per-item rates are known: swap A and B per item."""
    rows, n = d.shape
    wd = d * v
    obs = wd.sum(axis=1)
    tol = _tolerance(float(np.abs(wd).sum(axis=1).max()))
    counts = np.zeros(rows, dtype=np.int64)
    per_row = max(1, _CHUNK_ELEMENTS // max(1, n))
    for r in range(rows):
        done = 0
        while done < n_permutations:
            p = min(per_row, n_permutations - done)
            signs = np.where(rng.random((p, n)) < 0.5, -1.0, 1.0)
            counts[r] += np.count_nonzero(signs @ wd[r] >= obs[r] - tol)
            done += p
    return np.asarray((1.0 + counts) / (1.0 + n_permutations), dtype=np.float64)


def _counts_and_trials(
    correct: ArrayLike, trials: ArrayLike | None, n_items: int, name: str
) -> tuple[NDArray[np.int64], NDArray[np.int64]] | NDArray[np.float64]:
    """Success counts and trials per item, or rates when trials are unknown."""
    arr = np.asarray(correct, dtype=np.float64)
    if arr.ndim not in (1, 2) or arr.shape[0] != n_items:
        raise ValueError(
            f"{name}: expected shape ({n_items},) or ({n_items}, n_trials) to match z, "
            f"got {arr.shape}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    if trials is not None:
        if arr.ndim != 1:
            raise ValueError(f"{name}: with trials given, pass success counts of shape (n,)")
        t = np.broadcast_to(np.asarray(trials), (n_items,))
        if not (np.equal(np.mod(t, 1), 0).all() and (t >= 1).all()):
            raise ValueError(f"trials for {name}: must be integers >= 1")
        if not (np.equal(np.mod(arr, 1), 0).all() and (arr >= 0).all() and (arr <= t).all()):
            raise ValueError(f"{name}: success counts must be integers in [0, trials]")
        return arr.astype(np.int64), t.astype(np.int64)
    if arr.ndim == 2:
        if arr.shape[1] == 0 or not np.isin(arr, (0.0, 1.0)).all():
            raise ValueError(f"{name}: per-trial outcomes (2-D) must be 0/1 with >= 1 trial")
        return arr.sum(axis=1).astype(np.int64), np.full(n_items, arr.shape[1], dtype=np.int64)
    if (arr < 0).any() or (arr > 1).any():
        raise ValueError(f"{name}: success rates must lie in [0, 1]")
    if np.isin(arr, (0.0, 1.0)).all():
        return arr.astype(np.int64), np.ones(n_items, dtype=np.int64)
    return arr


def progress_test(
    correct_a: ArrayLike,
    correct_b: ArrayLike,
    z: ArrayLike,
    *,
    trials: ArrayLike | tuple[ArrayLike, ArrayLike] | None = None,
    n_bins: int = 5,
    edges: ArrayLike | None = None,
    weighting: Weighting = "strata",
    n_permutations: int = 9999,
    seed: SeedLike = 0,
) -> ProgressResult:
    """Is checkpoint B better than checkpoint A on these items? (one-sided, paired)

    ``correct_a``/``correct_b`` per item (aligned with ``z``) are either success rates in
    [0, 1] (0/1 for one trial), 0/1 outcomes of shape (n_items, n_trials), or success
    counts when ``trials`` is given (an int, a per-item array, or a pair (trials_a,
    trials_b)). Strata are ``n_bins`` equal-width bins of z, or the bins between
    ``edges``. Same inputs and seed give the same p-value.
    """
    zz = as_unit_sample(z)
    n = zz.size
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations:
        raise ValueError(f"n_permutations must be an integer, got {n_permutations!r}")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations!r}")
    t_a: ArrayLike | None
    t_b: ArrayLike | None
    if isinstance(trials, tuple):
        if len(trials) != 2:
            raise ValueError("trials as a tuple must be (trials_a, trials_b)")
        t_a, t_b = trials[0], trials[1]
    else:
        t_a = t_b = trials
    a = _counts_and_trials(correct_a, t_a, n, "correct_a")
    b = _counts_and_trials(correct_b, t_b, n, "correct_b")
    labels, e = stratum_labels(zz, n_bins=n_bins, edges=edges)
    v = item_weights(labels, e.size - 1, weighting)
    rng = make_rng(seed)
    if isinstance(a, tuple) and isinstance(b, tuple):
        (k_a, n_a), (k_b, n_b) = a, b
        rate_a, rate_b = k_a / n_a, k_b / n_b
        p = trial_pvalues(
            k_a[None, :], n_a, k_b[None, :], n_b, v, n_permutations=int(n_permutations), rng=rng
        )[0]
        scheme = "trials"
    else:
        rate_a = a[0] / a[1] if isinstance(a, tuple) else a
        rate_b = b[0] / b[1] if isinstance(b, tuple) else b
        d = (rate_b - rate_a)[None, :]
        p = signflip_pvalues(d, v, n_permutations=int(n_permutations), rng=rng)[0]
        scheme = "rates"
    diff = rate_b - rate_a
    strata = []
    for k in range(e.size - 1):
        sel = labels == k
        cnt = int(sel.sum())
        strata.append(
            StratumEffect(
                z_low=float(e[k]),
                z_high=float(e[k + 1]),
                n_items=cnt,
                mean_a=float(rate_a[sel].mean()) if cnt else None,
                mean_b=float(rate_b[sel].mean()) if cnt else None,
                mean_diff=float(diff[sel].mean()) if cnt else None,
                weight=float(v[sel].sum()),
            )
        )
    return ProgressResult(
        p_value=float(p),
        effect=float(diff @ v),
        mean_diff=float(diff.mean()),
        n_items=n,
        n_permutations=int(n_permutations),
        weighting=weighting,
        scheme=scheme,
        strata=tuple(strata),
    )


def check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not (math.isfinite(alpha) and 0.0 < alpha < 1.0):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return alpha


def check_repeats(repeats: Sequence[int]) -> list[int]:
    out = []
    for r in repeats:
        if isinstance(r, bool) or int(r) != r or r < 1:
            raise ValueError(f"repeats must be positive integers, got {r!r}")
        out.append(int(r))
    if not out:
        raise ValueError("repeats: give at least one repeat count")
    return sorted(set(out))
