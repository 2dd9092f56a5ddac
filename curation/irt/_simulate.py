"""Simulated response matrices from known parameters, so every estimator has a recovery test."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from curation.irt._numeric import expit
from curation.irt._settings import MODELS, ModelType, check_choice


def simulate_responses(
    *,
    n_models: int,
    n_items: int,
    n_trials: int,
    model: ModelType = "1pl",
    missing: float = 0.0,
    seed: int,
    theta_sd: float = 2.0,
    b_sd: float = 2.0,
    log_a_sd: float = 0.5,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Draw abilities, difficulties (and 2PL discriminations) and binomial responses.

    theta ~ N(0, theta_sd²), b ~ N(0, b_sd²), log a ~ N(0, log_a_sd²); the defaults are
    roughly the spread of the bundled ZeroEval panels (MAP abilities span ~7 logits).

    The true abilities are centred to mean 0 exactly, i.e. expressed on the scale the
    fits identify, so estimates and truth are directly comparable (no re-alignment,
    which would flatter interval coverage). Each cell is dropped with probability
    ``missing``, but every item and every model keeps at least one observed cell, so
    the truth and the fitted items line up one to one.

    Returns ``(responses, truth)`` where responses has columns model, item, n_trials,
    n_correct and truth holds ``models``, ``items`` (lists) and ``theta``, ``b``, ``a``
    (numpy arrays in that order; ``a`` is all ones for 1PL).
    """
    check_choice("model", model, MODELS)
    if n_models < 2 or n_items < 1 or n_trials < 1:
        raise ValueError(
            "need n_models >= 2, n_items >= 1, n_trials >= 1; "
            f"got {n_models}, {n_items}, {n_trials}"
        )
    if not 0.0 <= missing < 1.0:
        raise ValueError(f"missing must be in [0, 1), got {missing}")
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, theta_sd, n_models)
    theta -= theta.mean()
    b = rng.normal(0.0, b_sd, n_items)
    a = np.exp(rng.normal(0.0, log_a_sd, n_items)) if model == "2pl" else np.ones(n_items)
    p = expit(a[None, :] * (theta[:, None] - b[None, :]))
    k = rng.binomial(n_trials, p)
    keep = rng.random(p.shape) >= missing
    keep[rng.integers(0, n_models, n_items), np.arange(n_items)] = True
    keep[np.arange(n_models), rng.integers(0, n_items, n_models)] = True
    mi, ii = np.nonzero(keep)
    models = [f"model-{j:02d}" for j in range(n_models)]
    items = [f"item-{i:05d}" for i in range(n_items)]
    frame = pl.DataFrame(
        {
            "model": pl.Series(models).gather(mi),
            "item": pl.Series(items).gather(ii),
            "n_trials": np.full(mi.size, n_trials, dtype=np.int64),
            "n_correct": k[mi, ii].astype(np.int64),
        }
    )
    return frame, {"models": models, "items": items, "theta": theta, "b": b, "a": a}
