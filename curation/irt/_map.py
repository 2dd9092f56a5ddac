"""MAP fits by block Newton on the bipartite Hessian.

The negative log posterior is a sum over (model, item) cells, so its Hessian has a
diagonal ability block, a block-diagonal item block (1×1 per item for 1PL, 2×2 for
2PL) and a dense model × item cross block. Eliminating the item block leaves a Schur
complement of the size of the panel (a dozen models), so one exact Newton step costs
a few passes over the cells plus a tiny dense solve — no Hessian of the size of the
item bank is ever formed. Abilities live on the sum-to-zero subspace (``theta = Q phi``
with ``Q`` orthonormal), which is the identification "mean ability 0".

1PL is convex, so Newton with a backtracking line search converges from the crude
start (logits of the proportions). For 2PL the observed Hessian is used when it is
positive definite (checked exactly: every item block and the Schur complement) and
Fisher scoring otherwise; the 2PL fit starts at the 1PL solution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from curation.irt._data import Cells, Dense, Sparse, log_binom_const, make_layout
from curation.irt._numeric import cholesky_solve, logit
from curation.irt._settings import FitSettings

_ARMIJO = 1e-4
_FULL_STEP = 1e-4  # below this step size Newton is in its quadratic region: no line search


@dataclass(frozen=True)
class MapFit:
    """Point estimates with Laplace standard errors (inverse Hessian at the mode)."""

    theta: np.ndarray
    theta_se: np.ndarray
    b: np.ndarray
    b_se: np.ndarray
    a: np.ndarray | None
    a_se: np.ndarray | None
    loglik: float
    log_posterior: float
    iterations: int
    converged: bool
    max_step: float
    layout: str
    curvature: str  # "observed" or "fisher" (what the standard errors used)


def sum_zero_basis(m: int) -> np.ndarray:
    """Orthonormal ``m × (m-1)`` basis of {x : sum(x) = 0} (Helmert contrasts)."""
    q = np.zeros((m, max(m - 1, 0)))
    for k in range(1, m):
        q[:k, k - 1] = 1.0
        q[k, k - 1] = -k
        q[:, k - 1] /= np.sqrt(k * (k + 1.0))
    return q


def softplus(x: np.ndarray) -> NDArray[np.float64]:
    """log(1 + e^x), stable for any x (faster than np.logaddexp, which has a slow path)."""
    out: NDArray[np.float64] = np.log1p(np.exp(-np.abs(x)))
    out += np.maximum(x, 0.0)
    return out


def logistic(x: np.ndarray) -> np.ndarray:
    """Logistic function via tanh: no overflow and ~2× faster than scipy's expit here."""
    out = np.tanh(0.5 * x)
    out *= 0.5
    out += 0.5
    return out


_chol_solve = cholesky_solve


def _start(lay: Dense | Sparse) -> tuple[np.ndarray, np.ndarray]:
    """Abilities and difficulties from smoothed proportions (a few Newton steps from the mode)."""
    th = logit((lay.row_sum(lay.K) + 0.5) / (lay.row_sum(lay.N) + 1.0))
    th -= th.mean()
    item_n = lay.col_sum(lay.N)
    th_bar = lay.rmv(lay.N, th) / np.maximum(item_n, 1e-12)
    b = th_bar - logit((lay.col_sum(lay.K) + 0.5) / (item_n + 1.0))
    return th, b


BIG_MODELS = 256
"""From this many models on (``layout="auto"``) the fits run matrix-free
(:mod:`curation.irt._map_big`): the exact Schur complement costs models² × items."""


def _big(cells: Cells, settings: FitSettings) -> bool:
    return settings.layout == "chunked" or (
        settings.layout == "auto" and cells.n_models >= BIG_MODELS
    )


def fit_map_1pl(cells: Cells, settings: FitSettings) -> MapFit:
    if _big(cells, settings):
        from curation.irt._map_big import fit_map_1pl_big

        return MapFit(**fit_map_1pl_big(cells, settings))
    lay = make_layout(cells, settings.layout)
    m, _ = lay.shape
    q = sum_zero_basis(m)
    vt, vb = settings.theta_sd**-2, settings.b_sd**-2
    kk, nn = lay.K, lay.N

    def objective(eta: np.ndarray, th: np.ndarray, b: np.ndarray) -> float:
        ll = float(np.sum(kk * eta) - np.sum(nn * softplus(eta)))
        return -ll + 0.5 * vt * float(th @ th) + 0.5 * vb * float(b @ b)

    th, b = _start(lay)
    eta = lay.rows(th) - lay.cols(b)
    f = objective(eta, th, b)
    converged, it, max_step = False, 0, np.inf
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
        if dphi is None:  # cannot happen for a convex objective with priors; be loud
            raise FloatingPointError("1PL Schur complement is not positive definite")
        dth = q @ dphi
        db = (-g_b + lay.rmv(w, dth)) / d
        max_step = max(float(np.max(np.abs(dth), initial=0.0)), float(np.max(np.abs(db))))
        if max_step < _FULL_STEP:
            th, b = th + dth, b + db
            eta = lay.rows(th) - lay.cols(b)
            f = objective(eta, th, b)
        else:
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

    # Laplace: inverse Hessian at the mode, via the same Schur complement.
    p = logistic(eta)
    w = nn * p * (1.0 - p)
    d = lay.col_sum(w) + vb
    schur = np.diag(lay.row_sum(w)) - lay.cross(w / lay.cols(d), w)
    s = q.T @ schur @ q + vt * np.eye(m - 1)
    s_inv = np.linalg.inv(s) if m > 1 else np.zeros((0, 0))
    u = lay.left(q.T, w) / d
    var_b = 1.0 / d + np.sum(u * (s_inv @ u), axis=0)
    var_th = np.einsum("ij,jk,ik->i", q, s_inv, q)
    ll = -(f - 0.5 * vt * float(th @ th) - 0.5 * vb * float(b @ b))
    return MapFit(
        theta=th,
        theta_se=np.sqrt(var_th),
        b=b,
        b_se=np.sqrt(var_b),
        a=None,
        a_se=None,
        loglik=ll + log_binom_const(cells.k, cells.n),
        log_posterior=-f,
        iterations=it,
        converged=converged,
        max_step=max_step,
        layout=lay.kind,
        curvature="observed",
    )


class _TwoPL:
    """Derivatives of the 2PL negative log posterior in (phi, b, log a)."""

    def __init__(self, lay: Dense | Sparse, settings: FitSettings) -> None:
        self.lay = lay
        self.q = sum_zero_basis(lay.shape[0])
        self.vt = settings.theta_sd**-2
        self.vb = settings.b_sd**-2
        self.va = settings.log_a_sd**-2

    def eta(self, th: np.ndarray, b: np.ndarray, al: np.ndarray) -> NDArray[np.float64]:
        lay = self.lay
        return lay.cols(np.exp(al)) * (lay.rows(th) - lay.cols(b))

    def objective(self, eta: np.ndarray, th: np.ndarray, b: np.ndarray, al: np.ndarray) -> float:
        lay = self.lay
        ll = float(np.sum(lay.K * eta) - np.sum(lay.N * softplus(eta)))
        prior = self.vt * float(th @ th) + self.vb * float(b @ b) + self.va * float(al @ al)
        return -ll + 0.5 * prior

    def newton(
        self, eta: np.ndarray, th: np.ndarray, b: np.ndarray, al: np.ndarray, *, observed: bool
    ) -> dict[str, np.ndarray] | None:
        """Gradient, Schur complement and item-block inverses; None if not positive definite."""
        lay, q = self.lay, self.q
        a = np.exp(al)
        p = logistic(eta)
        np_ = lay.N * p
        r = lay.K - np_
        w = np_ * (1.0 - p)
        col_r = lay.col_sum(r)
        g_th = -lay.mv(r, a) + self.vt * th
        g_b = a * col_r + self.vb * b
        g_al = -lay.col_sum(r * eta) + self.va * al
        w_eta = w * eta
        h_bb = a * a * lay.col_sum(w) + self.vb
        h_aa = lay.col_sum(w_eta * eta) + self.va
        h_ba = -a * lay.col_sum(w_eta)
        c_tb = -w * lay.cols(a * a)
        c_ta = w_eta * lay.cols(a)
        if observed:
            h_aa = h_aa - lay.col_sum(r * eta)
            h_ba = h_ba + a * col_r
            c_ta = c_ta - r * lay.cols(a)
        det = h_bb * h_aa - h_ba * h_ba
        if observed and not np.all(det > 0):
            return None
        i_bb, i_aa, i_ba = h_aa / det, h_bb / det, -h_ba / det
        e_b = c_tb * lay.cols(i_bb) + c_ta * lay.cols(i_ba)
        e_a = c_tb * lay.cols(i_ba) + c_ta * lay.cols(i_aa)
        schur = np.diag(lay.mv(w, a * a)) - lay.cross(e_b, c_tb) - lay.cross(e_a, c_ta)
        s = q.T @ schur @ q + self.vt * np.eye(q.shape[1])
        if s.size:
            try:
                np.linalg.cholesky(s)
            except np.linalg.LinAlgError:
                return None
        return {
            "g_th": g_th, "g_b": g_b, "g_al": g_al, "s": s, "c_tb": c_tb, "c_ta": c_ta,
            "e_b": e_b, "e_a": e_a, "i_bb": i_bb, "i_aa": i_aa, "i_ba": i_ba,
        }  # fmt: skip

    def step(self, h: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lay, q = self.lay, self.q
        g_b, g_al = h["g_b"], h["g_al"]
        v_b = h["i_bb"] * g_b + h["i_ba"] * g_al
        v_a = h["i_ba"] * g_b + h["i_aa"] * g_al
        rhs = -(q.T @ h["g_th"]) + q.T @ (lay.mv(h["c_tb"], v_b) + lay.mv(h["c_ta"], v_a))
        dphi = _chol_solve(h["s"], rhs)
        dth = q @ dphi
        r_b = -g_b - lay.rmv(h["c_tb"], dth)
        r_a = -g_al - lay.rmv(h["c_ta"], dth)
        return dth, h["i_bb"] * r_b + h["i_ba"] * r_a, h["i_ba"] * r_b + h["i_aa"] * r_a


def fit_map_2pl(cells: Cells, settings: FitSettings, start: MapFit | None = None) -> MapFit:
    if _big(cells, settings):  # without a start: a loose 1PL start on the same storage
        from curation.irt._map_big import fit_map_2pl_big

        return MapFit(**fit_map_2pl_big(cells, settings, start))
    start = start if start is not None else fit_map_1pl(cells, settings)
    lay = make_layout(cells, settings.layout)
    model = _TwoPL(lay, settings)
    th, b, al = start.theta.copy(), start.b.copy(), np.zeros(lay.shape[1])
    eta = model.eta(th, b, al)
    f = model.objective(eta, th, b, al)
    converged, it, max_step = False, 0, np.inf
    while it < settings.max_iter:
        it += 1
        h = model.newton(eta, th, b, al, observed=True)
        if h is None:
            h = model.newton(eta, th, b, al, observed=False)
        if h is None:  # Fisher information plus priors is positive definite: cannot happen
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

    h = model.newton(eta, th, b, al, observed=True)
    curvature = "observed"
    if h is None:
        h, curvature = model.newton(eta, th, b, al, observed=False), "fisher"
    if h is None:
        raise FloatingPointError("2PL Fisher information is not positive definite")
    q = model.q
    s_inv = np.linalg.inv(h["s"]) if q.shape[1] else np.zeros((0, 0))
    u_b = lay.left(q.T, h["e_b"])
    u_a = lay.left(q.T, h["e_a"])
    var_b = h["i_bb"] + np.sum(u_b * (s_inv @ u_b), axis=0)
    var_al = h["i_aa"] + np.sum(u_a * (s_inv @ u_a), axis=0)
    var_th = np.einsum("ij,jk,ik->i", q, s_inv, q)
    a = np.exp(al)
    prior = model.vt * float(th @ th) + model.vb * float(b @ b) + model.va * float(al @ al)
    return MapFit(
        theta=th,
        theta_se=np.sqrt(var_th),
        b=b,
        b_se=np.sqrt(var_b),
        a=a,
        a_se=a * np.sqrt(var_al),
        loglik=-(f - 0.5 * prior) + log_binom_const(cells.k, cells.n),
        log_posterior=-f,
        iterations=it,
        converged=converged,
        max_step=max_step,
        layout=lay.kind,
        curvature=curvature,
    )
