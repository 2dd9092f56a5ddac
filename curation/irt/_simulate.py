"""Simulated response matrices from known parameters, so every estimator has a recovery test."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import polars as pl

from curation.irt._data import Cells
from curation.irt._numeric import expit
from curation.irt._settings import check_choice


def simulate_responses(
    *,
    n_models: int,
    n_items: int,
    n_trials: int,
    model: Literal["1pl", "2pl"] = "1pl",
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
    check_choice("model", model, ("1pl", "2pl"))
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


LEADERBOARD_TRUTHS: tuple[str, ...] = ("1pl", "2pl", "3pl")


def simulate_leaderboard(
    *,
    n_models: int,
    n_items: int,
    truth: str,
    seed: int,
    options: int = 5,
    weak_share: float = 0.55,
    log_a_sd: float = 0.35,
    guess_sd: float = 0.05,
) -> tuple[Cells, dict[str, Any]]:
    """A multiple-choice leaderboard with a known truth, one trial per cell.

    Built to differ from every fit it tests (a simulation that evaluates a method must
    not be the method's own model):

    * abilities: a two-part mixture, ``weak_share`` of the models near chance
      (N(−2, 0.8²)) and the rest spread above (N(0.8, 1.2²)), centred — not the fits'
      normal prior, and a pile of near-chance models as on real leaderboards;
    * difficulties b ~ N(0.3, 1.3²); discriminations exp(N(0, ``log_a_sd``²)) for a
      2PL or 3PL truth (1 for 1PL);
    * a 3PL truth's floors c_i ~ Beta with mean 1/``options`` and sd ``guess_sd`` (a
      model's letter preferences move it off 1/options), 0 otherwise: a fit holding c at
      1/options is close to the truth, not equal to it.

    Returns the cells and the truth: ``theta``, ``b``, ``a``, ``c`` (arrays in cell order
    of models and items) and ``options``.
    """
    check_choice("truth", truth, LEADERBOARD_TRUTHS)
    rng = np.random.default_rng(seed)
    weak = rng.random(n_models) < weak_share
    theta = np.where(weak, rng.normal(-2.0, 0.8, n_models), rng.normal(0.8, 1.2, n_models))
    theta -= theta.mean()
    b = rng.normal(0.3, 1.3, n_items)
    a = np.exp(rng.normal(0.0, log_a_sd, n_items)) if truth != "1pl" else np.ones(n_items)
    c = np.zeros(n_items)
    if truth == "3pl":
        mean = 1.0 / options
        strength = mean * (1.0 - mean) / guess_sd**2 - 1.0
        c = rng.beta(mean * strength, (1.0 - mean) * strength, n_items)
    p = c + (1.0 - c) * expit(a[None, :] * (theta[:, None] - b[None, :]))
    k = (rng.random(p.shape) < p).astype(np.float64)
    mi, ii = np.nonzero(np.ones(p.shape, dtype=bool))
    cells = Cells(
        tuple(f"model-{j:04d}" for j in range(n_models)),
        tuple(f"item-{i:05d}" for i in range(n_items)),
        mi.astype(np.int32),
        ii.astype(np.int32),
        k[mi, ii],
        np.ones(mi.size),
    )
    return cells, {"theta": theta, "b": b, "a": a, "c": c, "options": options}
