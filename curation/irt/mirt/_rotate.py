"""Rotations of a loading matrix (varimax, oblimin), Procrustes, Tucker congruence.

A d-dimensional fit is determined only up to an invertible d x d transform of the
ability space: theta -> theta T, A -> A inv(T)^T leaves every logit theta A^T - b
unchanged. Rotations pick a T that makes loadings readable; they change nothing the
model predicts. Orthogonal rotations (varimax) keep the abilities uncorrelated;
oblique ones (oblimin) let them correlate (``Phi = T^T T``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from curation.irt.mirt._fit import MirtFit

ROTATIONS: tuple[str, ...] = ("varimax", "oblimin", "none")


def _kaiser(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    h = np.sqrt(np.sum(a**2, axis=1))
    h = np.where(h > 0, h, 1.0)
    return a / h[:, None], h


def varimax(
    loadings: np.ndarray, *, normalize: bool = True, tol: float = 1e-10, max_iter: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """Varimax rotation (Kaiser 1958; the SVD algorithm of R's ``stats::varimax``).

    Returns ``(loadings @ R, R)`` with R orthogonal. ``normalize`` applies Kaiser row
    normalisation (each item weighs the same regardless of its communality).
    """
    a = np.asarray(loadings, dtype=float)
    p, k = a.shape
    if k < 2:
        return a.copy(), np.eye(k)
    x, h = _kaiser(a) if normalize else (a, np.ones(p))
    r = np.eye(k)
    crit = 0.0
    for _ in range(max_iter):
        z = x @ r
        grad = x.T @ (z**3 - z * (np.sum(z**2, axis=0) / p))
        u, s, vt = np.linalg.svd(grad)
        r = u @ vt
        crit_old, crit = crit, float(s.sum())
        if crit_old and crit < crit_old * (1 + tol):
            break
    return (x @ r) * h[:, None], r


def _oblimin_criterion(lam: np.ndarray, gamma: float) -> tuple[float, np.ndarray]:
    p, k = lam.shape
    l2 = lam**2
    off = np.ones((k, k)) - np.eye(k)
    x = l2 @ off
    if gamma:
        x = x - (gamma / p) * np.ones((p, p)) @ x
    return float(np.sum(l2 * x) / 4.0), lam * x


def oblimin(
    loadings: np.ndarray,
    *,
    gamma: float = 0.0,
    normalize: bool = True,
    tol: float = 1e-6,
    max_iter: int = 2000,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Direct oblimin (gamma = 0: quartimin) by gradient projection (Jennrich 2002).

    Returns ``(L, T, Phi)`` with ``L = loadings @ inv(T).T`` and ``Phi = T.T @ T`` the
    factor correlations (T has unit-length columns).
    """
    a = np.asarray(loadings, dtype=float)
    p, k = a.shape
    if k < 2:
        return a.copy(), np.eye(k), np.eye(k)
    x, h = _kaiser(a) if normalize else (a, np.ones(p))
    t = np.eye(k)
    lam = x.copy()
    f, gq = _oblimin_criterion(lam, gamma)
    g = -(lam.T @ gq @ np.linalg.inv(t)).T
    alpha = 1.0
    for _ in range(max_iter):
        gp = g - t * np.sum(t * g, axis=0)
        s = float(np.sqrt(np.sum(gp**2)))
        if s < tol:
            break
        alpha *= 2.0
        for _ in range(20):
            cand = t - alpha * gp
            cand = cand / np.sqrt(np.sum(cand**2, axis=0))
            lam_c = x @ np.linalg.inv(cand).T
            f_c, gq_c = _oblimin_criterion(lam_c, gamma)
            if f - f_c > 0.5 * s**2 * alpha:
                break
            alpha /= 2.0
        t, lam, f, gq = cand, lam_c, f_c, gq_c
        g = -(lam.T @ gq @ np.linalg.inv(t)).T
    return lam * h[:, None], t, t.T @ t


def procrustes(loadings: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Orthogonal Procrustes: the R (R^T R = I) minimising |loadings @ R - target|."""
    u, _, vt = np.linalg.svd(np.asarray(loadings).T @ np.asarray(target))
    r = u @ vt
    return loadings @ r, r


def congruence(a: np.ndarray, b: np.ndarray) -> NDArray[np.float64]:
    """Tucker's congruence coefficient of matching columns (cosine, not centred)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    num = np.sum(a * b, axis=0)
    den = np.sqrt(np.sum(a**2, axis=0) * np.sum(b**2, axis=0))
    cosine: NDArray[np.float64] = num / np.where(den > 0, den, 1.0)
    return cosine


def _orient(
    fit_theta: np.ndarray, a: np.ndarray, t: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Order dimensions by sum of squared loadings, signs so each loading column sums >= 0."""
    order = np.argsort(-np.sum(a**2, axis=0), kind="stable")
    signs = np.where(a[:, order].sum(axis=0) < 0, -1.0, 1.0)
    ps = np.eye(a.shape[1])[:, order] * signs
    return fit_theta @ ps, a @ ps, t @ ps


def rotate_fit(
    fit: MirtFit, method: str = "varimax", *, normalize: bool = True, gamma: float = 0.0
) -> MirtFit:
    """Rotate a standardised fit. Cell probabilities (and the likelihood) are unchanged.

    ``method``: ``varimax`` (orthogonal), ``oblimin`` (oblique, abilities correlate:
    ``fit.factor_corr``) or ``none`` (keep the standardised principal axes).
    """
    if method not in ROTATIONS:
        raise ValueError(f"rotation {method!r} is not one of {ROTATIONS}")
    if fit.rotation != "standardised":
        raise ValueError(f"rotate a standardised fit, not one already rotated ({fit.rotation})")
    d = fit.d
    if method == "none" or d == 1:
        return replace(fit, rotation="none", rotation_matrix=np.eye(d), factor_corr=np.eye(d))
    if method == "varimax":
        _, t = varimax(fit.loadings, normalize=normalize)
    else:
        _, t, _ = oblimin(fit.loadings, gamma=gamma, normalize=normalize)
    theta = fit.theta @ t
    a = fit.loadings @ np.linalg.inv(t).T
    theta, a, t = _orient(theta, a, t)
    return replace(
        fit,
        theta=theta,
        loadings=a,
        rotation=method,
        rotation_matrix=t,
        factor_corr=t.T @ t,
    )
