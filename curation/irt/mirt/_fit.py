"""Compensatory multidimensional 2PL: pooled data, MAP fit, standardised solution.

P(correct | theta_j, a_i, b_i) = sigma(a_i . theta_j - b_i), binomial over a cell's trials.
Abilities are fixed effects (LLM panels are a few dozen models), so the fit is a
regularised logistic matrix factorisation of the models x items logit matrix:

    -log posterior = -sum_cells [k eta - n log(1 + e^eta)]
                     + |theta|^2 / 2 s_theta^2 + |A|^2 / 2 s_a^2 + |b|^2 / 2 s_b^2.

The Gaussian priors fix the scale (theta and A trade off, and the penalty is smallest
when they balance); the rotation is left free (both priors are rotation invariant) and
fixed only afterwards, on the standardised solution (abilities centred with identity
covariance over the panel, loadings on their principal axes). That reparametrisation
leaves every cell probability, hence the likelihood, unchanged.

Missing cells are cells with zero trials. The optimiser is L-BFGS-B with the analytic
gradient, started from a truncated SVD of the smoothed logit matrix.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl
from numpy.typing import NDArray
from scipy.optimize import minimize
from scipy.special import expit, gammaln

from curation.irt._rows import check_responses
from curation.irt._threads import kernel_threads
from curation.irt.mirt._settings import MirtPriorSettings
from curation.responses import ResponseMatrix

ITEM_KEY_SEP = "/"


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class MirtData:
    """Responses of one panel to the items of several benchmarks, as dense matrices.

    Items are keyed ``"<benchmark>/<item>"``; a missing cell has ``trials == 0``.
    """

    models: tuple[str, ...]
    items: tuple[str, ...]
    benchmarks: tuple[str, ...]
    item_benchmark: np.ndarray
    """Shape (n_items,): index into ``benchmarks``."""
    correct: np.ndarray
    """Shape (n_models, n_items): correct trials (0 where missing)."""
    trials: np.ndarray
    """Shape (n_models, n_items): trials (0 where missing)."""
    dropped: Mapping[str, int] = field(default_factory=dict)
    """What pooling left out: models not common to all benchmarks, sparse/constant items."""

    @property
    def n_models(self) -> int:
        return len(self.models)

    @property
    def n_items(self) -> int:
        return len(self.items)

    @property
    def present(self) -> np.ndarray:
        return self.trials > 0

    @property
    def n_cells(self) -> int:
        return int(np.count_nonzero(self.trials))

    @property
    def missing_share(self) -> float:
        return 1.0 - self.n_cells / max(self.n_models * self.n_items, 1)

    def benchmark_items(self, benchmark: str) -> np.ndarray:
        """Column indices of ``benchmark``'s items."""
        return np.flatnonzero(self.item_benchmark == self.benchmarks.index(benchmark))

    def item_label(self, i: int) -> tuple[str, str]:
        """``(benchmark, item id within the benchmark)`` of column ``i``."""
        bench = self.benchmarks[int(self.item_benchmark[i])]
        return bench, self.items[i][len(bench) + len(ITEM_KEY_SEP) :]

    def masked(self, keep: np.ndarray) -> MirtData:
        """The same panel and items with only the cells where ``keep`` is true observed."""
        keep = np.asarray(keep, dtype=bool)
        return replace(
            self, correct=np.where(keep, self.correct, 0.0), trials=np.where(keep, self.trials, 0.0)
        )

    def observed_scores(self) -> np.ndarray:
        """Shape (n_models, n_benchmarks): share of trials correct (NaN if no response)."""
        out = np.full((self.n_models, len(self.benchmarks)), np.nan)
        for b in range(len(self.benchmarks)):
            cols = self.item_benchmark == b
            n = self.trials[:, cols].sum(axis=1)
            k = self.correct[:, cols].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[:, b] = np.where(n > 0, k / np.where(n > 0, n, 1), np.nan)
        return out


def pool_responses(
    tables: Mapping[str, pl.DataFrame],
    *,
    common_models: bool = True,
    min_models_per_item: int = 1,
    drop_constant_items: bool = True,
) -> MirtData:
    """Pool long response tables (one per benchmark) into one models x items matrix.

    ``common_models`` keeps only models that answered every benchmark (otherwise the
    union, with missing blocks). Items answered by fewer than ``min_models_per_item``
    models, and (``drop_constant_items``) items every model solved or every model
    failed, carry no information about the dimensions and are dropped.
    """
    if not tables:
        raise ValueError("no benchmarks to pool")
    mats: dict[str, ResponseMatrix] = {}
    for name, df in tables.items():
        mats[name] = ResponseMatrix.from_responses(check_responses(df, name=name))
    model_sets = [set(m.models) for m in mats.values()]
    union = set().union(*model_sets)
    kept_models = set.intersection(*model_sets) if common_models else union
    models = tuple(sorted(kept_models))
    if not models:
        raise ValueError("no model answered every benchmark (set common_models to false)")
    row_of = {m: j for j, m in enumerate(models)}

    keys: list[str] = []
    bench_idx: list[int] = []
    correct_cols: list[np.ndarray] = []
    trial_cols: list[np.ndarray] = []
    n_few = n_const = 0
    benchmarks = tuple(tables)
    for b, (name, mat) in enumerate(mats.items()):
        rows_src = [i for i, m in enumerate(mat.models) if m in row_of]
        rows_dst = [row_of[mat.models[i]] for i in rows_src]
        trials = np.zeros((len(models), len(mat.items)))
        correct = np.zeros_like(trials)
        trials[rows_dst] = mat.trials[rows_src]
        rates = np.nan_to_num(mat.rates[rows_src])
        correct[rows_dst] = np.rint(rates * mat.trials[rows_src])
        n_models = (trials > 0).sum(axis=0)
        k_sum, n_sum = correct.sum(axis=0), trials.sum(axis=0)
        few = n_models < max(min_models_per_item, 1)
        const = (
            (~few) & ((k_sum == 0) | (k_sum == n_sum))
            if drop_constant_items
            else np.zeros_like(few)
        )
        n_few += int(few.sum())
        n_const += int(const.sum())
        keep = ~(few | const)
        for i in np.flatnonzero(keep):
            keys.append(f"{name}{ITEM_KEY_SEP}{mat.items[i]}")
            bench_idx.append(b)
        correct_cols.append(correct[:, keep])
        trial_cols.append(trials[:, keep])
    trials = np.concatenate(trial_cols, axis=1)
    correct = np.concatenate(correct_cols, axis=1)
    empty = trials.sum(axis=1) == 0
    if empty.any():
        keep_rows = ~empty
        models = tuple(m for m, k in zip(models, keep_rows, strict=True) if k)
        trials, correct = trials[keep_rows], correct[keep_rows]
    if not keys or len(models) < 2:
        raise ValueError("nothing left to fit after pooling (too few models or items)")
    return MirtData(
        models=models,
        items=tuple(keys),
        benchmarks=benchmarks,
        item_benchmark=np.asarray(bench_idx, dtype=np.int64),
        correct=correct,
        trials=trials,
        dropped={
            "models_not_common": len(union) - len(kept_models),
            "models_without_items": int(empty.sum()),
            "items_few_models": n_few,
            "items_constant": n_const,
        },
    )


# --------------------------------------------------------------------------- fit


@dataclass(frozen=True)
class MirtFit:
    """A fitted multidimensional 2PL (point estimates) on a stated orientation.

    ``theta @ loadings.T - difficulty`` is the logit of every cell. ``rotation`` names
    the orientation: ``"standardised"`` (centred abilities with identity covariance,
    loadings on principal axes), ``"varimax"``, ``"oblimin"``; ``factor_corr`` is the
    abilities' correlation over the panel (identity unless the rotation is oblique).
    """

    models: tuple[str, ...]
    items: tuple[str, ...]
    benchmarks: tuple[str, ...]
    item_benchmark: np.ndarray
    theta: np.ndarray
    loadings: np.ndarray
    difficulty: np.ndarray
    loglik: float
    """Log likelihood of the cells the fit saw (binomial, with its constant)."""
    log_posterior: float
    n_cells: int
    iterations: int
    converged: bool
    seconds: float
    priors: MirtPriorSettings
    rotation: str = "standardised"
    rotation_matrix: np.ndarray | None = None
    """T with theta_rot = theta_std @ T and A_rot = A_std @ inv(T).T (None: identity)."""
    factor_corr: np.ndarray | None = None

    @property
    def d(self) -> int:
        return int(self.theta.shape[1])

    @property
    def n_params(self) -> int:
        """Free parameters of the likelihood: M d + I (d + 1) - d^2 (GL(d)) - d (location)."""
        m, i, d = len(self.models), len(self.items), self.d
        return m * d + i * (d + 1) - d * d - d

    def logits(self) -> NDArray[np.float64]:
        eta: NDArray[np.float64] = self.theta @ self.loadings.T - self.difficulty
        return eta

    def probabilities(self) -> NDArray[np.float64]:
        """Shape (n_models, n_items): P(correct) for every cell, observed or not."""
        p: NDArray[np.float64] = expit(self.logits())
        return p

    def bic(self) -> float:
        criterion: float = -2.0 * self.loglik + self.n_params * np.log(max(self.n_cells, 1))
        return criterion


def _log_binom(k: np.ndarray, n: np.ndarray) -> NDArray[np.float64]:
    log_c: NDArray[np.float64] = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return log_c


def cell_loglik(
    theta: np.ndarray, loadings: np.ndarray, difficulty: np.ndarray, data: MirtData
) -> NDArray[np.float64]:
    """Binomial log likelihood of every cell (0 where missing)."""
    eta = theta @ loadings.T - difficulty
    ll = data.correct * eta - data.trials * np.logaddexp(0.0, eta)
    per_cell: NDArray[np.float64] = np.where(
        data.trials > 0, ll + _log_binom(data.correct, data.trials), 0.0
    )
    return per_cell


def fit_loglik(fit: MirtFit, data: MirtData) -> float:
    """Log likelihood of ``data``'s observed cells under ``fit`` (same models and items)."""
    _check_same(fit, data)
    return float(cell_loglik(fit.theta, fit.loadings, fit.difficulty, data).sum())


def _check_same(fit: MirtFit, data: MirtData) -> None:
    if fit.models != data.models or fit.items != data.items:
        raise ValueError("fit and data do not share models and items")


class _Objective:
    """Negative log posterior and its gradient, on a flat parameter vector."""

    def __init__(self, data: MirtData, d: int, priors: MirtPriorSettings) -> None:
        self.k = data.correct
        self.n = data.trials
        self.m, self.i = data.trials.shape
        self.d = d
        self.scale = 1.0 / max(data.n_cells, 1)  # per-cell units keep gtol meaningful
        self.w_theta = 1.0 / priors.theta_sd**2
        self.w_a = 1.0 / priors.a_sd**2
        self.w_b = 1.0 / priors.b_sd**2

    def unpack(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        md, idd = self.m * self.d, self.i * self.d
        return (
            x[:md].reshape(self.m, self.d),
            x[md : md + idd].reshape(self.i, self.d),
            x[md + idd :],
        )

    @staticmethod
    def pack(theta: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.concatenate([theta.ravel(), a.ravel(), b.ravel()])

    def neg_log_lik_terms(
        self, theta: np.ndarray, a: np.ndarray, b: np.ndarray
    ) -> tuple[float, NDArray[np.float64]]:
        eta = theta @ a.T - b
        e = np.exp(-np.abs(eta))
        softplus = np.maximum(eta, 0.0) + np.log1p(e)
        ll = float(np.sum(self.k * eta - self.n * softplus))
        p = np.where(eta >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        return ll, p

    def __call__(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        theta, a, b = self.unpack(x)
        ll, p = self.neg_log_lik_terms(theta, a, b)
        r = self.k - self.n * p  # d loglik / d eta
        f = -ll + 0.5 * (
            self.w_theta * np.sum(theta**2) + self.w_a * np.sum(a**2) + self.w_b * np.sum(b**2)
        )
        g_theta = -(r @ a) + self.w_theta * theta
        g_a = -(r.T @ theta) + self.w_a * a
        g_b = r.sum(axis=0) + self.w_b * b
        return f * self.scale, self.pack(g_theta, g_a, g_b) * self.scale


def _svd_start(
    data: MirtData, d: int, priors: MirtPriorSettings
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Truncated SVD of the smoothed, item-centred logit matrix (missing cells at 0)."""
    present = data.trials > 0
    p = (data.correct + 0.5) / (data.trials + 1.0)
    z = np.where(present, np.log(p) - np.log1p(-p), 0.0)
    count = np.maximum(present.sum(axis=0), 1)
    col_mean = z.sum(axis=0) / count
    resid = np.where(present, z - col_mean, 0.0)
    u, s, vt = np.linalg.svd(resid, full_matrices=False)
    u, s, vt = u[:, :d], s[:d], vt[:d]
    if s.size < d:  # fewer models/items than dimensions: pad with small noise
        rng = np.random.default_rng(0)
        u = np.hstack([u, 0.01 * rng.standard_normal((u.shape[0], d - s.size))])
        vt = np.vstack([vt, 0.01 * rng.standard_normal((d - s.size, vt.shape[1]))])
        s = np.concatenate([s, np.full(d - s.size, 1e-2)])
    c = np.sqrt(priors.theta_sd / priors.a_sd)
    root = np.sqrt(np.maximum(s, 1e-6))
    return u * root * c, (vt.T * root) / c, -col_mean


def _balanced(
    theta: np.ndarray, loadings: np.ndarray, priors: MirtPriorSettings
) -> tuple[np.ndarray, np.ndarray]:
    """The factorisation of ``theta @ loadings.T`` the priors like best (a warm start)."""
    q_t, r_t = np.linalg.qr(theta)
    q_a, r_a = np.linalg.qr(loadings)
    u, s, vt = np.linalg.svd(r_t @ r_a.T)
    root = np.sqrt(s)
    c = np.sqrt(priors.theta_sd / priors.a_sd)
    return q_t @ u * root * c, q_a @ vt.T * root / c


def standardise(
    theta: np.ndarray, loadings: np.ndarray, difficulty: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Reparametrise without changing any cell probability: abilities centred with
    identity covariance over the panel, loadings on their principal axes (largest sum
    of squares first), each loading column summing to a non-negative number."""
    mu = theta.mean(axis=0)
    difficulty = difficulty - loadings @ mu
    tc = theta - mu
    cov = tc.T @ tc / max(tc.shape[0], 1)
    evals, evecs = np.linalg.eigh(cov)
    floor = max(float(evals.max()), 1e-300) * 1e-12
    evals = np.maximum(evals, floor)
    whiten = evecs / np.sqrt(evals)  # theta_w = tc @ whiten has identity covariance
    unwhiten = evecs * np.sqrt(evals)  # A_w = A @ unwhiten
    tw, aw = tc @ whiten, loadings @ unwhiten
    s2, axes = np.linalg.eigh(aw.T @ aw)
    axes = axes[:, np.argsort(s2)[::-1]]
    tw, aw = tw @ axes, aw @ axes
    signs = np.where(aw.sum(axis=0) < 0, -1.0, 1.0)
    return tw * signs, aw * signs, difficulty


def fit_mirt(
    data: MirtData,
    d: int,
    *,
    priors: MirtPriorSettings | None = None,
    start: MirtFit | None = None,
    max_iter: int = 20_000,
    tol: float = 1e-10,
) -> MirtFit:
    """MAP fit of the d-dimensional compensatory 2PL to ``data`` (standardised solution).

    ``start`` warm-starts from an earlier fit with the same models, items and ``d``.
    """
    if d < 1:
        raise ValueError(f"d must be >= 1, got {d}")
    priors = priors if priors is not None else MirtPriorSettings()
    t0 = time.perf_counter()
    obj = _Objective(data, d, priors)
    with kernel_threads():
        if (
            start is not None
            and start.d == d
            and start.items == data.items
            and start.models == data.models
        ):
            x0 = obj.pack(*_balanced(start.theta, start.loadings, priors), start.difficulty)
        else:
            x0 = obj.pack(*_svd_start(data, d, priors))
        res = minimize(
            obj,
            x0,
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": max_iter,
                "maxfun": 2 * max_iter,
                "maxcor": 10,
                "ftol": tol,
                "gtol": 1e-9,
            },
        )
    theta, a, b = obj.unpack(res.x)
    theta, a, b = standardise(theta, a, b)
    ll = float(cell_loglik(theta, a, b, data).sum())
    return MirtFit(
        models=data.models,
        items=data.items,
        benchmarks=data.benchmarks,
        item_benchmark=data.item_benchmark,
        theta=theta,
        loadings=a,
        difficulty=b,
        loglik=ll,
        log_posterior=-float(res.fun) / obj.scale,
        n_cells=data.n_cells,
        iterations=int(res.nit),
        converged=bool(res.success),
        seconds=time.perf_counter() - t0,
        priors=priors,
    )


# --------------------------------------------------------------------------- simulate


@dataclass(frozen=True)
class SimulatedMirt:
    """Simulated responses with the parameters that generated them."""

    data: MirtData
    theta: np.ndarray
    loadings: np.ndarray
    difficulty: np.ndarray


def simulate_mirt(
    n_models: int,
    n_items: int,
    d: int,
    *,
    seed: int = 0,
    n_trials: int = 1,
    benchmarks: Sequence[str] | None = None,
    loadings: np.ndarray | None = None,
    theta: np.ndarray | None = None,
    difficulty: np.ndarray | None = None,
    missing_share: float = 0.0,
) -> SimulatedMirt:
    """Binomial responses from a d-dimensional 2PL with simple-structure loadings.

    By default item i loads mainly on dimension ``i % d`` (a ~ lognormal(0.2, 0.3)) with
    small cross-loadings (U(0, 0.3)); abilities are standard normal, standardised on the
    panel (mean 0, identity covariance), so the true loadings are on the same footing as
    a standardised fit's. Items are split evenly over ``benchmarks`` (default one).
    """
    rng = np.random.default_rng(seed)
    if loadings is None:
        loadings = rng.uniform(0.0, 0.3, size=(n_items, d))
        primary = np.arange(n_items) % d
        loadings[np.arange(n_items), primary] = rng.lognormal(0.2, 0.3, size=n_items)
    if theta is None:
        theta = rng.standard_normal((n_models, d))
        tc = theta - theta.mean(axis=0)
        evals, evecs = np.linalg.eigh(tc.T @ tc / n_models)
        theta = tc @ (evecs / np.sqrt(evals)) @ evecs.T
    if difficulty is None:
        difficulty = rng.normal(0.0, 1.2, size=n_items)
    p = expit(theta @ loadings.T - difficulty)
    trials = np.full(p.shape, float(n_trials))
    if missing_share > 0:
        trials[rng.random(p.shape) < missing_share] = 0.0
    correct = rng.binomial(trials.astype(np.int64), p).astype(float)
    names = tuple(benchmarks or ("sim",))
    bench = np.arange(n_items) * len(names) // n_items
    items = tuple(f"{names[b]}{ITEM_KEY_SEP}q{i}" for i, b in enumerate(bench))
    data = MirtData(
        models=tuple(f"m{j:02d}" for j in range(n_models)),
        items=items,
        benchmarks=names,
        item_benchmark=bench.astype(np.int64),
        correct=correct,
        trials=trials,
    )
    return SimulatedMirt(data=data, theta=theta, loadings=loadings, difficulty=difficulty)
