"""The dense success-rate matrix behind a long response table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl


def _positions(labels: pl.Series, order: list[str]) -> np.ndarray:
    """Each label's index in ``order`` (every label is in it)."""
    index = pl.Series(range(len(order)), dtype=pl.Int64)
    codes = labels.replace_strict(pl.Series(order, dtype=labels.dtype), index)
    out: np.ndarray = codes.to_numpy()
    return out


@dataclass(frozen=True)
class ResponseMatrix:
    """Models x items success rates (NaN = missing) with the labels of both axes."""

    models: list[str]
    items: list[str]
    rates: np.ndarray
    """Shape (n_models, n_items); p_ji = n_correct / n_trials, NaN where no response."""
    trials: np.ndarray
    """Shape (n_models, n_items); 0 where missing."""

    @property
    def present(self) -> np.ndarray:
        return ~np.isnan(self.rates)

    @classmethod
    def from_responses(cls, responses: pl.DataFrame) -> ResponseMatrix:
        """Pivot a long response table (model, item, n_trials, n_correct) into a matrix."""
        if responses.height == 0:
            raise ValueError("response table is empty")
        cells = responses.group_by("model", "item").agg(
            pl.col("n_trials").sum(), pl.col("n_correct").sum()
        )
        models = sorted(cells.get_column("model").unique().to_list())
        items = sorted(cells.get_column("item").unique().to_list())
        # labels to positions in polars (a hash join in Rust), not a Python loop per cell:
        # a leaderboard's million cells took 6 s each way that way
        rows = _positions(cells.get_column("model"), models)
        cols = _positions(cells.get_column("item"), items)
        trials = np.zeros((len(models), len(items)))
        correct = np.zeros_like(trials)
        trials[rows, cols] = cells["n_trials"].to_numpy()
        correct[rows, cols] = cells["n_correct"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(trials > 0, correct / np.where(trials > 0, trials, 1), np.nan)
        return cls(models=models, items=items, rates=rates, trials=trials)
