"""The guessing floor: P = c + (1 − c) σ(η), per cell, and what a Newton step needs of it.

A multiple-choice item answered at random is right 1/options of the time, so its
success probability never falls below a floor c (3PL). With η = a (θ − b) the
derivatives of a cell's log likelihood ℓ = k log P + (n − k) log(1 − P) with respect to
η are, writing σ = σ(η) and ρ = (1 − c) σ / P ∈ (0, 1] (the share of the success
probability that is not guessing; ρ = 1 without a floor):

* ``R`` = ∂ℓ/∂η = k ρ (1 − σ) − (n − k) σ;
* ``W`` (Fisher) = E[−∂²ℓ/∂η²] = n σ (1 − σ) ρ;
* observed −∂²ℓ/∂η² = (1 − σ) [k ρ (σ − (1 − σ) c / P) + (n − k) σ] (may be negative).

With c = 0 these are the logistic model's k − nσ and nσ(1 − σ), so a 2PL solver that
takes its per-cell (W, R) from here fits the 3PL unchanged: every other derivative goes
through η alone. ρ is computed as (1 − c) / (1 + c e^−η), stable in both tails.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

_EXP_CAP = 80.0  # e^80 is finite in float32 (and c e^80 swamps 1 for any c > 1e-30)


def _softplus(x: np.ndarray) -> NDArray[np.float64]:
    out: NDArray[np.float64] = np.log1p(np.exp(-np.abs(x)))
    out += np.maximum(x, 0.0)
    return out


def floor_cell_loglik(
    k: np.ndarray, n: np.ndarray, eta: np.ndarray, c: np.ndarray
) -> NDArray[np.float64]:
    """k log P + (n − k) log(1 − P) per cell (``c`` broadcast like ``eta``).

    log P = log σ(η) + log(1 + c e^−η) = softplus(log c − η) − softplus(−η) (the first
    term is 0 where c = 0), log(1 − P) = log(1 − c) − softplus(η).
    """
    c = np.broadcast_to(c, eta.shape)
    has = c > 0
    log_c = np.log(np.where(has, c, 1.0))
    log_p = np.where(has, _softplus(log_c - eta), 0.0) - _softplus(-eta)
    log_q = np.log1p(-c) - _softplus(eta)
    out: NDArray[np.float64] = k * log_p + (n - k) * log_q
    return out


def floor_loglik(k: np.ndarray, n: np.ndarray, eta: np.ndarray, c: np.ndarray) -> float:
    """:func:`floor_cell_loglik` summed over the cells."""
    c = np.broadcast_to(c, eta.shape)
    has = c > 0
    log_c = np.log(np.where(has, c, 1.0))
    log_p = np.where(has, _softplus(log_c - eta), 0.0) - _softplus(-eta)
    log_q = np.log1p(-c) - _softplus(eta)
    return float(np.sum(k * log_p) + np.sum((n - k) * log_q))


def floor_terms(
    k: np.ndarray, n: np.ndarray, eta: np.ndarray, c: np.ndarray, *, observed: bool
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per cell ``(W, R)``: the curvature in η (observed or Fisher) and the score ∂ℓ/∂η."""
    sig = np.tanh(0.5 * eta)
    sig *= 0.5
    sig += 0.5
    e = np.exp(np.minimum(-eta, _EXP_CAP))
    rho = (1.0 - c) / (1.0 + c * e)
    one_minus = 1.0 - sig
    r: NDArray[np.float64] = k * rho * one_minus - (n - k) * sig
    if not observed:
        w: NDArray[np.float64] = n * sig * one_minus * rho
        return w, r
    p = c + (1.0 - c) * sig
    c_over_p = np.divide(c, p, out=np.zeros(np.broadcast(c, p).shape), where=np.asarray(c > 0))
    w = one_minus * (k * rho * (sig - one_minus * c_over_p) + (n - k) * sig)
    return w, r


def floor_probability(eta: np.ndarray, c: np.ndarray) -> NDArray[np.float64]:
    """P = c + (1 − c) σ(η)."""
    sig = np.tanh(0.5 * np.asarray(eta, dtype=np.float64))
    sig *= 0.5
    sig += 0.5
    out: NDArray[np.float64] = c + (1.0 - c) * sig
    return out
