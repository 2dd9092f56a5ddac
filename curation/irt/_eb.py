"""Empirical-Bayes priors on a grid: a smooth "truth" for the parametric bootstrap.

A parametric bootstrap needs a simulated world whose truth looks like the real one. The
plug-in truth (the MAP estimates) does not: with one trial per cell a 1PL b̂ depends only
on the item's total score, so the plug-in difficulties sit on a lattice of a few dozen
values, and a bootstrap world built on it has the same lattice as its truth — it cannot
see that the lattice itself inflates every gap (the issue measured ~2.2× on Max Gap).
Drawing the truth from a posterior under a *smooth* prior fitted to the data (Efron's
g-modelling: log g = spline, maximised over the marginal likelihood) gives continuous
difficulties whose spread matches the data: items with the same score get different
true b, all-solved items get a tail of plausible values instead of one prior-set number,
and the panel's abilities get the same treatment, so the extremes that anchor the scale
are not taken as known.

Everything is on fixed grids, so posteriors are exact up to the grid (no MCMC).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.interpolate import BSpline
from scipy.optimize import minimize
from scipy.special import expit, log_expit

GRID_POINTS = 121
"""Grid values per axis; spacing ~0.12 logits on a typical b grid, far below a posterior SD."""
B_DF = 10
"""Spline degrees of freedom of the item prior: smooth, but free to be skewed or bimodal."""
THETA_DF = 6
"""The panel has only a few dozen models, so its prior gets fewer degrees of freedom."""
RIDGE = 1e-3
"""A small penalty on the spline coefficients keeps the fit finite in empty tails."""
_CHUNK = 16  # truths per batch of item posteriors (bounds memory: chunk × items × grid)


def logsumexp(x: np.ndarray, axis: int | None = None) -> NDArray[np.float64]:
    """log Σ exp(x) with the max shifted out (scipy's is several times slower on small rows)."""
    top = np.max(x, axis=axis, keepdims=True)
    out: NDArray[np.float64] = np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True)) + top
    return out.squeeze() if axis is None else np.squeeze(out, axis=axis)


def _basis(grid: np.ndarray, df: int) -> NDArray[np.float64]:
    """Cubic B-spline design matrix (grid × df) with equally spaced knots over the grid."""
    lo, hi = float(grid[0]), float(grid[-1])
    deg = 3
    inner = np.linspace(lo, hi, df - deg + 1)
    knots = np.r_[[lo] * deg, inner, [hi] * deg]
    x = np.clip(grid, lo, np.nextafter(hi, lo))
    design: NDArray[np.float64] = BSpline.design_matrix(x, knots, deg).toarray()
    return design


def fit_log_prior(loglik: np.ndarray, grid: np.ndarray, *, df: int) -> NDArray[np.float64]:
    """Log prior weights on ``grid`` maximising Σ_i log Σ_g exp(loglik[i, g]) · g(g).

    ``loglik`` (units × grid) is each unit's log-likelihood at every grid value. The prior
    is log g = basis @ α normalised over the grid, with a ridge penalty on α (g-modelling).
    """
    basis = _basis(grid, df)
    n_units = loglik.shape[0]
    # The marginal likelihood of unit i is Σ_g L[i, g] g(g) with L = exp(loglik): a
    # matrix-vector product once L is scaled row by row (the scale is constant in α), so
    # each evaluation costs two products instead of an exp over units × grid.
    top = loglik.max(axis=1)
    lik = np.exp(loglik - top[:, None])

    def objective(alpha: np.ndarray) -> tuple[float, np.ndarray]:
        lg = basis @ alpha
        lg -= logsumexp(lg)
        g = np.exp(lg)
        marginal = np.maximum(lik @ g, np.finfo(np.float64).tiny)
        post_sum = g * (lik.T @ (1.0 / marginal))  # Σ_i posterior weights per grid value
        grad = -(basis.T @ (post_sum - n_units * g)) + 2.0 * RIDGE * alpha
        value = -float(np.sum(np.log(marginal)) + top.sum()) + RIDGE * float(alpha @ alpha)
        return value, grad

    res = minimize(objective, np.zeros(basis.shape[1]), jac=True, method="L-BFGS-B")
    lg: NDArray[np.float64] = basis @ res.x
    return lg - logsumexp(lg)


def posterior(loglik: np.ndarray, log_prior: np.ndarray) -> NDArray[np.float64]:
    """Row-normalised posterior weights on the grid (units × grid)."""
    joint: NDArray[np.float64] = loglik + log_prior[None, :]
    joint -= joint.max(axis=1, keepdims=True)
    np.exp(joint, out=joint)
    joint /= joint.sum(axis=1, keepdims=True)
    return joint


def draw_grid(
    grid: np.ndarray, weights: np.ndarray, rng: np.random.Generator
) -> NDArray[np.float64]:
    """One draw per unit from its grid posterior, jittered uniformly within the grid cell.

    The jitter makes the draws continuous: two items with the same posterior never get
    exactly the same value, as two real items would not.
    """
    cum = np.cumsum(weights, axis=1)
    u = rng.random(weights.shape[0]) * cum[:, -1]
    idx = np.minimum((cum < u[:, None]).sum(axis=1), grid.size - 1)
    step = grid[1] - grid[0]
    draws: NDArray[np.float64] = grid[idx] + (rng.random(idx.size) - 0.5) * step
    return draws


def item_loglik(
    k: np.ndarray,
    n: np.ndarray,
    theta: np.ndarray,
    a: np.ndarray | None,
    grid: np.ndarray,
    c: np.ndarray | None = None,
) -> NDArray[np.float64]:
    """Binomial log-likelihood of each item's counts at every grid value of b (items × grid).

    ``k``, ``n`` are dense model × item counts (``n == 0`` for a missing cell); ``a`` the
    2PL/3PL discriminations (None for 1PL); ``c`` the 3PL floors (P = c + (1 − c) σ). The
    binomial constant is dropped.
    """
    if c is not None:
        slope = np.ones(k.shape[1]) if a is None else a
        out = np.empty((k.shape[1], grid.size))
        log_q = np.log1p(-c)[None, :, None]
        for start in range(0, grid.size, 32):
            g = grid[start : start + 32]
            eta = slope[None, :, None] * (theta[:, None, None] - g[None, None, :])
            log_p = np.log(c[None, :, None] + (1.0 - c[None, :, None]) * np.exp(log_expit(eta)))
            part = k[:, :, None] * log_p + (n - k)[:, :, None] * (log_q + log_expit(-eta))
            out[:, start : start + g.size] = part.sum(axis=0)
        return out
    if a is None:
        eta = theta[:, None] - grid[None, :]
        loglik: NDArray[np.float64] = k.T @ log_expit(eta) + (n - k).T @ log_expit(-eta)
        return loglik
    out = np.empty((k.shape[1], grid.size))
    for start in range(0, grid.size, 32):  # chunk the grid: models × items × chunk at once
        g = grid[start : start + 32]
        eta = a[None, :, None] * (theta[:, None, None] - g[None, None, :])
        part = k[:, :, None] * log_expit(eta) + (n - k)[:, :, None] * log_expit(-eta)
        out[:, start : start + g.size] = part.sum(axis=0)
    return out


NORMAL_MODELS = 256
"""From this many models a 2PL item's likelihood of b given the abilities is taken as
normal (:func:`item_loglik_normal`): it is a sum over hundreds of models, so its shape is
normal to well within the grid's spacing, and the exact grid costs models × items × grid
log-sigmoids per bootstrap replicate (4,030 × 250 × 121: ~10 s each). Below it, and
always for 1PL (one matrix product), the exact grid."""
_NEWTON_STEPS = 25
_NEWTON_TOL = 1e-10


def item_loglik_normal(
    k: np.ndarray,
    n: np.ndarray,
    theta: np.ndarray,
    a: np.ndarray,
    grid: np.ndarray,
    start: np.ndarray,
) -> NDArray[np.float64]:
    """:func:`item_loglik` of a 2PL with the likelihood of each b taken as normal at its
    mode given ``theta`` (items × grid, up to a constant per item, which no posterior or
    prior fit on the grid sees).

    The mode is found by Newton from ``start`` (the fit's b), all items at once, O(models
    × items) per step. An item every model solved (or none did) has no mode: its row is
    exact (:func:`item_loglik` on those columns, a handful).
    """
    kk, nn = k.sum(axis=0), n.sum(axis=0)
    bounded = (kk <= 0) | (kk >= nn)
    b = np.where(bounded, 0.0, start).astype(np.float64)
    curv = np.ones_like(b)
    for _ in range(_NEWTON_STEPS):
        eta = a[None, :] * (theta[:, None] - b[None, :])
        p = expit(eta)
        grad = a * (n * p).sum(axis=0) - a * kk  # d loglik / d b
        curv = a * a * (n * p * (1.0 - p)).sum(axis=0)  # - d2 loglik / d b2
        # at most one logit a step: a near-bounded item's likelihood is flat far out
        step = np.where(bounded, 0.0, np.clip(grad / np.maximum(curv, 1e-300), -1.0, 1.0))
        b += step
        if float(np.max(np.abs(step), initial=0.0)) < _NEWTON_TOL:
            break
    out: NDArray[np.float64] = -0.5 * curv[:, None] * (grid[None, :] - b[:, None]) ** 2
    if bounded.any():
        cols = np.flatnonzero(bounded)
        out[cols] = item_loglik(k[:, cols], n[:, cols], theta, a[cols], grid)
    return out


@dataclass(frozen=True)
class SmoothTruth:
    """Smooth empirical-Bayes priors for a panel's abilities and a bank's difficulties.

    ``draw`` returns one plausible truth (θ, b) given the data: θ from each model's
    posterior (normal likelihood from its MAP estimate and standard error) under the
    ability prior, then b from each item's exact grid posterior given that θ under the
    difficulty prior. Discriminations ``a`` (2PL/3PL) and floors ``c`` (3PL: b is then
    the curve's location) are held at their estimates.
    """

    k: np.ndarray
    n: np.ndarray
    a: np.ndarray | None
    theta_grid: np.ndarray
    theta_post: np.ndarray
    b_grid: np.ndarray
    b_log_prior: np.ndarray
    b_start: np.ndarray | None = None
    """A 2PL panel of :data:`NORMAL_MODELS` or more: the fit's b, where each item's
    normal likelihood is centred from (None: the exact grid likelihood)."""
    c: np.ndarray | None = None
    """3PL: each item's guessing floor (None: no floor)."""

    @classmethod
    def fit(
        cls,
        k: np.ndarray,
        n: np.ndarray,
        theta: np.ndarray,
        theta_se: np.ndarray,
        a: np.ndarray | None = None,
        b: np.ndarray | None = None,
        c: np.ndarray | None = None,
    ) -> SmoothTruth:
        """The priors, from the counts and the fit (abilities and their SEs; 2PL: a, and
        b, the start of the normal likelihoods of a large panel)."""
        lo, hi = float(theta.min()), float(theta.max())
        span = hi - lo
        # Difficulties: wide enough that items far outside the panel are in the tails.
        b_grid = np.linspace(lo - 5.0, hi + 5.0, GRID_POINTS)
        # a large 2PL panel: normal item likelihoods at the mode (the exact grid costs ~10 s
        # per replicate at 4,030 x 250); a floor (3PL) keeps the exact grid
        normal = a is not None and b is not None and c is None and k.shape[0] >= NORMAL_MODELS
        b_start = np.asarray(b, dtype=np.float64) if normal else None
        if normal:
            assert a is not None and b_start is not None
            loglik = item_loglik_normal(k, n, theta, a, b_grid, b_start)
        else:
            loglik = item_loglik(k, n, theta, a, b_grid, c)
        b_log_prior = fit_log_prior(loglik, b_grid, df=B_DF)
        theta_grid = np.linspace(lo - 0.5 * span, hi + 0.5 * span, GRID_POINTS)
        se = np.maximum(theta_se, 1e-6)
        t_loglik = -0.5 * ((theta[:, None] - theta_grid[None, :]) / se[:, None]) ** 2
        t_log_prior = fit_log_prior(t_loglik, theta_grid, df=THETA_DF)
        return cls(
            k=k,
            n=n,
            a=a,
            theta_grid=theta_grid,
            theta_post=posterior(t_loglik, t_log_prior),
            b_grid=b_grid,
            b_log_prior=b_log_prior,
            b_start=b_start,
            c=c,
        )

    def draw(self, rng: np.random.Generator, size: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """``size`` truths: abilities (size × models) and difficulties (size × items)."""
        m, i = self.k.shape
        post_t = np.broadcast_to(self.theta_post[None], (size, m, self.theta_grid.size))
        theta = draw_grid(self.theta_grid, post_t.reshape(size * m, -1), rng).reshape(size, m)
        theta -= theta.mean(axis=1, keepdims=True)  # the fits' identification; z ignores it
        b = np.empty((size, i))
        for start in range(0, size, _CHUNK):
            rows = slice(start, start + _CHUNK)
            ll = self._loglik(theta[rows])
            chunk = ll.shape[0]
            post = posterior(ll.reshape(chunk * i, -1), self.b_log_prior)
            b[rows] = draw_grid(self.b_grid, post, rng).reshape(chunk, i)
        return theta, b

    def _loglik(self, theta: np.ndarray) -> NDArray[np.float64]:
        """Item log-likelihoods on the b grid for each row of abilities (rows × items × grid)."""
        if self.a is not None and self.b_start is not None:
            a, start = self.a, self.b_start
            return np.stack(
                [item_loglik_normal(self.k, self.n, t, a, self.b_grid, start) for t in theta]
            )
        if self.a is not None or self.c is not None:
            return np.stack(
                [item_loglik(self.k, self.n, t, self.a, self.b_grid, self.c) for t in theta]
            )
        eta = theta[:, :, None] - self.b_grid[None, None, :]
        solved = np.matmul(self.k.T, log_expit(eta))
        failed = np.matmul((self.n - self.k).T, log_expit(-eta))
        loglik: NDArray[np.float64] = solved + failed
        return loglik
