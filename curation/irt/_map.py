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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from curation.irt._data import Cells, Dense, Sparse, log_binom_const, make_layout
from curation.irt._guess import floor_loglik, floor_terms
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
    c: np.ndarray | None = None
    """The guessing floor of each item (3PL), None for 1PL/2PL."""


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

    def __init__(
        self,
        lay: Dense | Sparse,
        settings: FitSettings,
        floor: np.ndarray | None = None,
        centre: float = 0.0,
    ) -> None:
        self.lay = lay
        self.q = sum_zero_basis(lay.shape[0])
        self.vt = settings.theta_sd**-2
        self.vb = settings.b_sd**-2
        self.va = settings.log_a_sd**-2
        self.centre = centre
        """Centre of the log a prior (see :func:`fit_map_2pl`: it identifies the scale)."""
        self.floor = None if floor is None else lay.cols(floor)
        """The guessing floor c per cell (3PL), None for the logistic 2PL."""

    def prior(self, th: np.ndarray, b: np.ndarray, al: np.ndarray) -> float:
        """Twice the negative log prior (up to a constant)."""
        d = al - self.centre
        return self.vt * float(th @ th) + self.vb * float(b @ b) + self.va * float(d @ d)

    def eta(self, th: np.ndarray, b: np.ndarray, al: np.ndarray) -> NDArray[np.float64]:
        lay = self.lay
        return lay.cols(np.exp(al)) * (lay.rows(th) - lay.cols(b))

    def objective(self, eta: np.ndarray, th: np.ndarray, b: np.ndarray, al: np.ndarray) -> float:
        lay = self.lay
        if self.floor is None:
            ll = float(np.sum(lay.K * eta) - np.sum(lay.N * softplus(eta)))
        else:
            ll = floor_loglik(lay.K, lay.N, eta, self.floor)
        return -ll + 0.5 * self.prior(th, b, al)

    def newton(
        self, eta: np.ndarray, th: np.ndarray, b: np.ndarray, al: np.ndarray, *, observed: bool
    ) -> dict[str, np.ndarray] | None:
        """Gradient, Schur complement and item-block inverses; None if not positive definite."""
        lay, q = self.lay, self.q
        a = np.exp(al)
        if self.floor is None:
            p = logistic(eta)
            np_ = lay.N * p
            r = lay.K - np_
            w = np_ * (1.0 - p)
        else:
            w, r = floor_terms(lay.K, lay.N, eta, self.floor, observed=observed)
        col_r = lay.col_sum(r)
        g_th = -lay.mv(r, a) + self.vt * th
        g_b = a * col_r + self.vb * b
        g_al = -lay.col_sum(r * eta) + self.va * (al - self.centre)
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
        if observed and not (np.all(det > 0) and np.all(h_bb > 0)):
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


SCALE_TOL = 1e-11
"""The 2PL/3PL scale is identified by mean log a = 0 to within this (see :func:`fit_map_2pl`):
far below the fit's own tolerance, so two fits of the same data agree to it."""
_SCALE_ROUNDS = 30


def identify_scale(
    solve: Callable[[float, tuple[np.ndarray, ...] | None], dict[str, Any]],
    centre: float = 0.0,
    x0: tuple[np.ndarray, ...] | None = None,
) -> dict[str, Any]:
    """The MAP fit whose discriminations have geometric mean 1 (mean log a = 0).

    A 2PL likelihood is unchanged by (θ, b, a) → (sθ, sb, a/s), so only the priors fix
    the scale, and N(0, ·) priors on θ and b pull it in as hard as there are abilities
    and items to pull: with 4,000 models and 250 items the θ prior wins, the abilities
    shrink and every a grows to compensate (the issue's leaderboard: a up to 105,
    abilities within −0.9..0.14). Identifying the scale by mean log a = 0 instead makes
    θ and b logits of an average item, as in 1PL, and leaves the log a prior one job:
    the items' spread around that average.

    The constrained mode is the unconstrained mode under a log a prior centred at m for
    the m whose mode has mean log a = 0 (m is the constraint's Lagrange multiplier, up
    to a factor). Along the scale direction the mode's mean μ satisfies
    μ − m = D e^{−2μ} (D ≥ 0: the θ and b priors' pull), so dμ/dm ≈ 1/(1 + 2(μ − m)):
    a Newton step on m, then secant steps (the measured dμ/dm), each a warm-started
    refit. ``solve(m, start)`` returns the fit
    (:class:`MapFit` fields plus ``"x"``, its final (θ, b, log a)); ``centre`` and
    ``x0`` start the search (a previous fit's, when refitting nearby data; see
    :func:`prior_centre`).
    """
    res = solve(centre, x0)
    iterations = res["iterations"]
    last: tuple[float, float] | None = None
    for _ in range(_SCALE_ROUNDS):
        mu = float(np.mean(np.log(res["a"])))
        if abs(mu) < SCALE_TOL or not res["converged"]:  # (stopped by max_iter: say so)
            break
        slope = 1.0 / (1.0 + 2.0 * max(mu - centre, 0.0))
        if last is not None and last[0] != centre and 0.0 < (mu - last[1]) / (centre - last[0]):
            slope = (mu - last[1]) / (centre - last[0])  # secant: the measured dμ/dm
        last = (centre, mu)
        centre -= mu / slope
        res = solve(centre, res["x"])
        iterations += res["iterations"]
    else:
        res["converged"] = False
    res["iterations"] = iterations
    res["scale_centre"] = centre
    return res


def prior_centre(th: np.ndarray, b: np.ndarray, settings: FitSettings) -> float:
    """The log a prior centre m whose mode has mean log a = 0, given that mode's θ and b:
    m = −(|θ|²/σθ² + |b|²/σb²) σa² / items (the scale direction's stationarity, above).
    From a nearby point (the 1PL mode, a fit of nearly the same data) it is the start
    that leaves :func:`identify_scale` a round or two."""
    vt, vb, va = settings.theta_sd**-2, settings.b_sd**-2, settings.log_a_sd**-2
    return -(vt * float(th @ th) + vb * float(b @ b)) / (va * max(b.size, 1))


def fit_map_2pl(
    cells: Cells,
    settings: FitSettings,
    start: MapFit | None = None,
    floor: np.ndarray | None = None,
) -> MapFit:
    """2PL MAP (3PL with a guessing ``floor`` c per item), scale identified by mean log a = 0
    (:func:`identify_scale`); starts at the 1PL mode (``start``, else fitted here)."""
    res = fit_2pl_raw(cells, settings, start, floor)
    res.pop("x")
    res.pop("scale_centre")
    return MapFit(**res, c=None if floor is None else np.asarray(floor, dtype=np.float64))


def fit_2pl_raw(
    cells: Cells,
    settings: FitSettings,
    start: MapFit | None = None,
    floor: np.ndarray | None = None,
    centre: float = 0.0,
    x0: tuple[np.ndarray, ...] | None = None,
) -> dict[str, Any]:
    """:func:`fit_map_2pl` as a dict with the final point ``"x"`` and ``"scale_centre"``,
    from a previous fit's (``centre``, ``x0``) when given: the warm start of a search
    over the guessing floor."""
    if _big(cells, settings):
        from curation.irt._map_big import fit_map_2pl_big

        def solve(centre: float, x: tuple[np.ndarray, ...] | None) -> dict[str, Any]:
            return fit_map_2pl_big(cells, settings, start, floor=floor, centre=centre, x0=x)

        if x0 is None:  # the 1PL mode: a start on the identified scale, and its centre
            start = start if start is not None else fit_map_1pl(cells, settings)
            centre = prior_centre(start.theta, start.b, settings)
    else:
        lay = make_layout(cells, settings.layout)
        if x0 is None:
            one = start if start is not None else fit_map_1pl(cells, settings)
            x0 = (one.theta, one.b, np.zeros(lay.shape[1]))
            centre = prior_centre(one.theta, one.b, settings)

        def solve(centre: float, x: tuple[np.ndarray, ...] | None) -> dict[str, Any]:
            assert x is not None
            return _solve_2pl(_TwoPL(lay, settings, floor, centre), cells, settings, x)

    return identify_scale(solve, centre, x0)


def newton_2pl(
    model: _TwoPL, settings: FitSettings, x0: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float, int, bool, float]:
    """Damped Newton from ``x0`` = (θ, b, log a): θ, b, log a, η, objective, iterations,
    converged, last step (the observed Hessian where positive definite, else Fisher)."""
    th, b, al = (v.copy() for v in x0)
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
    return th, b, al, eta, f, it, converged, max_step


def _solve_2pl(
    model: _TwoPL, cells: Cells, settings: FitSettings, x0: tuple[np.ndarray, ...]
) -> dict[str, Any]:
    """Damped Newton from ``x0`` = (θ, b, log a) to the mode, then Laplace errors."""
    lay = model.lay
    th, b, al, eta, f, it, converged, max_step = newton_2pl(model, settings, x0)
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
    return {
        "theta": th,
        "theta_se": np.sqrt(var_th),
        "b": b,
        "b_se": np.sqrt(var_b),
        "a": a,
        "a_se": a * np.sqrt(var_al),
        "loglik": -(f - 0.5 * model.prior(th, b, al)) + log_binom_const(cells.k, cells.n),
        "log_posterior": -f,
        "iterations": it,
        "converged": converged,
        "max_step": max_step,
        "layout": lay.kind,
        "curvature": curvature,
        "x": (th, b, al),
    }
