"""Model rankings and their agreement (Kendall τ) with a reference ranking (SPEC §6).

A model's score on a set of items is its mean success rate n_correct / n_trials over the
items it answered. The reference is either an explicit ordering of models (best first)
or the mean rank over other benchmarks — by default the other benchmarks of the same
domain. Rankings are compared on the models common to both, with τ-b (ties allowed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

MIN_MODELS = 3
"""Fewer common models than this give no τ (it would be ±1 or undefined)."""


def model_scores(responses: pl.DataFrame, items: Sequence[str] | None = None) -> dict[str, float]:
    """Mean success rate per model over ``items`` (all items if None).

    ``responses`` needs columns model, item, n_trials, n_correct (the response table).
    Models with no response on those items are left out.
    """
    missing = [c for c in ("model", "item", "n_trials", "n_correct") if c not in responses.columns]
    if missing:
        raise ValueError(f"responses table lacks column(s) {missing}")
    df = responses
    if items is not None:
        df = df.filter(pl.col("item").is_in(list(items)))
    out = (
        df.filter(pl.col("n_trials") > 0)
        .group_by("model")
        .agg((pl.col("n_correct") / pl.col("n_trials")).mean().alias("score"))
        .sort("model")
    )
    return dict(
        zip(out.get_column("model").to_list(), out.get_column("score").to_list(), strict=True)
    )


def _ranks(scores: Mapping[str, float], models: Sequence[str]) -> dict[str, float]:
    """Rank 1 = best (highest score); ties share their average rank."""
    vals = np.array([scores[m] for m in models], dtype=np.float64)
    from scipy import stats  # scipy.stats costs ~0.8 s to import: only when ranking

    ranks = stats.rankdata(-vals, method="average")
    return dict(zip(models, (float(r) for r in ranks), strict=True))


@dataclass(frozen=True)
class ReferenceRanking:
    """A reference ranking: a rank per model (1 = best), and how it was obtained."""

    ranks: dict[str, float]
    label: str
    """E.g. "mean rank over math-l5" or "explicit list (12 models)"."""

    @classmethod
    def from_order(cls, models: Sequence[str], *, label: str | None = None) -> ReferenceRanking:
        """An explicit ordering, best model first."""
        names = [str(m) for m in models]
        if len(set(names)) != len(names):
            raise ValueError("reference model list repeats a model")
        ranks = {m: float(i) for i, m in enumerate(names, start=1)}
        return cls(ranks=ranks, label=label or f"explicit list ({len(names)} models)")

    @classmethod
    def mean_rank(cls, score_tables: Mapping[str, Mapping[str, float]]) -> ReferenceRanking:
        """Mean rank over several benchmarks' model scores, on the models all of them share.

        Each benchmark is re-ranked within the shared models, so ranks are comparable.
        """
        if not score_tables:
            raise ValueError("mean_rank needs at least one benchmark's scores")
        common = set.intersection(*(set(s) for s in score_tables.values()))
        models = sorted(common)
        if not models:
            return cls(
                ranks={}, label=f"mean rank over {', '.join(score_tables)} (no shared model)"
            )
        per = [_ranks(scores, models) for scores in score_tables.values()]
        ranks = {m: float(np.mean([r[m] for r in per])) for m in models}
        return cls(ranks=ranks, label=f"mean rank over {', '.join(score_tables)}")


@dataclass(frozen=True)
class RankAgreement:
    """Kendall τ-b between a ranking by scores and a reference ranking."""

    tau: float | None
    p_value: float | None
    n_models: int
    note: str | None = None
    """Why τ is missing, if it is."""

    def to_dict(self) -> dict[str, float | int | str | None]:
        return {
            "tau": self.tau,
            "p_value": self.p_value,
            "n_models": self.n_models,
            "note": self.note,
        }


def rank_agreement(scores: Mapping[str, float], reference: ReferenceRanking) -> RankAgreement:
    """Kendall τ-b between ``scores`` (higher = better) and ``reference`` (rank 1 = best)."""
    models = sorted(set(scores) & set(reference.ranks))
    if len(models) < MIN_MODELS:
        return RankAgreement(
            None, None, len(models), f"{len(models)} model(s) in common; τ needs {MIN_MODELS}"
        )
    s = np.array([scores[m] for m in models], dtype=np.float64)
    r = np.array([-reference.ranks[m] for m in models], dtype=np.float64)
    if np.ptp(s) == 0 or np.ptp(r) == 0:
        return RankAgreement(None, None, len(models), "a ranking is constant; τ is undefined")
    from scipy import stats

    res = stats.kendalltau(s, r)
    return RankAgreement(float(res.statistic), float(res.pvalue), len(models))
