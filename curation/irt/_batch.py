"""Many 1PL MAP fits at once: the same posterior mode as :func:`fit_map_1pl`, batched.

A parametric bootstrap refits the model to many simulated matrices that share one design
(same models, items, trials and missing cells) and differ only in the counts. On a small
design one fit is a handful of cheap Newton steps and a Python loop over replicates spends
most of its time in per-call overhead; stacking the replicates on a leading axis runs each
step as a few array operations for all of them. The objective, priors, identification
(sum-to-zero abilities), start, step rule (full Newton steps once in the quadratic region,
Armijo backtracking before) and stopping rule are those of :func:`fit_map_1pl`, so both
land on the same mode up to the tolerance (the 1PL posterior is convex); a test checks it.

Only the dense layout is batched (a missing cell is a cell with zero trials).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from curation.irt._map import _ARMIJO, _FULL_STEP, logistic, softplus, sum_zero_basis
from curation.irt._numeric import logit
from curation.irt._settings import FitSettings


@dataclass(frozen=True)
class BatchFit:
    """Modes of a batch of 1PL fits: ``theta`` (R, M), ``b`` (R, I), ``converged`` (R,)."""

    theta: np.ndarray
    b: np.ndarray
    converged: np.ndarray
    iterations: int


def _objective(
    k: np.ndarray, n: np.ndarray, eta: np.ndarray, th: np.ndarray, b: np.ndarray, s: FitSettings
) -> NDArray[np.float64]:
    """Negative log posterior per replicate (up to the constant binomial term)."""
    ll = (k * eta).sum(axis=(1, 2)) - (n * softplus(eta)).sum(axis=(1, 2))
    prior = 0.5 * (th * th).sum(axis=1) / s.theta_sd**2 + 0.5 * (b * b).sum(axis=1) / s.b_sd**2
    f: NDArray[np.float64] = -ll + prior
    return f


def _start(k: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The single fit's start (smoothed proportions), per replicate."""
    th = logit((k.sum(axis=2) + 0.5) / (n.sum(axis=1) + 1.0))
    th -= th.mean(axis=1, keepdims=True)
    item_n = n.sum(axis=0)
    th_bar = (th @ n) / np.maximum(item_n, 1e-12)
    b = th_bar - logit((k.sum(axis=1) + 0.5) / (item_n + 1.0))
    return th, b


def fit_map_1pl_batch(k: np.ndarray, n: np.ndarray, settings: FitSettings) -> BatchFit:
    """MAP 1PL fits of counts ``k`` (R, M, I) on one design ``n`` (M, I) of trials.

    A cell with ``n == 0`` is missing. Returns the modes only: a bootstrap needs no
    standard errors (the spread of the replicates is the uncertainty).
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if k.ndim != 3 or k.shape[1:] != n.shape:
        raise ValueError(f"k must have shape (R, {n.shape[0]}, {n.shape[1]}), got {k.shape}")
    r_count, m, _ = k.shape
    if m < 2:
        raise ValueError(f"an IRT fit needs at least 2 models, got {m}")
    q = sum_zero_basis(m)
    vt, vb = settings.theta_sd**-2, settings.b_sd**-2
    th, b = _start(k, n)
    eta = th[:, :, None] - b[:, None, :]
    f = _objective(k, n, eta, th, b, settings)
    active = np.ones(r_count, dtype=bool)
    diag = np.arange(m)
    it = 0
    while it < settings.max_iter and active.any():
        it += 1
        idx = np.flatnonzero(active)
        ka, tha, ba = k[idx], th[idx], b[idx]
        p = logistic(eta[idx])
        np_ = n * p
        res = ka - np_
        w = np_ * (1.0 - p)
        g_th = -res.sum(axis=2) + vt * tha
        g_b = res.sum(axis=1) + vb * ba
        d = w.sum(axis=1) + vb
        schur = -np.matmul(w / d[:, None, :], w.transpose(0, 2, 1))
        schur[:, diag, diag] += w.sum(axis=2)
        s_mat = q.T @ schur @ q + vt * np.eye(m - 1)
        rhs = -(g_th @ q) - np.matmul(w, (g_b / d)[:, :, None])[:, :, 0] @ q
        dth = np.linalg.solve(s_mat, rhs[:, :, None])[:, :, 0] @ q.T
        db = (-g_b + np.matmul(dth[:, None, :], w)[:, 0, :]) / d
        step = np.maximum(np.abs(dth).max(axis=1), np.abs(db).max(axis=1))
        slope = (g_th * dth).sum(axis=1) + (g_b * db).sum(axis=1)
        t = np.ones(idx.size)
        f_a = f[idx]
        th_n, b_n = tha + dth, ba + db
        eta_n = th_n[:, :, None] - b_n[:, None, :]
        f_n = _objective(ka, n, eta_n, th_n, b_n, settings)
        # Backtrack, replicate by replicate, where the full step is not yet safe.
        search = step >= _FULL_STEP
        todo = search & (f_n > f_a + _ARMIJO * t * slope)
        while todo.any():
            t[todo] *= 0.5
            sel = np.flatnonzero(todo)
            th_n[sel] = tha[sel] + t[sel, None] * dth[sel]
            b_n[sel] = ba[sel] + t[sel, None] * db[sel]
            eta_n[sel] = th_n[sel][:, :, None] - b_n[sel][:, None, :]
            f_n[sel] = _objective(ka[sel], n, eta_n[sel], th_n[sel], b_n[sel], settings)
            todo = search & (f_n > f_a + _ARMIJO * t * slope) & (t >= 1e-10)
        th[idx], b[idx], eta[idx], f[idx] = th_n, b_n, eta_n, f_n
        active[idx[step * t < settings.tol]] = False
    return BatchFit(theta=th, b=b, converged=~active, iterations=it)
