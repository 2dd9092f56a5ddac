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

from typing import Any

import numpy as np

from curation.irt._data import Cells, make_layout
from curation.irt._guess import floor_terms
from curation.irt._map import (
    _ARMIJO,
    _FULL_STEP,
    _chol_solve,
    _TwoPL,
    identify_scale,
    logistic,
    newton_2pl,
    prior_centre,
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
    cells: Cells,
    settings: FitSettings,
    th: np.ndarray,
    b: np.ndarray,
    a: np.ndarray | None,
    floor: np.ndarray | None = None,
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
        eta = a_c * (th[mi] - b[ii])
        if floor is None:
            p = logistic(eta)
            np_ = n * p
            r, w = k - np_, np_ * (1.0 - p)
        else:
            w, r = floor_terms(k, n, eta, floor[ii], observed=False)
        g = a[active] * _sum_by(ii, r, b.size)[active] + vb * b[active]
        h = a[active] ** 2 * _sum_by(ii, w, b.size)[active] + vb
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
    cells: Cells,
    settings: FitSettings,
    th: np.ndarray,
    b: np.ndarray,
    al: np.ndarray,
    floor: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """2PL (3PL with ``floor``) MAP from a start (θ, b, log a); returns θ, b, iterations,
    converged (:func:`refit_2pl_point` for log a too)."""
    res = refit_2pl_point(cells, settings, th, b, al, floor)
    th, b, _ = res["x"]
    return th, b, res["iterations"], res["converged"]


def refit_2pl_point(
    cells: Cells,
    settings: FitSettings,
    th: np.ndarray,
    b: np.ndarray,
    al: np.ndarray,
    floor: np.ndarray | None = None,
) -> dict[str, Any]:
    """The mode from a start, the scale identified as in the full fit
    (:func:`curation.irt._map.identify_scale`, its prior centre started from the start's):
    ``"x"`` = (θ, b, log a), ``"iterations"``, ``"converged"``."""
    lay = make_layout(cells, settings.layout)
    b = settle_items(cells, settings, th, b, np.exp(al), floor)

    def solve(centre: float, x: tuple[np.ndarray, ...] | None) -> dict[str, Any]:
        assert x is not None
        th, b, al, _, _, it, converged, _ = newton_2pl(
            _TwoPL(lay, settings, floor, centre), settings, x
        )
        return {"a": np.exp(al), "iterations": it, "converged": converged, "x": (th, b, al)}

    return identify_scale(solve, prior_centre(th, b, settings), (th.copy(), b, al.copy()))


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
    floor: np.ndarray | None = None,
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
    if two:  # the full fit's log a prior centre (its scale: mean log a = 0)
        al = al - prior_centre(theta, b, settings)
    m_all, n_it = theta.size, b.size
    bounds = np.searchsorted(cells.mi, np.arange(m_all + 1))  # cells are sorted by model

    def terms(rows: np.ndarray) -> tuple[np.ndarray, ...]:
        """Counts, η, residual and Fisher weight of these models' rows (models x items),
        from the cells: nothing models x items is held for the whole panel but the cross
        blocks below (~0.3 GB each at 2,000 x 20,000)."""
        kk, nn = np.zeros((rows.size, n_it)), np.zeros((rows.size, n_it))
        for t, j in enumerate(rows.tolist()):
            sl = slice(int(bounds[j]), int(bounds[j + 1]))
            kk[t, cells.ii[sl]], nn[t, cells.ii[sl]] = cells.k[sl], cells.n[sl]
        eta = a_[None, :] * (theta[rows, None] - b[None, :])
        if floor is None:
            p = logistic(eta)
            r = kk - nn * p  # residual per cell (0 where missing)
            w = nn * p * (1.0 - p)  # Fisher weight per cell
        else:
            w, r = floor_terms(kk, nn, eta, floor[None, :], observed=False)
        return nn, eta, r, w

    s_r, s_w, s_n = np.zeros(n_it), np.zeros(n_it), np.zeros(n_it)
    s_we, s_wee, s_re = np.zeros(n_it), np.zeros(n_it), np.zeros(n_it)
    g_th_full, h_th = np.empty(m_all), np.empty(m_all)
    # θ–b cross block (up to sign) and the θ curvature's terms; θ–log a cross block (2PL)
    wa2 = np.empty((m_all, n_it))
    wea = np.empty((m_all, n_it)) if two else None
    block = max(1, 2**22 // max(n_it, 1))
    for lo in range(0, m_all, block):
        rows = np.arange(lo, min(lo + block, m_all))
        nn, eta, r, w = terms(rows)
        s_r += r.sum(0)
        s_w += w.sum(0)
        s_n += nn.sum(0)
        if two:
            we = w * eta
            s_we += we.sum(0)
            s_wee += (we * eta).sum(0)
            s_re += (r * eta).sum(0)
            assert wea is not None
            wea[rows] = w * eta * a_[None, :]
        # θ side: the full fit's gradient (its mean is the sum-to-zero multiplier), curvature
        g_th_full[rows] = -(r * a_[None, :]).sum(1) + vt * theta[rows]
        wa2[rows] = w * (a_**2)[None, :]
        h_th[rows] = wa2[rows].sum(1) + vt
    g_th_full -= g_th_full.mean()
    total = float(theta.sum())
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    chunk = max(1, 2**22 // max(m_all, b.size))  # ~32 MB per models × chunk array
    for lo in range(0, models.size, chunk):
        js = models[lo : lo + chunk]
        cols = np.arange(js.size)
        c = (total - theta[js]) / (m_all - 1)  # mean θ of the others
        b0 = b[None, :] - c[:, None]
        nj, ej, rj, wj = terms(js)
        g_b0 = a_ * (s_r - rj) + vb * b0
        h_bb = a_**2 * (s_w - wj) + vb
        if two:
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
            idx = np.flatnonzero(s_n - nj[t] > 0)
            th = np.delete(theta - c[t] + dth[:, t], j)
            out.append((idx, th, (b0[t] + db[t])[idx]))
    return out
