"""Simulated worlds with known truth for the estimator's tests.

logit_ij = a_i (theta_j - b_i) + eps_ij with eps ~ N(0, 0.5^2) fixed per cell: a model x
item interaction the 1PL/2PL fit does not model, so the truth is not what the method
fits. Every cell's outcome is drawn once: a model's true full score is its realised
mean success rate over every item.
"""

from __future__ import annotations

import functools

import numpy as np
import polars as pl


@functools.cache
def world(
    model: str = "1pl",
    n_models: int = 150,
    n_items: int = 400,
    seed: int = 0,
    trials: int = 1,
    skewed: bool = False,
) -> pl.DataFrame:
    """``skewed``: most items easy, a long tail of hard ones (b = Gamma(2, 1) - 3), as
    in GSM8K: a difficulty-uniform subset then has another mean than the benchmark."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.2, n_models)
    b = rng.gamma(2.0, 1.0, n_items) - 3.0 if skewed else rng.normal(0.0, 1.5, n_items)
    a = np.exp(rng.normal(0.0, 0.35, n_items)) if model == "2pl" else np.ones(n_items)
    eps = rng.normal(0.0, 0.5, (n_models, n_items))
    p = 1.0 / (1.0 + np.exp(-(a * (theta[:, None] - b) + eps)))
    k = rng.binomial(trials, p)
    return pl.DataFrame(
        {
            "model": np.repeat([f"m{j:03d}" for j in range(n_models)], n_items),
            "item": np.tile([f"i{i:04d}" for i in range(n_items)], n_models),
            "n_trials": np.full(n_models * n_items, trials),
            "n_correct": k.reshape(-1),
        }
    )
