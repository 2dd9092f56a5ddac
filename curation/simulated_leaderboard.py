"""A leaderboard-shaped response matrix from known parameters: thousands of models, one
wide row each, as a leaderboard export looks (``model, q0000, q0001, …``).

Why it exists: the stages must be tried at the size users bring (4,000 models × 250
items of 5-option multiple choice) without shipping a real leaderboard. The truth is
deliberately *not* what the pipeline fits, so nothing built on it is circular:

* models come in families (fine-tunes of one base share most of its ability), and a few
  are broken (near chance on everything), as on a real leaderboard;
* items are multiple choice with a guessing floor ``1 / n_choices`` and an upper
  asymptote below 1 (a few keys are wrong or ambiguous): a 4PL, while annotate fits a
  1PL/2PL;
* tasks of the same models share a general ability but each has its own
  (``task_correlation``), so a joint MIRT fit has a second dimension to find.

Used by ``benchmarks/make_leaderboard.py`` (writes the CSVs) and by tests (a small one).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl


@dataclass(frozen=True)
class LeaderboardTruth:
    """The parameters a simulated task was drawn from (arrays in row / column order)."""

    models: list[str]
    items: list[str]
    theta: np.ndarray
    """Each model's ability on this task (general + task-specific)."""
    a: np.ndarray
    """Item discriminations."""
    b: np.ndarray
    """Item difficulties (the location of the logistic part)."""
    guess: np.ndarray
    """Lower asymptote of each item (``1 / n_choices``)."""
    top: np.ndarray
    """Upper asymptote of each item (below 1 for a wrong or ambiguous key)."""


def _abilities(
    n_models: int, *, seed: int, family_size: int, broken_share: float, task: int,
    task_correlation: float,
) -> tuple[list[str], np.ndarray]:  # fmt: skip
    """Model names and abilities on task ``task``: the general part depends on ``seed``
    only, so every task of one seed has the same models."""
    rng = np.random.default_rng([seed, 0])
    n_families = max(1, -(-n_models // family_size))
    family = np.minimum(np.arange(n_models) // family_size, n_families - 1)
    base = rng.normal(0.0, 1.2, n_families)
    general = base[family] + rng.normal(0.0, 0.35, n_models)
    broken = rng.random(n_models) < broken_share
    names = [f"org-{f:04d}/model-{j:05d}" for j, f in enumerate(family)]
    own = np.random.default_rng([seed, 1, task]).normal(0.0, 1.0, n_models)
    r = float(task_correlation)
    theta = r * general + np.sqrt(max(0.0, 1.0 - r * r)) * own * general.std()
    theta[broken] = -6.0  # answers at chance
    return names, theta


def simulate_leaderboard(
    *,
    n_models: int,
    n_items: int,
    seed: int,
    task: int = 0,
    n_choices: int = 5,
    family_size: int = 8,
    broken_share: float = 0.03,
    task_correlation: float = 0.8,
    missing: float = 0.0,
    item_prefix: str = "q",
    model_column: str = "model",
) -> tuple[pl.DataFrame, LeaderboardTruth]:
    """One task of a simulated leaderboard as a wide table (one row per model, a 0/1
    column per item; ``missing`` of the cells null) and the truth it was drawn from.

    Tasks of one ``seed`` share their models (names and general ability); ``task``
    picks the items and the task-specific ability. Deterministic in its arguments.
    """
    if n_models < 2 or n_items < 1 or n_choices < 2:
        raise ValueError(
            f"need n_models >= 2, n_items >= 1, n_choices >= 2; "
            f"got {n_models}, {n_items}, {n_choices}"
        )
    if not 0.0 <= missing < 1.0 or not 0.0 <= broken_share < 1.0:
        raise ValueError(f"missing and broken_share must be in [0, 1): {missing}, {broken_share}")
    names, theta = _abilities(
        n_models, seed=seed, family_size=family_size, broken_share=broken_share, task=task,
        task_correlation=task_correlation,
    )  # fmt: skip
    rng = np.random.default_rng([seed, 2, task])
    b = rng.normal(-0.3, 1.3, n_items)
    a = np.exp(rng.normal(0.2, 0.35, n_items))
    guess = np.full(n_items, 1.0 / n_choices)
    top = np.where(rng.random(n_items) < 0.05, rng.uniform(0.5, 0.9, n_items), 0.99)
    logistic = 1.0 / (1.0 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    p = guess[None, :] + (top - guess)[None, :] * logistic
    y = (rng.random(p.shape) < p).astype(np.int8)
    items = [f"{item_prefix}{i:04d}" for i in range(n_items)]
    columns: dict[str, pl.Series] = {model_column: pl.Series(names, dtype=pl.String)}
    drop = rng.random(p.shape) < missing if missing else None
    for i, item in enumerate(items):
        col = pl.Series(item, y[:, i])
        if drop is not None:
            col = col.scatter(np.flatnonzero(drop[:, i]), None)
        columns[item] = col
    truth = LeaderboardTruth(names, items, theta, a, b, guess, top)
    return pl.DataFrame(columns), truth


def write_wide_csv(frame: pl.DataFrame, path: str | Path) -> None:
    """``frame`` as CSV the way a leaderboard export is written: an unnamed model column
    gets an empty header cell, as pandas' ``df.to_csv()`` writes its index (polars
    would quote it as ``""``)."""
    text = frame.write_csv()
    if frame.columns[0] == "" and text.startswith('""'):
        text = text[2:]
    Path(path).write_text(text, encoding="utf-8")


__all__ = ["LeaderboardTruth", "simulate_leaderboard", "write_wide_csv"]
