"""MAP fits for leaderboard-sized panels: compact storage, fused passes, Newton-CG.

The exact block Newton of :mod:`curation.irt._map` eliminates the item block and
solves the model × model Schur complement densely: cheap for a dozen models, but
forming it costs models² × items (4.8e11 multiply-adds at 4,000 × 30,000) and every
per-cell intermediate is a float64 matrix. Here the same Newton step is solved
matrix-free:

* the counts live in a dense model × item ``uint8``/``uint16`` matrix (a missing cell
  has zero trials), 2 bytes per cell;
* one fused pass over row blocks (two threads; numpy releases the GIL) gives the
  objective, the gradient and the curvature at the current point; the curvature
  weights are kept as ``float32`` matrices for the solve (4 or 8 bytes per cell);
* the Schur complement system is solved by conjugate gradients with a Jacobi
  preconditioner restricted to the sum-to-zero subspace (two matrix-vector products
  per CG iteration, no models² × items product).

The mode is the same as the exact fit's (same objective, same stopping rule on the
step); the standard errors use the diagonal of the ability block's inverse
(``var θ_i ≈ 1/S_ii``, the item variances corrected by it), which ignores the
O(1/models) correlations the exact fit keeps. 2PL uses the observed Hessian when the
item blocks are positive definite and CG meets no negative curvature, Fisher scoring
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from scipy.special import logit

from curation.irt._data import Cells, log_binom_const
from curation.irt._settings import Settings

_ARMIJO = 1e-4
_FULL_STEP = 1e-4
_BLOCK_CELLS = 1 << 21  # cells per row block: ~16 MB per float64 temporary
_THREADS = 2
_CG_RTOL = 1e-7
_CG_MAXITER = 500


class Chunked:
    """Dense compact counts (``K``, ``N``: models × items, zero trials = missing)."""

    kind = "chunked"

    def __init__(self, cells: Cells) -> None:
        m, i = cells.n_models, cells.n_items
        self.shape = (m, i)
        top = int(cells.n.max()) if cells.n.size else 0
        dtype = np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF else np.float64
        self.K = np.zeros((m, i), dtype=dtype)
        self.N = np.zeros((m, i), dtype=dtype)
        self.K[cells.mi, cells.ii] = cells.k
        self.N[cells.mi, cells.ii] = cells.n
        step = max(1, _BLOCK_CELLS // max(i, 1))
        self.blocks = [(r, min(r + step, m)) for r in range(0, m, step)]

    def map_blocks(self, fn: Callable[[int, int], Any]) -> list[Any]:
        """``fn(r0, r1)`` for every row block, in block order (threads, same result)."""
        if len(self.blocks) == 1:
            return [fn(*self.blocks[0])]
        with ThreadPoolExecutor(_THREADS) as pool:
            return list(pool.map(lambda rr: fn(*rr), self.blocks))


def _softplus_logistic(eta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """log(1 + e^eta) and 1/(1 + e^-eta) from one exp."""
    e = np.exp(-np.abs(eta))
    sp = np.log1p(e)
    sp += np.maximum(eta, 0.0)
    p = np.where(eta >= 0, 1.0, e)
    p /= 1.0 + e
    return sp, p


def _start(lay: Chunked) -> tuple[np.ndarray, np.ndarray]:
    def sums(r0: int, r1: int) -> tuple[np.ndarray, ...]:
        k = lay.K[r0:r1].astype(np.float64)
        n = lay.N[r0:r1].astype(np.float64)
        return k.sum(1), n.sum(1), k.sum(0), n.sum(0)

    parts = lay.map_blocks(sums)
    row_k = np.concatenate([p[0] for p in parts])
    row_n = np.concatenate([p[1] for p in parts])
    col_k = np.sum([p[2] for p in parts], axis=0)
    col_n = np.sum([p[3] for p in parts], axis=0)
    th = logit((row_k + 0.5) / (row_n + 1.0))
    th -= th.mean()

    def rmv(r0: int, r1: int) -> np.ndarray:
        return th[r0:r1] @ lay.N[r0:r1].astype(np.float64)

    th_bar = np.sum(lay.map_blocks(rmv), axis=0) / np.maximum(col_n, 1e-12)
    return th, th_bar - logit((col_k + 0.5) / (col_n + 1.0))


def _objective(
    lay: Chunked, th: np.ndarray, b: np.ndarray, a: np.ndarray | None, dtype: Any = np.float64
) -> float:
    """Negative log-likelihood; ``float32`` is enough to backtrack a line search."""
    th, b = th.astype(dtype), b.astype(dtype)
    a = None if a is None else a.astype(dtype)

    def part(r0: int, r1: int) -> float:
        eta = th[r0:r1, None] - b[None, :]
        if a is not None:
            eta *= a[None, :]
        sp, _ = _softplus_logistic(eta)
        k, n = lay.K[r0:r1], lay.N[r0:r1]
        return float(np.sum(k * eta, dtype=np.float64) - np.sum(n * sp, dtype=np.float64))

    return -float(np.sum(lay.map_blocks(part)))


def _pcg(
    apply: Callable[[np.ndarray], np.ndarray], rhs: np.ndarray, diag: np.ndarray
) -> np.ndarray | None:
    """CG on the sum-to-zero subspace; None on negative curvature (not positive definite)."""
    inv = 1.0 / diag
    c = inv / inv.sum()
    scale = float(np.max(np.abs(diag)))

    def precond(r: np.ndarray) -> np.ndarray:  # Jacobi, projected onto sum(x) = 0
        z = inv * r
        return z - c * z.sum()

    rhs = rhs - rhs.mean()
    x = np.zeros_like(rhs)
    r = rhs.copy()
    z = precond(r)
    p = z.copy()
    rz = float(r @ z)
    stop = _CG_RTOL * float(np.linalg.norm(rhs))
    for _ in range(_CG_MAXITER):
        if float(np.linalg.norm(r)) <= stop:
            break
        ap = apply(p)
        ap -= ap.mean()
        pap = float(p @ ap)
        floor = 1e-6 * scale * float(p @ p)  # below: zero up to float32 rounding
        if pap <= floor:
            if pap < -floor:
                return None
            break
        alpha = rz / pap
        x += alpha * p
        r -= alpha * ap
        z = precond(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return x - x.mean()


def _matvecs(mat: np.ndarray) -> tuple[Callable[[np.ndarray], np.ndarray], ...]:
    """``mat @ v`` (per model) and ``mat.T @ u`` (per item) for a float32 matrix, in float64."""

    def mv(v: np.ndarray) -> np.ndarray:
        return (mat @ v.astype(np.float32)).astype(np.float64)

    def rmv(u: np.ndarray) -> np.ndarray:
        return (u.astype(np.float32) @ mat).astype(np.float64)

    return mv, rmv


def _line_search(
    f: float,
    f_full: float,
    slope: float,
    max_step: float,
    objective: Callable[[float, Any], float],
) -> float:
    """Backtracking (Armijo) step size; ``f_full`` is the objective at the full step."""
    if max_step < _FULL_STEP or f_full <= f + _ARMIJO * slope:
        return 1.0
    t, f32 = 0.5, objective(0.0, np.float32)  # compare float32 with float32
    while not (objective(t, np.float32) <= f32 + _ARMIJO * t * slope or t < 1e-10):
        t *= 0.5
    return t


def fit_map_1pl_big(cells: Cells, settings: Settings) -> dict[str, Any]:
    lay = Chunked(cells)
    m, n_i = lay.shape
    vt, vb = settings.theta_sd**-2, settings.b_sd**-2
    w = np.empty((m, n_i), dtype=np.float32)
    th, b = _start(lay)

    def penalty(th: np.ndarray, b: np.ndarray) -> float:
        return 0.5 * vt * float(th @ th) + 0.5 * vb * float(b @ b)

    def derivatives(th: np.ndarray, b: np.ndarray) -> tuple[Any, ...]:
        def part(r0: int, r1: int) -> tuple[Any, ...]:
            eta = th[r0:r1, None] - b[None, :]
            sp, p = _softplus_logistic(eta)
            k, n = lay.K[r0:r1], lay.N[r0:r1]
            ll = float(np.sum(k * eta) - np.sum(n * sp))
            np_ = n * p
            r = k - np_
            np_ *= 1.0 - p
            w[r0:r1] = np_
            return r.sum(1), r.sum(0), np_.sum(1), np_.sum(0), ll

        parts = lay.map_blocks(part)
        return (
            -float(np.sum([q[4] for q in parts])) + penalty(th, b),
            np.concatenate([q[0] for q in parts]),
            np.sum([q[1] for q in parts], axis=0),
            np.concatenate([q[2] for q in parts]),
            np.sum([q[3] for q in parts], axis=0),
        )

    mv, rmv = _matvecs(w)
    f, row_r, col_r, row_w, col_w = derivatives(th, b)
    converged, it, max_step = False, 0, np.inf
    while it < settings.max_iter:
        it += 1
        g_th, g_b = -row_r + vt * th, col_r + vb * b
        d = col_w + vb
        diag = row_w + vt

        def schur(v: np.ndarray, diag: np.ndarray = diag, d: np.ndarray = d) -> np.ndarray:
            return diag * v - mv(rmv(v) / d)

        dth = _pcg(schur, -g_th - mv(g_b / d), diag)
        if dth is None:  # cannot happen for a convex objective with priors; be loud
            raise FloatingPointError("1PL Schur complement is not positive definite")
        db = (-g_b + rmv(dth)) / d
        max_step = max(float(np.max(np.abs(dth), initial=0.0)), float(np.max(np.abs(db))))
        slope = float(g_th @ dth + g_b @ db)

        def obj(t: float, dtype: Any, x: tuple = (th, b, dth, db)) -> float:
            th_n, b_n = x[0] + t * x[2], x[1] + t * x[3]
            return _objective(lay, th_n, b_n, None, dtype) + penalty(th_n, b_n)

        now = derivatives(th + dth, b + db)  # the trial point's pass serves the next step
        t = _line_search(f, now[0], slope, max_step, obj)
        if t != 1.0:
            now = derivatives(th + t * dth, b + t * db)
        th, b = th + t * dth, b + t * db
        f, row_r, col_r, row_w, col_w = now
        max_step *= t
        if max_step < settings.tol:
            converged = True
            break
    d = col_w + vb
    s_diag = row_w + vt - _sq_rmv(w, 1.0 / d, axis=1)  # S_ii = D_ii - sum_j w_ij^2 / d_j
    var_th = _constrained(1.0 / s_diag)
    var_b = 1.0 / d + _sq_rmv(w, var_th, axis=0) / d**2
    return {
        "theta": th, "theta_se": np.sqrt(var_th), "b": b, "b_se": np.sqrt(var_b),
        "a": None, "a_se": None,
        "loglik": -(f - penalty(th, b)) + log_binom_const(cells.k, cells.n),
        "log_posterior": -f, "iterations": it, "converged": converged,
        "max_step": max_step, "layout": lay.kind, "curvature": "observed",
    }  # fmt: skip


def _constrained(v: np.ndarray) -> np.ndarray:
    """Diagonal of ``V - V 1 1^T V / 1^T V 1`` for ``V = diag(v)``: the sum-to-zero constraint."""
    return v - v * v / v.sum()


def _sq_rmv(mat: np.ndarray, v: np.ndarray, *, axis: int) -> np.ndarray:
    """``sum over the other axis of mat**2 * v`` (v per item for axis=1, per model for 0)."""
    out = []
    step = max(1, _BLOCK_CELLS // max(mat.shape[1], 1))
    for r0 in range(0, mat.shape[0], step):
        sq = np.square(mat[r0 : r0 + step], dtype=np.float64)
        out.append(sq @ v if axis == 1 else v[r0 : r0 + step] @ sq)
    return np.concatenate(out) if axis == 1 else np.sum(out, axis=0)


def fit_map_2pl_big(cells: Cells, settings: Settings, start: Any) -> dict[str, Any]:
    lay = Chunked(cells)
    m, n_i = lay.shape
    vt, vb, va = settings.theta_sd**-2, settings.b_sd**-2, settings.log_a_sd**-2
    w = np.empty((m, n_i), dtype=np.float32)  # w_ij
    c = np.empty((m, n_i), dtype=np.float32)  # w_ij eta_ij (- r_ij when observed)
    th, b, al = start.theta.copy(), start.b.copy(), np.zeros(n_i)

    def penalty(th: np.ndarray, b: np.ndarray, al: np.ndarray) -> float:
        return 0.5 * (vt * float(th @ th) + vb * float(b @ b) + va * float(al @ al))

    def derivatives(th: np.ndarray, b: np.ndarray, a: np.ndarray, observed: bool) -> dict:
        def part(r0: int, r1: int) -> tuple[Any, ...]:
            eta = th[r0:r1, None] - b[None, :]
            eta *= a[None, :]
            sp, p = _softplus_logistic(eta)
            k, n = lay.K[r0:r1], lay.N[r0:r1]
            ll = float(np.sum(k * eta) - np.sum(n * sp))
            np_ = n * p
            r = k - np_
            np_ *= 1.0 - p  # w
            w[r0:r1] = np_
            we = np_ * eta
            re = r * eta
            out = (r @ a, r.sum(0), re.sum(0), np_.sum(0), (we * eta).sum(0), we.sum(0),
                   np_ @ (a * a))  # fmt: skip
            if observed:
                we -= r
            c[r0:r1] = we
            return (*out, ll)

        parts = lay.map_blocks(part)
        ll = float(np.sum([q[7] for q in parts]))
        cat = [np.concatenate([q[j] for q in parts]) for j in (0, 6)]
        sums = [np.sum([q[j] for q in parts], axis=0) for j in range(1, 6)]
        return {"r_a": cat[0], "col_r": sums[0], "col_re": sums[1], "col_w": sums[2],
                "col_wee": sums[3], "col_we": sums[4], "row_waa": cat[1],
                "f": -ll + penalty(th, b, np.log(a))}  # fmt: skip

    mv_w, rmv_w = _matvecs(w)
    mv_c, rmv_c = _matvecs(c)

    def newton(
        th: np.ndarray, b: np.ndarray, al: np.ndarray, observed: bool, h: dict | None = None
    ) -> dict | None:
        a = np.exp(al)
        h = h if h is not None else derivatives(th, b, a, observed)
        g_th = -h["r_a"] + vt * th
        g_b = a * h["col_r"] + vb * b
        g_al = -h["col_re"] + va * al
        h_bb = a * a * h["col_w"] + vb
        h_aa = h["col_wee"] + va
        h_ba = -a * h["col_we"]
        if observed:
            h_aa = h_aa - h["col_re"]
            h_ba = h_ba + a * h["col_r"]
        det = h_bb * h_aa - h_ba * h_ba
        if not np.all(det > 0):
            return None
        i_bb, i_aa, i_ba = h_aa / det, h_bb / det, -h_ba / det
        # cross blocks: C_tb = -W diag(a^2), C_ta = Cmat diag(a)
        aa = a * a

        def c_tb_t(v: np.ndarray) -> np.ndarray:  # C_tb^T v
            return -aa * rmv_w(v)

        def c_ta_t(v: np.ndarray) -> np.ndarray:
            return a * rmv_c(v)

        def c_tb(u: np.ndarray) -> np.ndarray:  # C_tb u
            return -mv_w(aa * u)

        def c_ta(u: np.ndarray) -> np.ndarray:
            return mv_c(a * u)

        diag = h["row_waa"] + vt

        def apply(v: np.ndarray) -> np.ndarray:
            xb, xa = c_tb_t(v), c_ta_t(v)
            return diag * v - c_tb(i_bb * xb + i_ba * xa) - c_ta(i_ba * xb + i_aa * xa)

        v_b = i_bb * g_b + i_ba * g_al
        v_a = i_ba * g_b + i_aa * g_al
        dth = _pcg(apply, -g_th + c_tb(v_b) + c_ta(v_a), diag)
        if dth is None:
            return None
        r_b = -g_b - c_tb_t(dth)
        r_a = -g_al - c_ta_t(dth)
        return {
            "g": (g_th, g_b, g_al),
            "d": (dth, i_bb * r_b + i_ba * r_a, i_ba * r_b + i_aa * r_a),
            "i": (i_bb, i_aa, i_ba), "diag": diag, "a": a,
        }  # fmt: skip

    def step(
        th: np.ndarray, b: np.ndarray, al: np.ndarray, pre: dict | None = None
    ) -> tuple[dict, str]:
        h = newton(th, b, al, observed=True, h=pre)
        if h is not None:
            return h, "observed"
        h = newton(th, b, al, observed=False)
        if h is None:  # Fisher information plus priors is positive definite: cannot happen
            raise FloatingPointError("2PL Fisher information is not positive definite")
        return h, "fisher"

    pre = derivatives(th, b, np.exp(al), True)
    f = pre["f"]
    converged, it, max_step = False, 0, np.inf
    while it < settings.max_iter:
        it += 1
        h, _ = step(th, b, al, pre)
        dth, db, dal = h["d"]
        g_th, g_b, g_al = h["g"]
        max_step = max(
            float(np.max(np.abs(dth), initial=0.0)),
            float(np.max(np.abs(db))),
            float(np.max(np.abs(dal))),
        )
        slope = float(g_th @ dth + g_b @ db + g_al @ dal)

        def obj(t: float, dtype: Any, x: tuple = (th, b, al, dth, db, dal)) -> float:
            th_n, b_n, al_n = x[0] + t * x[3], x[1] + t * x[4], x[2] + t * x[5]
            return _objective(lay, th_n, b_n, np.exp(al_n), dtype) + penalty(th_n, b_n, al_n)

        pre = derivatives(th + dth, b + db, np.exp(al + dal), True)
        t = _line_search(f, pre["f"], slope, max_step, obj)
        th, b, al = th + t * dth, b + t * db, al + t * dal
        if t != 1.0:
            pre = derivatives(th, b, np.exp(al), True)
        f = pre["f"]
        max_step *= t
        if max_step < settings.tol:
            converged = True
            break

    h, curvature = step(th, b, al, pre)
    i_bb, i_aa, i_ba = h["i"]
    a = h["a"]
    aa = a * a
    # S_ii = diag - sum_j [c_tb, c_ta]_ij E_j^-1 [c_tb, c_ta]_ij
    s_diag = (
        h["diag"]
        - _sq_rmv(w, aa * aa * i_bb, axis=1)
        - _sq_rmv(c, aa * i_aa, axis=1)
        + 2.0 * _cross_rmv(w, c, aa * a * i_ba)
    )
    var_th = _constrained(1.0 / s_diag)
    # e_b = c_tb i_bb + c_ta i_ba, e_a = c_tb i_ba + c_ta i_aa (per cell); var += sum var_th e^2
    var_b = i_bb + _quad(w, c, var_th, -aa * i_bb, a * i_ba)
    var_al = i_aa + _quad(w, c, var_th, -aa * i_ba, a * i_aa)
    return {
        "theta": th, "theta_se": np.sqrt(var_th), "b": b, "b_se": np.sqrt(var_b),
        "a": a, "a_se": a * np.sqrt(var_al),
        "loglik": -(f - penalty(th, b, al)) + log_binom_const(cells.k, cells.n),
        "log_posterior": -f, "iterations": it, "converged": converged,
        "max_step": max_step, "layout": lay.kind, "curvature": curvature,
    }  # fmt: skip


def _cross_rmv(x: np.ndarray, y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``sum_j x_ij y_ij v_j`` per model."""
    out = []
    step = max(1, _BLOCK_CELLS // max(x.shape[1], 1))
    for r0 in range(0, x.shape[0], step):
        xy = x[r0 : r0 + step].astype(np.float64) * y[r0 : r0 + step]
        out.append(xy @ v)
    return np.concatenate(out)


def _quad(
    w: np.ndarray, c: np.ndarray, u: np.ndarray, sw: np.ndarray, sc: np.ndarray
) -> np.ndarray:
    """``sum_i u_i (w_ij sw_j + c_ij sc_j)^2`` per item."""
    total = np.zeros(w.shape[1])
    step = max(1, _BLOCK_CELLS // max(w.shape[1], 1))
    for r0 in range(0, w.shape[0], step):
        e = w[r0 : r0 + step] * sw
        e += c[r0 : r0 + step] * sc
        np.square(e, out=e)
        total += u[r0 : r0 + step] @ e
    return total
