"""Warm-started leave-one-model-out refits (the cheap path of ``loo_stability``).

Dropping one model of a dozen or more moves every estimate a little, so the full fit,
less that model, is an excellent start: the abilities of the remaining models
re-centred to mean 0 and the items' b shifted by the same amount (which leaves every
logit θ − b unchanged), and for 2PL the full fit's log a. From there the same damped
Newton iterations as :mod:`curation.irt._map` (same objective, same priors, same
Armijo rule, same stopping rule ``max step < tol``) reach the same mode in a few steps
instead of the cold start's six or more, and nothing but b and θ is computed: no
Laplace intervals, no result frames. The mode is the exact refit's to within the
fit tolerance (checked against cold refits in the tests and in
``benchmarks/bench_speed.py``).
"""

from __future__ import annotations

import numpy as np

from curation.irt._data import Cells, make_layout
from curation.irt._map import (
    _ARMIJO,
    _FULL_STEP,
    _chol_solve,
    _TwoPL,
    logistic,
    softplus,
    sum_zero_basis,
)
from curation.irt._settings import FitSettings

_SETTLE_STEPS = 8
_SETTLE_TOL = 1e-3  # a start, not a solution: the joint Newton does the rest


def warm_start(
    theta: np.ndarray, b: np.ndarray, keep_models: np.ndarray, keep_items: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The full fit's θ (kept models, re-centred) and b (kept items, shifted alike)."""
    th = theta[keep_models]
    c = float(np.mean(th))
    return th - c, b[keep_items] - c


def settle_items(
    cells: Cells, settings: FitSettings, th: np.ndarray, b: np.ndarray, a: np.ndarray | None
) -> np.ndarray:
    """Move each item's b to its mode given the start's abilities (and a), held fixed.

    Items are independent once θ is fixed, so this is a vectorised 1-D Newton per item
    (steps capped at 1 logit; the problem is convex in b), and after the first pass only
    the items still moving are visited. It matters for the items the dropped model alone
    decided, e.g. one that every remaining model solves, whose b slides a logit or more
    towards the prior: the joint Newton then starts close everywhere and needs fewer
    (expensive) joint steps.
    """
    vb = settings.b_sd**-2
    a = np.ones_like(b) if a is None else a
    b = b.copy()
    mi, ii, k, n = cells.mi, cells.ii, cells.k, cells.n
    active = np.arange(b.size)
    for _ in range(_SETTLE_STEPS):
        a_c = a[ii]
        p = logistic(a_c * (th[mi] - b[ii]))
        np_ = n * p
        g = a[active] * _sum_by(ii, k - np_, b.size)[active] + vb * b[active]
        h = a[active] ** 2 * _sum_by(ii, np_ * (1.0 - p), b.size)[active] + vb
        db = np.clip(-g / h, -1.0, 1.0)
        b[active] += db
        moving = np.abs(db) >= _SETTLE_TOL
        if not moving.any():
            break
        active = active[moving]
        keep = np.isin(ii, active)
        mi, ii, k, n = mi[keep], ii[keep], k[keep], n[keep]
    return b


def _sum_by(index: np.ndarray, x: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(index, weights=x, minlength=size)


def refit_1pl(
    cells: Cells, settings: FitSettings, th: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """1PL MAP from a start (θ on the sum-to-zero subspace); returns θ, b, iterations, converged."""
    lay = make_layout(cells, settings.layout)
    m, _ = lay.shape
    q = sum_zero_basis(m)
    vt, vb = settings.theta_sd**-2, settings.b_sd**-2
    kk, nn = lay.K, lay.N
    b = settle_items(cells, settings, th, b, None)

    def objective(eta: np.ndarray, th: np.ndarray, b: np.ndarray) -> float:
        ll = float(np.sum(kk * eta) - np.sum(nn * softplus(eta)))
        return -ll + 0.5 * vt * float(th @ th) + 0.5 * vb * float(b @ b)

    th, b = th.copy(), b.copy()
    eta = lay.rows(th) - lay.cols(b)
    f: float | None = None  # the objective is needed only for a line search
    converged, it = False, 0
    while it < settings.max_iter:
        it += 1
        p = logistic(eta)
        np_ = nn * p
        r = kk - np_
        w = np_ * (1.0 - p)
        g_th = -lay.row_sum(r) + vt * th
        g_b = lay.col_sum(r) + vb * b
        d = lay.col_sum(w) + vb
        schur = np.diag(lay.row_sum(w)) - lay.cross(w / lay.cols(d), w)
        s = q.T @ schur @ q + vt * np.eye(m - 1)
        rhs = -(q.T @ g_th) - q.T @ lay.mv(w, g_b / d)
        dphi = _chol_solve(s, rhs)
        if dphi is None:
            raise FloatingPointError("1PL Schur complement is not positive definite")
        dth = q @ dphi
        db = (-g_b + lay.rmv(w, dth)) / d
        max_step = max(float(np.max(np.abs(dth), initial=0.0)), float(np.max(np.abs(db))))
        if max_step < _FULL_STEP:
            th, b = th + dth, b + db
            eta = lay.rows(th) - lay.cols(b)
            f = None
        else:
            if f is None:
                f = objective(eta, th, b)
            slope = float(g_th @ dth + g_b @ db)
            t = 1.0
            while True:
                th_n, b_n = th + t * dth, b + t * db
                eta_n = lay.rows(th_n) - lay.cols(b_n)
                f_n = objective(eta_n, th_n, b_n)
                if f_n <= f + _ARMIJO * t * slope or t < 1e-10:
                    break
                t *= 0.5
            th, b, eta, f = th_n, b_n, eta_n, f_n
            max_step *= t
        if max_step < settings.tol:
            converged = True
            break
    return th, b, it, converged


def refit_2pl(
    cells: Cells, settings: FitSettings, th: np.ndarray, b: np.ndarray, al: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """2PL MAP from a start (θ, b, log a); returns θ, b, iterations, converged."""
    lay = make_layout(cells, settings.layout)
    model = _TwoPL(lay, settings)
    th, b, al = th.copy(), settle_items(cells, settings, th, b, np.exp(al)), al.copy()
    eta = model.eta(th, b, al)
    f = model.objective(eta, th, b, al)
    converged, it = False, 0
    while it < settings.max_iter:
        it += 1
        h = model.newton(eta, th, b, al, observed=True)
        if h is None:
            h = model.newton(eta, th, b, al, observed=False)
        if h is None:
            raise FloatingPointError("2PL Fisher information is not positive definite")
        dth, db, dal = model.step(h)
        max_step = max(
            float(np.max(np.abs(dth), initial=0.0)),
            float(np.max(np.abs(db))),
            float(np.max(np.abs(dal))),
        )
        slope = float(h["g_th"] @ dth + h["g_b"] @ db + h["g_al"] @ dal)
        t = 1.0
        while True:
            th_n, b_n, al_n = th + t * dth, b + t * db, al + t * dal
            eta_n = model.eta(th_n, b_n, al_n)
            f_n = model.objective(eta_n, th_n, b_n, al_n)
            if max_step < _FULL_STEP or f_n <= f + _ARMIJO * t * slope or t < 1e-10:
                break
            t *= 0.5
        th, b, al, eta, f = th_n, b_n, al_n, eta_n, f_n
        max_step *= t
        if max_step < settings.tol:
            converged = True
            break
    return th, b, it, converged
