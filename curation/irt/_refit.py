"""Modes-only 1PL refits on a fixed dense design: the parametric bootstrap's inner loop.

The bootstrap refits the same design (models, items, trials, missing cells) hundreds of
times with different counts. :func:`curation.irt._map.fit_map_1pl` is the reference, and
this is the same Newton iteration — same objective, priors, sum-to-zero identification,
start, full-step/Armijo rule and stopping rule, so it lands on the same mode up to the
tolerance (the 1PL posterior is convex; a test checks it) — with what a refit does not
need taken out:

* the layout is built once per design, not once per replicate;
* the probabilities come from the same ``exp(-|η|)`` as the objective's softplus at the
  accepted point, so each Newton iteration evaluates one exponential and one log1p over
  the matrix instead of those plus a tanh;
* no Laplace standard errors (the spread of the replicates is the uncertainty).

On the bundled panels (40–48 models × 721–1,319 items, where the batched fitter of
:mod:`curation.irt._batch` is slower than one fit at a time) this halves a refit's CPU.
"""

from __future__ import annotations

import numpy as np

from curation.irt._map import _ARMIJO, _FULL_STEP, sum_zero_basis
from curation.irt._numeric import cholesky_solve, logit
from curation.irt._settings import FitSettings


def _eval(
    k: np.ndarray, n: np.ndarray, eta: np.ndarray, th: np.ndarray, b: np.ndarray, s: FitSettings
) -> tuple[float, np.ndarray]:
    """Negative log posterior at ``eta`` and the cell probabilities, from one exponential.

    softplus(η) = log1p(e) + max(η, 0) and σ(η) = 1/(1+e) for η ≥ 0, e/(1+e) below, with
    e = exp(−|η|): both stable for any η.
    """
    e = np.exp(-np.abs(eta))
    inv = 1.0 / (1.0 + e)
    p = np.where(eta >= 0.0, inv, e * inv)
    np.log1p(e, out=e)
    e += np.maximum(eta, 0.0)  # softplus(η)
    ll = float(np.vdot(k, eta) - np.vdot(n, e))  # dot products: no cell-sized temporaries
    prior = 0.5 * float(th @ th) / s.theta_sd**2 + 0.5 * float(b @ b) / s.b_sd**2
    return -ll + prior, p


class DenseRefitter:
    """Refits of a dense trials matrix ``n`` (models × items; 0 = missing) to new counts."""

    def __init__(self, n: np.ndarray, settings: FitSettings) -> None:
        self.n = np.asarray(n, dtype=np.float64)
        m = self.n.shape[0]
        if m < 2:
            raise ValueError(f"an IRT fit needs at least 2 models, got {m}")
        self.settings = settings
        self.q = sum_zero_basis(m)
        self.row_n = self.n.sum(axis=1)
        self.item_n = self.n.sum(axis=0)

    def _start(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:func:`curation.irt._map._start` on the dense layout (smoothed proportions)."""
        th = logit((k.sum(axis=1) + 0.5) / (self.row_n + 1.0))
        th -= th.mean()
        th_bar = (th @ self.n) / np.maximum(self.item_n, 1e-12)
        b = th_bar - logit((k.sum(axis=0) + 0.5) / (self.item_n + 1.0))
        return th, b

    def fit(self, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool]:
        """Abilities, difficulties and whether the fit converged, for counts ``k``."""
        s, n, q = self.settings, self.n, self.q
        m = n.shape[0]
        vt, vb = s.theta_sd**-2, s.b_sd**-2
        eye = vt * np.eye(m - 1)
        th, b = self._start(k)
        eta = th[:, None] - b[None, :]
        f, p = _eval(k, n, eta, th, b, s)
        it = 0
        while it < s.max_iter:
            it += 1
            np_ = n * p
            r = k - np_
            w = np_ * (1.0 - p)
            g_th = -r.sum(axis=1) + vt * th
            g_b = r.sum(axis=0) + vb * b
            d = w.sum(axis=0) + vb
            schur = np.diag(w.sum(axis=1)) - (w / d[None, :]) @ w.T
            rhs = -(q.T @ g_th) - q.T @ (w @ (g_b / d))
            dphi = cholesky_solve(q.T @ schur @ q + eye, rhs)
            if dphi is None:  # cannot happen for a convex objective with priors; be loud
                raise FloatingPointError("1PL Schur complement is not positive definite")
            dth = q @ dphi
            db = (-g_b + dth @ w) / d
            max_step = max(float(np.max(np.abs(dth), initial=0.0)), float(np.max(np.abs(db))))
            if max_step < _FULL_STEP:
                th, b = th + dth, b + db
                eta = th[:, None] - b[None, :]
                f, p = _eval(k, n, eta, th, b, s)
            else:
                slope = float(g_th @ dth + g_b @ db)
                t = 1.0
                while True:
                    th_n, b_n = th + t * dth, b + t * db
                    eta_n = th_n[:, None] - b_n[None, :]
                    f_n, p_n = _eval(k, n, eta_n, th_n, b_n, s)
                    if f_n <= f + _ARMIJO * t * slope or t < 1e-10:
                        break
                    t *= 0.5
                th, b, eta, f, p = th_n, b_n, eta_n, f_n, p_n
                max_step *= t
            if max_step < s.tol:
                return th, b, True
        return th, b, False
