"""MAP fits for leaderboard-sized panels: compact storage, fused passes, Newton-CG.

The exact block Newton of :mod:`curation.irt._map` eliminates the item block and
solves the model × model Schur complement densely: cheap for a dozen models, but
forming it costs models² × items (4.8e11 multiply-adds at 4,000 × 30,000) and every
per-cell intermediate is a float64 matrix. Here the same Newton step is solved
matrix-free:

* the counts live in a dense model × item ``uint8``/``uint16`` matrix (a missing cell
  has zero trials), 2 bytes per cell;
* one fused pass over the cells (two threads; numpy releases the GIL) gives the
  objective, the gradient and the curvature at the current point. A pass works on
  row blocks of ~32 K cells through preallocated buffers (``out=``), so every
  intermediate stays in cache: two exponentials/logarithms and ~25 cheap ufuncs per
  cell, no per-cell temporaries in memory;
* far from the mode the passes run in ``float32`` (twice the SIMD width, half the
  traffic); near it (see :func:`_newton`) every pass is ``float64``, so the mode and
  the stopping rule (step < ``tol``) are the exact fit's; the objective's logarithm is
  only computed where a line search or the final point needs it;
* the curvature weights ``w`` (and, for 2PL, the residuals ``r``) are kept as
  ``float32`` matrices (4 or 8 bytes per cell): the curvature sums are BLAS
  matrix-vector products with them after the pass, and the Schur complement system is
  solved by conjugate gradients with a Jacobi preconditioner restricted to the
  sum-to-zero subspace (no models² × items product), loosely far from the mode;
* BLAS runs single-threaded during the fit (its products are memory-bound; its idle
  threads spin against the passes).

The standard errors use the diagonal of the ability block's inverse (``var θ_i ≈
1/S_ii``, the item variances corrected by it), which ignores the O(1/models)
correlations the exact fit keeps. 2PL starts from a loose 1PL fit on the same
storage; far from the mode it takes Fisher scoring steps (positive definite; its cross
block needs no ``r``, half the CG's traffic), near it the observed Hessian when the
item blocks are positive definite and CG meets no negative curvature, Fisher
otherwise.

At 4,000 models × 30,000 items (10% missing) on 2 cores: 1PL ~20 s, 2PL ~30 s, ~2 GB
peak with the input frame (``benchmarks/bench_irt.py --scale``).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
from numpy.typing import NDArray

from curation.irt._data import Cells, log_binom_const
from curation.irt._guess import floor_loglik, floor_terms
from curation.irt._numeric import logit
from curation.irt._settings import FitSettings
from curation.irt._threads import kernel_threads

_ARMIJO = 1e-4
_FULL_STEP = 1e-4  # below this step Newton is in its quadratic region: float64, no line search
_START_TOL = 1e-1  # the 1PL start of a 2PL fit stops at this step (float32 passes only)
_BLOCK_BYTES = 1 << 17  # per buffer of a pass: six of them stay in a core's L2 cache
_SCATTER = 1 << 22  # cells per chunk when filling the matrices
_THREADS = 2
_TASKS = 8  # row ranges per pass (dynamic balance on a shared machine)
_F32_MARGIN = 100.0  # float32 passes while the predicted decrease is this many noise levels
_CG_RTOL = 1e-6  # near the mode (float64 passes)
_CG_RTOL_FAR = 1e-3  # far from it: an inexact Newton step is as good and cheaper
_LAST_STEP = 1e-4  # after a float64 step this small the next is (quadratically) below tol
_CG_MAXITER = 500
_MAX_STEP = 4.0  # logits: the longest 3PL step tried (its observed curvature can be near 0)

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)

STATS: dict[str, float] = {}
"""Counters of the last fit (passes, CG iterations): for profiling, not part of the result."""


def _count(key: str, by: float = 1) -> None:
    STATS[key] = STATS.get(key, 0) + by


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
        kf, nf = self.K.reshape(-1), self.N.reshape(-1)
        buf = np.empty(min(_SCATTER, cells.k.size), dtype=np.int64)
        for s in range(0, cells.k.size, _SCATTER):
            e = min(s + _SCATTER, cells.k.size)
            lin = buf[: e - s]
            np.multiply(cells.mi[s:e], np.int64(i), out=lin)
            lin += cells.ii[s:e]
            kf[lin] = cells.k[s:e]
            nf[lin] = cells.n[s:e]
        self.tasks = _split(m, _TASKS * _THREADS if m * i > _SCATTER else 1)
        # rounding noise of a float32 objective difference: O(1) terms, one rounding each
        self.noise32 = float(np.finfo(np.float32).eps) * np.sqrt(max(cells.k.size, 1))

    def rows(self, dtype: np.dtype) -> int:
        """Rows per block of a pass in ``dtype``."""
        return max(1, _BLOCK_BYTES // dtype.itemsize // max(self.shape[1], 1))

    def run(self, fn: Callable[[int, int], Any]) -> list[Any]:
        """``fn(r0, r1)`` for every row range, in order (threads; same result as serial)."""
        if len(self.tasks) == 1:
            return [fn(*self.tasks[0])]
        with ThreadPoolExecutor(_THREADS) as pool:
            return list(pool.map(lambda rr: fn(*rr), self.tasks))


def _split(m: int, parts: int) -> list[tuple[int, int]]:
    step = max(1, -(-m // max(parts, 1)))
    return [(r, min(r + step, m)) for r in range(0, m, step)]


def _colsum(acc: np.ndarray, x: np.ndarray) -> None:
    np.add(acc, x[0] if x.shape[0] == 1 else x.sum(0), out=acc)


def _logistic_parts(eta: np.ndarray, e: np.ndarray, lg: np.ndarray, p: np.ndarray) -> None:
    """``lg = log(1 + e^-|eta|)``, ``p = 1/(1 + e^-eta)`` from one exp and one log.

    softplus(eta) = max(eta, 0) + lg. ``e`` is scratch (left holding 1 + e^-|eta|).
    """
    np.abs(eta, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    e += 1.0
    np.log(e, out=lg)
    np.reciprocal(e, out=p)  # 1/(1 + e^-|eta|) in [1/2, 1]: p for eta >= 0, 1 - p below
    p -= 0.5
    np.copysign(p, eta, out=p)
    p += 0.5


def _logistic(eta: np.ndarray, e: np.ndarray, p: np.ndarray) -> None:
    """``p = 1/(1 + e^-eta)`` alone (as :func:`_logistic_parts`, without the log)."""
    np.abs(eta, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    e += 1.0
    np.reciprocal(e, out=p)
    p -= 0.5
    np.copysign(p, eta, out=p)
    p += 0.5


def _loglik(k: np.ndarray, n: np.ndarray, eta: np.ndarray, lg: np.ndarray, e: np.ndarray) -> float:
    """sum k eta - n softplus(eta); overwrites ``lg`` and ``e``."""
    np.maximum(eta, 0.0, out=e)
    e += lg
    e *= n
    np.multiply(k, eta, out=lg)
    lg -= e
    return float(lg.sum(dtype=np.float64))


class _Buffers:
    def __init__(self, rows: int, n_items: int, dtype: np.dtype, count: int = 6) -> None:
        self.bufs = [np.empty((rows, n_items), dtype) for _ in range(count)]

    def views(self, h: int) -> list[np.ndarray]:
        return [b[:h] for b in self.bufs]


def _pass_1pl(
    lay: Chunked,
    th: np.ndarray,
    b: np.ndarray,
    dtype: np.dtype,
    w: np.ndarray | None,
    ll: bool = True,
) -> dict[str, Any]:
    """Objective (``ll``) and, with ``w`` given: gradient sums, curvature stored in ``w``.

    The curvature's row and column sums are BLAS products with the stored ``w``.
    """
    _count(f"pass_1pl_{dtype}" + ("" if w is not None else "_f") + ("" if ll else "_noll"))
    m, n_i = lay.shape
    th_c, b_c = th.astype(dtype), b.astype(dtype)
    rows = lay.rows(dtype)

    def task(r0: int, r1: int) -> dict[str, Any]:
        buf = _Buffers(min(rows, r1 - r0), n_i, dtype)
        out: dict[str, Any] = {"ll": 0.0}
        if w is not None:
            out.update(row_r=np.empty(r1 - r0), col_r=np.zeros(n_i))
        for i0 in range(r0, r1, rows):
            i1 = min(i0 + rows, r1)
            eta, e, lg, p, k, n = buf.views(i1 - i0)
            np.subtract(th_c[i0:i1, None], b_c[None, :], out=eta)
            if ll:
                _logistic_parts(eta, e, lg, p)
            else:
                _logistic(eta, e, p)
            np.copyto(k, lay.K[i0:i1])
            np.copyto(n, lay.N[i0:i1])
            if ll:
                out["ll"] += _loglik(k, n, eta, lg, e)
            if w is None:
                continue
            n *= p  # n p
            k -= n  # r = k - n p
            p *= n  # n p^2
            n -= p  # w = n p (1 - p)
            w[i0:i1] = n
            out["row_r"][i0 - r0 : i1 - r0] = k.sum(1)
            _colsum(out["col_r"], k)
        return out

    parts = lay.run(task)
    res: dict[str, Any] = {"ll": float(np.sum([q["ll"] for q in parts])) if ll else None}
    res["dtype"] = dtype
    if w is not None:
        res["row_r"] = np.concatenate([q["row_r"] for q in parts])
        res["col_r"] = np.sum([q["col_r"] for q in parts], axis=0)
        prod = _Products(w)
        res["row_w"] = prod.mv(np.ones(n_i))
        res["col_w"] = prod.rmv(np.ones(m))
    return res


def _pcg(
    apply: Callable[[np.ndarray], np.ndarray], rhs: np.ndarray, diag: np.ndarray, rtol: float
) -> NDArray[np.float64] | None:
    """CG on the sum-to-zero subspace; None on negative curvature (not positive definite)."""
    inv = 1.0 / diag
    c = inv / inv.sum()
    scale = float(np.max(np.abs(diag)))

    def precond(r: np.ndarray) -> NDArray[np.float64]:  # Jacobi, projected onto sum(x) = 0
        z = inv * r
        projected: NDArray[np.float64] = z - c * z.sum()
        return projected

    rhs = rhs - rhs.mean()
    x = np.zeros_like(rhs)
    r = rhs.copy()
    z = precond(r)
    p = z.copy()
    rz = float(r @ z)
    stop = rtol * float(np.linalg.norm(rhs))
    for _ in range(_CG_MAXITER):
        if float(np.linalg.norm(r)) <= stop:
            break
        _count("cg")
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
        r -= r.mean()  # rounding leaves a constant part that no step can remove
        z = precond(r)
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    centred: NDArray[np.float64] = x - x.mean()
    return centred


class _Products:
    """``mat @ x`` and ``mat.T @ v`` in float32 BLAS for stored ``float32`` matrices.

    Several vectors go through one matrix-vector product each: OpenBLAS's skinny
    matrix-matrix product is several times slower than that here.
    """

    def __init__(self, mat: NDArray[np.float32]) -> None:
        self.mat = mat

    def mv(self, x: np.ndarray) -> NDArray[np.float64]:
        """``mat @ x``: x per item (vector or items × k), one number per model."""
        if x.ndim == 2:
            return np.stack([self.mv(c) for c in x.T], axis=1)
        _count("matvec")
        return (self.mat @ x.astype(np.float32)).astype(np.float64)

    def rmv(self, v: np.ndarray) -> NDArray[np.float64]:
        """``mat.T @ v``: v per model (vector or models × k), one number per item."""
        if v.ndim == 2:
            return np.stack([self.rmv(c) for c in v.T], axis=1)
        _count("matvec")
        return (v.astype(np.float32) @ self.mat).astype(np.float64)


def _max_abs(*xs: np.ndarray) -> float:
    return max(float(np.max(np.abs(x), initial=0.0)) for x in xs)


def _accept(
    f: float, trial: dict[str, Any], slope: float, objective: Callable[[float], dict[str, Any]]
) -> float:
    """Backtracking (Armijo) step size given the full step's pass ``trial``.

    ``f`` and the trial objective come from passes in the same precision.
    """
    if trial["f"] <= f + _ARMIJO * slope:
        return 1.0
    t = 0.5
    while not (objective(t)["f"] <= f + _ARMIJO * t * slope or t < 1e-10):
        t *= 0.5
    return t


Point = tuple[np.ndarray, ...]
Evaluate = Callable[[Point, np.dtype, bool, bool], dict[str, Any]]
"""``evaluate(x, dtype, grad, ll)``: a pass at ``x``; ``f`` (None unless ``ll``), sums."""


def _moved(x: Point, d: Point, t: float) -> Point:
    return tuple(xi + t * di for xi, di in zip(x, d, strict=True))


def _newton(
    lay: Chunked,
    x: Point,
    evaluate: Evaluate,
    direction: Callable[[dict[str, Any], Point, float], tuple[Point, Point]],
    max_iter: int,
    tol: float,
    f64: bool = True,
    only64: bool = False,
) -> tuple[Point, dict[str, Any], int, bool, float]:
    """Damped Newton, mixed precision; stops when the step is below ``tol``.

    ``direction(cur, x, cg_rtol)`` gives the Newton step and the gradient from the pass
    ``cur`` at ``x``. Far from the mode: float32 passes, loose CG, Armijo backtracking
    while float32 can resolve the predicted decrease (``_F32_MARGIN`` noise levels),
    full steps after that. Near it (step < ``_FULL_STEP``, as in the exact fit, or a
    predicted decrease below float32 rounding of the objective: an item every model
    solves has almost no curvature, so float32 gradient noise alone moves it by more
    than ``_FULL_STEP``): float64 passes, tight CG, full steps; the objective (one log
    per cell) is computed where the next step is likely the last. ``f64=False``:
    float32 only (a start); ``only64``: float64 throughout, Armijo backtracking until
    the step is below ``_FULL_STEP`` (the 3PL's Fisher scoring: its flat directions,
    e.g. a model below the guessing floor, drift under float32's full steps).
    Returns the final point (the last step applied), the pass before that step (its
    curvature serves the standard errors), iterations, converged, the last step size.
    """
    cur = evaluate(x, F64 if only64 else F32, True, True)
    converged, it, max_step = False, 0, np.inf
    while it < max_iter:
        it += 1
        d, g = direction(cur, x, _CG_RTOL if cur["dtype"] == F64 else _CG_RTOL_FAR)
        max_step = _max_abs(*d)
        if max_step < tol:  # the pass at x stands for the final point
            x = _moved(x, d, 1.0)
            converged = True
            break
        if only64 and max_step > _MAX_STEP:  # a near-singular observed curvature: damp
            d = tuple(di * (_MAX_STEP / max_step) for di in d)
            max_step = _MAX_STEP
        slope = float(sum(gi @ di for gi, di in zip(g, d, strict=True)))
        quiet = not only64 and -slope < _F32_MARGIN * lay.noise32  # float32 cannot resolve it
        near = f64 and (max_step < _FULL_STEP or (not only64 and -slope < lay.noise32))
        dtype = F64 if near or only64 else F32
        search = not (near or quiet)
        # the next step is likely the last (below tol) after a small step from float64
        last = cur["dtype"] == F64 and max_step < _LAST_STEP
        trial = evaluate(_moved(x, d, 1.0), dtype, True, search or last)
        t = 1.0
        if search:
            if cur["dtype"] != dtype or cur["f"] is None:  # compare in one precision
                cur = evaluate(x, dtype, False, True)

            def obj(
                t: float, x: Point = x, d: Point = d, dtype: np.dtype = dtype
            ) -> dict[str, Any]:
                return evaluate(_moved(x, d, t), dtype, False, True)

            t = _accept(cur["f"], trial, slope, obj)
        x = _moved(x, d, t)
        cur = trial if t == 1.0 else evaluate(x, dtype, True, True)
        max_step *= t
    if cur["f"] is None:  # the last pass skipped the objective: one pass for it
        cur.update({k: v for k, v in evaluate(cur["at"], F64, False, True).items()
                    if k in ("f", "ll")})  # fmt: skip
    return x, cur, it, converged, max_step


def _newton_1pl(
    lay: Chunked, settings: FitSettings, w: np.ndarray, tol: float, f64: bool
) -> tuple[Point, dict[str, Any], int, bool, float]:
    """1PL Newton-CG from the proportions (float32 only if not ``f64``)."""
    vt, vb = settings.theta_sd**-2, settings.b_sd**-2
    prod = _Products(w)

    def evaluate(x: Point, dtype: np.dtype, grad: bool, ll: bool) -> dict[str, Any]:
        th, b = x
        res = _pass_1pl(lay, th, b, dtype, w if grad else None, ll)
        res["at"] = x
        res["f"] = None if res["ll"] is None else (
            -res["ll"] + 0.5 * vt * float(th @ th) + 0.5 * vb * float(b @ b))  # fmt: skip
        return res

    def direction(cur: dict[str, Any], x: Point, rtol: float) -> tuple[Point, Point]:
        th, b = x
        g_th, g_b = -cur["row_r"] + vt * th, cur["col_r"] + vb * b
        d = cur["col_w"] + vb
        diag = cur["row_w"] + vt

        def schur(v: np.ndarray) -> NDArray[np.float64]:
            product: NDArray[np.float64] = diag * v - prod.mv(prod.rmv(v) / d)
            return product

        dth = _pcg(schur, -g_th - prod.mv(g_b / d), diag, rtol)
        if dth is None:  # cannot happen for a convex objective with priors; be loud
            raise FloatingPointError("1PL Schur complement is not positive definite")
        db = (-g_b + prod.rmv(dth)) / d
        return (dth, db), (g_th, g_b)

    return _newton(lay, _start(lay), evaluate, direction, settings.max_iter, tol, f64)


def fit_map_1pl_big(cells: Cells, settings: FitSettings) -> dict[str, Any]:
    with kernel_threads(1):  # BLAS calls are memory-bound products between the passes
        return _fit_1pl(cells, settings)


def _fit_1pl(cells: Cells, settings: FitSettings) -> dict[str, Any]:
    STATS.clear()
    lay = Chunked(cells)
    m, n_i = lay.shape
    vt, vb = settings.theta_sd**-2, settings.b_sd**-2
    w = np.empty((m, n_i), dtype=np.float32)
    (th, b), cur, it, converged, max_step = _newton_1pl(lay, settings, w, settings.tol, True)
    d = cur["col_w"] + vb
    s_diag = cur["row_w"] + vt - _sq_rmv(w, 1.0 / d)  # S_ii = D_ii - sum_j w_ij^2 / d_j
    var_th = _constrained(1.0 / s_diag)
    var_b = 1.0 / d + _sq_lmv(w, var_th) / d**2
    f = -cur["ll"] + 0.5 * vt * float(th @ th) + 0.5 * vb * float(b @ b)
    return {
        "theta": th, "theta_se": np.sqrt(var_th), "b": b, "b_se": np.sqrt(var_b),
        "a": None, "a_se": None,
        "loglik": cur["ll"] + log_binom_const(cells.k, cells.n),
        "log_posterior": -f, "iterations": it, "converged": converged,
        "max_step": max_step, "layout": lay.kind, "curvature": "observed",
    }  # fmt: skip


def _start(lay: Chunked) -> tuple[np.ndarray, np.ndarray]:
    """Abilities and difficulties from smoothed proportions (as the exact fit's start)."""
    m, n_i = lay.shape
    rows = lay.rows(F32)

    def sums(r0: int, r1: int) -> tuple[np.ndarray, ...]:
        k = np.empty((min(rows, r1 - r0), n_i), np.float32)
        n = np.empty_like(k)
        out = [np.empty(r1 - r0), np.empty(r1 - r0), np.zeros(n_i), np.zeros(n_i)]
        for i0 in range(r0, r1, rows):
            i1 = min(i0 + rows, r1)
            kk, nn = k[: i1 - i0], n[: i1 - i0]
            np.copyto(kk, lay.K[i0:i1])
            np.copyto(nn, lay.N[i0:i1])
            out[0][i0 - r0 : i1 - r0] = kk.sum(1, dtype=np.float64)
            out[1][i0 - r0 : i1 - r0] = nn.sum(1, dtype=np.float64)
            _colsum(out[2], kk)
            _colsum(out[3], nn)
        return tuple(out)

    parts = lay.run(sums)
    row_k, row_n = (np.concatenate([q[j] for q in parts]) for j in (0, 1))
    col_k, col_n = (np.sum([q[j] for q in parts], axis=0) for j in (2, 3))
    th = logit((row_k + 0.5) / (row_n + 1.0))
    th -= th.mean()
    th_bar = _lmv(lay.N, th) / np.maximum(col_n, 1e-12)
    return th, th_bar - logit((col_k + 0.5) / (col_n + 1.0))


def _blocked(mat: np.ndarray, fn: Callable[[int, int, np.ndarray, np.ndarray], Any]) -> list[Any]:
    """``fn(r0, r1, mat[r0:r1] as float32, scratch)`` over row blocks of ~1 M cells.

    The float32 copy (for compact counts) and the scratch block are allocated once.
    """
    step = max(1, (_SCATTER // 4) // max(mat.shape[1], 1))
    copy = np.empty((min(step, mat.shape[0]), mat.shape[1]), np.float32)
    scratch = np.empty_like(copy)
    out = []
    for r0 in range(0, mat.shape[0], step):
        blk = mat[r0 : r0 + step]
        h = blk.shape[0]
        if blk.dtype != np.float32:
            np.copyto(copy[:h], blk)
            blk = copy[:h]
        out.append(fn(r0, r0 + h, blk, scratch[:h]))
    return out


def _lmv(mat: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``v @ mat`` (per item) for a compact or float32 matrix."""
    v32 = v.astype(np.float32)
    parts = _blocked(mat, lambda r0, r1, x, _: v32[r0:r1] @ x)
    return np.asarray(np.sum(parts, axis=0, dtype=np.float64))


def _sq_rmv(mat: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``mat**2 @ v`` (per model)."""
    v32 = v.astype(np.float32)
    parts = _blocked(mat, lambda _r0, _r1, x, sq: np.square(x, out=sq) @ v32)
    return np.concatenate(parts).astype(np.float64)


def _sq_lmv(mat: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``u @ mat**2`` (per item)."""
    u32 = u.astype(np.float32)
    parts = _blocked(mat, lambda r0, r1, x, sq: u32[r0:r1] @ np.square(x, out=sq))
    return np.asarray(np.sum(parts, axis=0, dtype=np.float64))


def _constrained(v: np.ndarray) -> NDArray[np.float64]:
    """Diagonal of ``V - V 1 1^T V / 1^T V 1`` for ``V = diag(v)``: the sum-to-zero constraint."""
    diagonal: NDArray[np.float64] = v - v * v / v.sum()
    return diagonal


def _pass_2pl(
    lay: Chunked,
    th: np.ndarray,
    b: np.ndarray,
    a: np.ndarray,
    dtype: np.dtype,
    store: tuple[np.ndarray, np.ndarray] | None,
    ll: bool = True,
) -> dict[str, Any]:
    """Objective (``ll``) and, with ``store=(w, r)``: w and r stored, gradient and curvature sums.

    In the pass: the per-cell work and, in float64, the gradient's sums (they need that
    precision). Every other sum is a BLAS product with the stored float32 ``w``/``r``
    afterwards (:func:`_sums_2pl`): cheaper than a reduction per cell in the pass.
    """
    _count(f"pass_2pl_{dtype}" + ("" if store is not None else "_f") + ("" if ll else "_noll"))
    m, n_i = lay.shape
    th_c, b_c, a_c = th.astype(dtype), b.astype(dtype), a.astype(dtype)
    rows = lay.rows(dtype)
    exact = dtype == F64 and store is not None  # gradient sums in the pass

    def task(r0: int, r1: int) -> dict[str, Any]:
        buf = _Buffers(min(rows, r1 - r0), n_i, dtype)
        out: dict[str, Any] = {"ll": 0.0}
        if exact:
            out.update(col_r=np.zeros(n_i), col_re=np.zeros(n_i), r_a=np.empty(r1 - r0))
        for i0 in range(r0, r1, rows):
            i1 = min(i0 + rows, r1)
            eta, e, lg, p, k, n = buf.views(i1 - i0)
            np.subtract(th_c[i0:i1, None], b_c[None, :], out=eta)
            eta *= a_c
            if ll:
                _logistic_parts(eta, e, lg, p)
            else:
                _logistic(eta, e, p)
            np.copyto(k, lay.K[i0:i1])
            np.copyto(n, lay.N[i0:i1])
            if ll:
                out["ll"] += _loglik(k, n, eta, lg, e)
            if store is None:
                continue
            n *= p  # n p
            k -= n  # r
            p *= n
            n -= p  # w = n p (1 - p)
            store[0][i0:i1] = n
            store[1][i0:i1] = k
            if exact:
                np.multiply(k, a_c, out=p)
                out["r_a"][i0 - r0 : i1 - r0] = p.sum(1)
                _colsum(out["col_r"], k)
                k *= eta
                _colsum(out["col_re"], k)
        return out

    parts = lay.run(task)
    res: dict[str, Any] = {"ll": float(np.sum([q["ll"] for q in parts])) if ll else None}
    res["dtype"] = dtype
    if store is not None:
        if exact:
            res["r_a"] = np.concatenate([q["r_a"] for q in parts])
            for key in ("col_r", "col_re"):
                res[key] = np.sum([q[key] for q in parts], axis=0)
        res.update(_sums_2pl(store[0], store[1], th, b, a, gradient=not exact))
    return res


def _sums_2pl(
    w: np.ndarray, r: np.ndarray, th: np.ndarray, b: np.ndarray, a: np.ndarray, gradient: bool
) -> dict[str, np.ndarray]:
    """Curvature sums (and, for a float32 pass, gradient sums) from the stored w and r.

    With ``η_ij = a_j (θ_i - b_j)``: ``Σ_i w η = a (θ·w - b Σw)`` and ``Σ_i w η² =
    a² (θ²·w - 2 b θ·w + b² Σw)``, so three weighted column sums of ``w`` (one BLAS
    read) give them all; likewise for ``r``.
    """
    _count("sums")
    th_c = th - th.mean()  # centred abilities: less cancellation in the float32 sums
    shift = th.mean()
    bc = b - shift
    tw = _Products(w).rmv(np.stack([np.ones_like(th), th_c, th_c * th_c], axis=1))
    out = {
        "col_w": tw[:, 0],
        "col_we": a * (tw[:, 1] - bc * tw[:, 0]),
        "col_wee": a * a * (tw[:, 2] - 2.0 * bc * tw[:, 1] + bc * bc * tw[:, 0]),
        "row_waa": _Products(w).mv(a * a),
    }
    if gradient:
        tr = _Products(r).rmv(np.stack([np.ones_like(th), th_c], axis=1))
        out.update(col_r=tr[:, 0], col_re=a * (tr[:, 1] - bc * tr[:, 0]),
                   r_a=_Products(r).mv(a))  # fmt: skip
    return out


class _Cross2PL:
    """Products with the 2PL cross blocks from the stored ``w`` and ``r``.

    ``C_tb = -W diag(a²)`` and ``C_ta = (W ∘ η - R) diag(a)`` (observed; Fisher drops
    ``R``), with ``η_ij = a_j (θ_i - b_j)``, so ``(W ∘ η) x = θ ∘ W(a x) - W(a b x)``:
    every product is a BLAS product with ``W`` (several vectors at once) or ``R``.
    """

    def __init__(
        self, w: _Products, r: _Products, th: np.ndarray, b: np.ndarray, a: np.ndarray, obs: bool
    ) -> None:
        self.w, self.r, self.th, self.b, self.a, self.obs = w, r, th, b, a, obs

    def t(self, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(C_tb^T v, C_ta^T v)``."""
        a, aa = self.a, self.a * self.a
        y = self.w.rmv(np.stack([v, self.th * v], axis=1))  # W^T [v, θ v]
        ce = a * y[:, 1] - a * self.b * y[:, 0]  # (W ∘ η)^T v
        if self.obs:
            ce -= self.r.rmv(v)
        return -aa * y[:, 0], a * ce

    def __call__(self, ub: np.ndarray, ua: np.ndarray) -> NDArray[np.float64]:
        """``C_tb ub + C_ta ua`` (two products with ``W``, one with ``R``)."""
        a, aa = self.a, self.a * self.a
        x = a * ua
        out: NDArray[np.float64] = self.th * self.w.mv(a * x) - self.w.mv(aa * ub + a * self.b * x)
        if self.obs:
            out -= self.r.mv(x)
        return out


def fit_map_2pl_big(
    cells: Cells,
    settings: FitSettings,
    start: Any = None,
    *,
    floor: np.ndarray | None = None,
    centre: float = 0.0,
    x0: tuple[np.ndarray, ...] | None = None,
) -> dict[str, Any]:
    """2PL (3PL with a guessing ``floor``) MAP, log a prior centred at ``centre``, from
    ``x0`` = (θ, b, log a) if given, else from ``start``'s (θ, b) or a loose 1PL fit."""
    with kernel_threads(1):
        return _fit_2pl(cells, settings, start, floor, centre, x0)


def _pass_floor(
    lay: Chunked,
    th: np.ndarray,
    b: np.ndarray,
    a: np.ndarray,
    c: np.ndarray,
    dtype: np.dtype,
    store: tuple[np.ndarray, np.ndarray] | None,
    ll: bool = True,
    observed: bool = True,
) -> dict[str, Any]:
    """:func:`_pass_2pl` for P = c + (1 − c) σ(η) (:mod:`curation.irt._guess`): objective
    and, with ``store``, curvature weights W (observed, else Fisher) and scores R stored
    and the gradient's sums (in float64). Plain array operations per row block: the 3PL
    is not the hot path."""
    _count(f"pass_floor_{dtype}" + ("" if store is not None else "_f") + ("" if ll else "_noll"))
    m, n_i = lay.shape
    th_c, b_c, a_c, c_c = (v.astype(dtype) for v in (th, b, a, c))
    rows = lay.rows(dtype)

    def task(r0: int, r1: int) -> dict[str, Any]:
        out: dict[str, Any] = {"ll": 0.0}
        if store is not None:
            out.update(col_r=np.zeros(n_i), col_re=np.zeros(n_i), r_a=np.empty(r1 - r0))
        for i0 in range(r0, r1, rows):
            i1 = min(i0 + rows, r1)
            eta = th_c[i0:i1, None] - b_c[None, :]
            eta *= a_c
            k, n = lay.K[i0:i1].astype(dtype), lay.N[i0:i1].astype(dtype)
            if ll:
                out["ll"] += floor_loglik(k, n, eta, c_c)
            if store is None:
                continue
            w, r = floor_terms(k, n, eta, c_c, observed=observed)
            store[0][i0:i1] = w
            store[1][i0:i1] = r
            out["r_a"][i0 - r0 : i1 - r0] = (r * a_c).sum(1, dtype=np.float64)
            out["col_r"] += r.sum(0, dtype=np.float64)
            out["col_re"] += (r * eta).sum(0, dtype=np.float64)
        return out

    parts = lay.run(task)
    res: dict[str, Any] = {"ll": float(np.sum([q["ll"] for q in parts])) if ll else None}
    res["dtype"] = dtype
    if store is not None:
        res["r_a"] = np.concatenate([q["r_a"] for q in parts])
        for key in ("col_r", "col_re"):
            res[key] = np.sum([q[key] for q in parts], axis=0)
        res.update(_sums_2pl(store[0], store[1], th, b, a, gradient=False))
    return res


def _fit_2pl(
    cells: Cells,
    settings: FitSettings,
    start: Any,
    floor: np.ndarray | None,
    centre: float,
    x0: tuple[np.ndarray, ...] | None,
) -> dict[str, Any]:
    STATS.clear()
    lay = Chunked(cells)
    m, n_i = lay.shape
    vt, vb, va = settings.theta_sd**-2, settings.b_sd**-2, settings.log_a_sd**-2
    w = np.empty((m, n_i), dtype=np.float32)
    r = np.empty((m, n_i), dtype=np.float32)
    if x0 is not None:
        th, b, al = (v.copy() for v in x0)
    else:
        if start is None:  # a loose 1PL start on the same storage (float32 passes only)
            (th, b), *_ = _newton_1pl(lay, settings, w, _START_TOL, False)
        else:
            th, b = start.theta.copy(), start.b.copy()
        al = np.zeros(n_i)
    pw, pr = _Products(w), _Products(r)

    def penalty(th: np.ndarray, b: np.ndarray, al: np.ndarray) -> float:
        d = al - centre
        return 0.5 * (vt * float(th @ th) + vb * float(b @ b) + va * float(d @ d))

    def evaluate(
        x: Point, dtype: np.dtype, grad: bool, ll: bool, fisher: bool = False
    ) -> dict[str, Any]:
        """A pass at ``x``. With a floor the stored ``w`` is the observed curvature (it
        may be indefinite) unless ``fisher``; without one both are the same."""
        th, b, al = x
        store = (w, r) if grad else None
        if floor is None:
            res = _pass_2pl(lay, th, b, np.exp(al), dtype, store, ll)
        else:
            res = _pass_floor(lay, th, b, np.exp(al), floor, dtype, store, ll, not fisher)
        res["observed_w"] = floor is not None and not fisher
        res["at"] = x
        res["f"] = None if res["ll"] is None else -res["ll"] + penalty(th, b, al)
        return res

    def newton(h: dict[str, Any], observed: bool, rtol: float) -> dict[str, Any] | None:
        th, b, al = h["at"]
        a = np.exp(al)
        g_th = -h["r_a"] + vt * th
        g_b = a * h["col_r"] + vb * b
        g_al = -h["col_re"] + va * (al - centre)
        h_bb = a * a * h["col_w"] + vb
        h_aa = h["col_wee"] + va
        h_ba = -a * h["col_we"]
        if observed:
            h_aa = h_aa - h["col_re"]
            h_ba = h_ba + a * h["col_r"]
        det = h_bb * h_aa - h_ba * h_ba
        if not (np.all(det > 0) and np.all(h_bb > 0)):
            return None
        i_bb, i_aa, i_ba = h_aa / det, h_bb / det, -h_ba / det
        cross = _Cross2PL(pw, pr, th, b, a, observed)
        diag = h["row_waa"] + vt
        if not np.all(diag > 0):  # (observed 3PL weights can be negative)
            return None

        def apply(v: np.ndarray) -> NDArray[np.float64]:
            xb, xa = cross.t(v)
            product: NDArray[np.float64] = diag * v - cross(
                i_bb * xb + i_ba * xa, i_ba * xb + i_aa * xa
            )
            return product

        v_b = i_bb * g_b + i_ba * g_al
        v_a = i_ba * g_b + i_aa * g_al
        dth = _pcg(apply, -g_th + cross(v_b, v_a), diag, rtol)
        if dth is None:
            return None
        tb, ta = cross.t(dth)
        r_b, r_a = -g_b - tb, -g_al - ta
        return {
            "g": (g_th, g_b, g_al),
            "d": (dth, i_bb * r_b + i_ba * r_a, i_ba * r_b + i_aa * r_a),
            "i": (i_bb, i_aa, i_ba), "diag": diag, "a": a, "observed": observed,
            "at": h["at"],
        }  # fmt: skip

    last: dict[str, Any] = {}

    def curvature(cur: dict[str, Any], observed: bool, rtol: float) -> dict[str, Any]:
        """Newton (observed) if asked and positive definite, else Fisher scoring; with a
        floor, the observed weights stored by the pass are replaced by Fisher's first."""
        s = newton(cur, observed, rtol)
        if s is None:
            if cur["observed_w"]:
                cur = evaluate(cur["at"], cur["dtype"], True, False, fisher=True)
            s = newton(cur, False, rtol)
        if s is None:  # Fisher information plus priors is positive definite: cannot happen
            raise FloatingPointError("2PL Fisher information is not positive definite")
        return s

    def direction(cur: dict[str, Any], _x: Point, rtol: float) -> tuple[Point, Point]:
        # x is cur["at"] (newton reads it there). float32 phase: Fisher scoring (positive
        # definite, and its cross block needs no r: half the CG's memory traffic);
        # float64: the observed Hessian (Newton); with a floor, every pass is float64
        s = curvature(cur, cur["dtype"] == F64, rtol)
        last.clear()
        last.update(s)
        return s["d"], s["g"]

    (th, b, al), cur, it, converged, max_step = _newton(
        lay, (th, b, al), evaluate, direction, settings.max_iter, settings.tol,
        only64=floor is not None,
    )  # fmt: skip
    s = last if last.get("at") is cur["at"] else None  # else: stopped at max_iter
    s = s or curvature(cur, True, _CG_RTOL)
    # standard errors from the curvature at the last pass (the final point up to < tol)
    i_bb, i_aa, i_ba = s["i"]
    a = s["a"]
    aa = a * a
    th_c, b_c, _ = cur["at"]
    obs = s["observed"]
    # S_ii = diag - sum_j [c_tb, c_ta]_ij E_j^-1 [c_tb, c_ta]_ij, per cell c_tb = -w aa,
    # c_ta = (w eta - r) a; e_b = c_tb i_bb + c_ta i_ba, e_a = c_tb i_ba + c_ta i_aa
    s_diag = s["diag"] - _cross_quad(w, r, th_c, b_c, a, obs, aa * aa * i_bb, aa * i_aa,
                                     -2.0 * aa * a * i_ba)  # fmt: skip
    var_th = _constrained(1.0 / s_diag)
    var_b, var_al = _cross_var(w, r, th_c, b_c, a, obs, var_th, (i_bb, i_ba), (i_ba, i_aa))
    var_b += i_bb
    var_al += i_aa
    f = -cur["ll"] + penalty(th, b, al)
    return {
        "theta": th, "theta_se": np.sqrt(var_th), "b": b, "b_se": np.sqrt(var_b),
        "a": np.exp(al), "a_se": np.exp(al) * np.sqrt(var_al),
        "loglik": cur["ll"] + log_binom_const(cells.k, cells.n),
        "log_posterior": -f, "iterations": it, "converged": converged,
        "max_step": max_step, "layout": lay.kind,
        "curvature": "observed" if obs else "fisher", "x": (th, b, al),
    }  # fmt: skip


def _c_block(
    w: np.ndarray, r: np.ndarray, th: np.ndarray, b: np.ndarray, a: np.ndarray, obs: bool,
    c: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """``w η - r`` (observed) or ``w η`` (Fisher) for a row block, float32, into ``c``."""
    np.subtract(th[:, None], b[None, :], out=c, dtype=np.float32)
    c *= a.astype(np.float32)
    c *= w
    if obs:
        c -= r
    return c


def _cross_quad(
    w: np.ndarray, r: np.ndarray, th: np.ndarray, b: np.ndarray, a: np.ndarray, obs: bool,
    vww: np.ndarray, vcc: np.ndarray, vwc: np.ndarray,
) -> np.ndarray:  # fmt: skip
    """Per model ``sum_j w² vww + c² vcc + w c vwc`` (c per cell from :func:`_c_block`)."""
    vs = [v.astype(np.float32) for v in (vww, vcc, vwc)]

    def part(r0: int, r1: int, wb: np.ndarray, c: np.ndarray) -> NDArray[np.float64]:
        _c_block(wb, r[r0:r1], th[r0:r1], b, a, obs, c)
        out: NDArray[np.float32] = np.square(wb) @ vs[0]
        out += (wb * c) @ vs[2]
        np.square(c, out=c)
        out += c @ vs[1]
        return out.astype(np.float64)

    return np.concatenate(_blocked(w, part))


def _cross_var(
    w: np.ndarray, r: np.ndarray, th: np.ndarray, b: np.ndarray, a: np.ndarray, obs: bool,
    var_th: np.ndarray, eb: tuple[np.ndarray, np.ndarray], ea: tuple[np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """Per item ``sum_i var_th_i e_ij^2`` for e = c_tb i_1 + c_ta i_2, (i_1, i_2) = eb, ea."""
    aa = a * a
    coef = [(-aa * i1, a * i2) for i1, i2 in (eb, ea)]
    u32 = var_th.astype(np.float32)

    def part(r0: int, r1: int, wb: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        _c_block(wb, r[r0:r1], th[r0:r1], b, a, obs, c)
        out = []
        for sw, sc in coef:
            e = wb * sw.astype(np.float32)
            e += c * sc.astype(np.float32)
            np.square(e, out=e)
            out.append((u32[r0:r1] @ e).astype(np.float64))
        return out[0], out[1]

    parts = _blocked(w, part)
    return np.sum([q[0] for q in parts], axis=0), np.sum([q[1] for q in parts], axis=0)
