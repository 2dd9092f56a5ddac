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


# ---- one-step approximation (leaderboard-sized panels) ------------------------------------


def dense_counts(cells: Cells) -> tuple[np.ndarray, np.ndarray]:
    """Correct and trial counts as models × items arrays (0 where a cell is missing)."""
    m, i = cells.n_models, cells.n_items
    flat = cells.mi.astype(np.int64) * i + cells.ii
    k = np.bincount(flat, weights=cells.k, minlength=m * i).reshape(m, i)
    n = np.bincount(flat, weights=cells.n, minlength=m * i).reshape(m, i)
    return k, n


def one_step_loo(
    cells: Cells,
    settings: FitSettings,
    theta: np.ndarray,
    b: np.ndarray,
    a: np.ndarray | None,
    models: np.ndarray,
    rounds: int = 3,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Approximate leave-one-model-out modes from the full MAP fit, for each of ``models``.

    For a dropped model j: the full fit re-centred as in :func:`warm_start` (θ of the
    rest to mean 0, b shifted alike, so every logit is unchanged), then a Newton step on
    each item's b (2PL: b and log a, its 2 × 2 Fisher block) with j's cells removed, then
    a Newton step on each remaining model's θ given that change (through the θ–item
    cross blocks of the Fisher information at the full mode; a Lagrange multiplier keeps
    Σθ = 0), and ``rounds`` such item/model sweeps in all: block Jacobi on the Newton
    system linearised at the full mode. Items are independent given θ and models given
    the item parameters, so each sweep is elementwise on models × items arrays plus two
    (models × items) @ (items × chunk) products per chunk of dropped models: ~ 2 · rounds
    · models² · items multiply-adds for the whole panel, against a refit per model on
    the exact path. What it leaves out is the curvature's change between the full and
    the leave-out mode (second order in the step) and the sweeps' remainder; the tests
    check it against exact refits.

    Returns, per dropped model, (index of the items still answered, θ of the others, b).
    """
    vt, vb, va = settings.theta_sd**-2, settings.b_sd**-2, settings.log_a_sd**-2
    two = a is not None
    a_ = np.ones_like(b) if a is None else a
    al = np.log(a_)
    kk, nn = dense_counts(cells)
    eta = a_[None, :] * (theta[:, None] - b[None, :])
    p = logistic(eta)
    r = kk - nn * p  # residual per cell (0 where missing)
    w = nn * p * (1.0 - p)  # Fisher weight per cell
    del p
    s_r, s_w, s_n = r.sum(0), w.sum(0), nn.sum(0)
    if two:
        we = w * eta
        s_we, s_wee, s_re = we.sum(0), (we * eta).sum(0), (r * eta).sum(0)
    # θ side: the full fit's gradient (its mean is the sum-to-zero multiplier) and curvature
    g_th_full = -(r * a_[None, :]).sum(1) + vt * theta
    g_th_full -= g_th_full.mean()
    h_th = (w * (a_**2)[None, :]).sum(1) + vt
    total = float(theta.sum())
    m_all = theta.size
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    wa2 = w * (a_**2)[None, :]  # θ–b cross block (up to sign) and the θ curvature's terms
    wea = w * eta * a_[None, :] if two else None  # θ–log a cross block
    chunk = max(1, 2**22 // max(m_all, b.size))  # ~32 MB per models × chunk array
    for lo in range(0, models.size, chunk):
        js = models[lo : lo + chunk]
        cols = np.arange(js.size)
        c = (total - theta[js]) / (m_all - 1)  # mean θ of the others
        b0 = b[None, :] - c[:, None]
        rj, wj = r[js], w[js]
        g_b0 = a_ * (s_r - rj) + vb * b0
        h_bb = a_**2 * (s_w - wj) + vb
        if two:
            ej = eta[js]
            wej = wj * ej
            g_al0 = -(s_re - rj * ej) + va * al
            h_aa = (s_wee - wej * ej) + va
            h_ba = -a_ * (s_we - wej)
            det = h_bb * h_aa - h_ba**2
        inv_h = 1.0 / h_th[:, None] * np.ones((1, js.size))
        inv_h[js, cols] = 0.0  # the dropped model takes no part
        dth = np.zeros((m_all, js.size))
        for _ in range(rounds):
            # items given the models' current step (Fisher cross blocks, linearised)
            g_b = g_b0 - (wa2.T @ dth).T
            if two:
                assert wea is not None
                g_al = g_al0 + (wea.T @ dth).T
                db = -(h_aa * g_b - h_ba * g_al) / det
                dal = -(h_bb * g_al - h_ba * g_b) / det
            else:
                db = -g_b / h_bb
            # models given the items' step; the multiplier keeps Σθ = 0 over the others
            g_th = g_th_full[:, None] - wa2 @ db.T
            if two:
                assert wea is not None
                g_th += wea @ dal.T
            lam = (g_th * inv_h).sum(0) / inv_h.sum(0)
            dth = -(g_th - lam[None, :]) * inv_h
        for t, j in enumerate(js.tolist()):
            idx = np.flatnonzero(s_n - nn[j] > 0)
            th = np.delete(theta - c[t] + dth[:, t], j)
            out.append((idx, th, (b0[t] + db[t])[idx]))
    return out
