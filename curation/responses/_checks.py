"""Response-matrix diagnostics run before any IRT fit (SPEC §3.2).

Low informativeness or many reversals mean the matrix cannot place items well; the
checks say so, and name the models and items responsible.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from curation.responses._matrix import ResponseMatrix
from curation.responses._settings import WarnSettings


@dataclass(frozen=True)
class CheckReport:
    """Everything the checks found for one benchmark."""

    benchmark: str
    n_models: int
    n_items: int
    missing_share: float
    item_informativeness: float
    all_solved: list[str]
    none_solved: list[str]
    model_informativeness: float
    model_accuracy: dict[str, float]
    model_variance: dict[str, float]
    model_reversal_rate: float
    per_model_reversal: dict[str, float]
    item_reversal_rate: float
    per_item_reversal: dict[str, float]
    item_success: dict[str, float]
    """Mean success rate of each item over the models that answered it."""
    warnings: list[str] = field(default_factory=list)
    offending_models: list[str] = field(default_factory=list)
    offending_items: list[str] = field(default_factory=list)
    missing_by_model: dict[str, int] = field(default_factory=dict)
    """Models (rows of a wide matrix) with missing cells -> how many, most first."""

    def metrics(self, *, list_limit: int = 10) -> dict[str, Any]:
        """The figures for ``metrics/check/<benchmark>.json`` (DVC metrics)."""
        return {
            "benchmark": self.benchmark,
            "n_models": self.n_models,
            "n_items": self.n_items,
            "missing_share": round(self.missing_share, 6),
            "item_informativeness": round(self.item_informativeness, 6),
            "n_all_solved": len(self.all_solved),
            "n_none_solved": len(self.none_solved),
            "model_informativeness": round(self.model_informativeness, 6),
            "model_reversal_rate": round(self.model_reversal_rate, 6),
            "item_reversal_rate": round(self.item_reversal_rate, 6),
            "n_warnings": len(self.warnings),
            "warnings": self.warnings,
            "offending_models": self.offending_models[:list_limit],
            "offending_items": self.offending_items[:list_limit],
        }


PAIRWISE_MAX_MODELS = 300
"""Up to this many models, model reversals are counted over model pairs directly."""


def _model_reversals(rates: np.ndarray, acc: np.ndarray) -> tuple[float, np.ndarray]:
    """Share of (weaker, stronger, item) triples where the weaker model strictly wins.

    A few dozen models: over the model pairs, one vectorised pass per model. Beyond
    :data:`PAIRWISE_MAX_MODELS` (a 4,000-model leaderboard has 8 M pairs) it is the item
    reversal count with the roles swapped -- models ordered by accuracy, items as the
    witnesses -- in O(levels · n_models log n_models) per item; both count the same.
    """
    if rates.shape[0] <= PAIRWISE_MAX_MODELS:
        return _model_reversals_pairwise(rates, acc)
    return _item_reversals(rates.T, acc)


def _model_reversals_pairwise(rates: np.ndarray, acc: np.ndarray) -> tuple[float, np.ndarray]:
    """Share of (weaker, stronger, item) triples where the weaker model strictly wins."""
    n = len(acc)
    present = ~np.isnan(rates)
    filled = np.nan_to_num(rates, nan=0.0)
    rev_counts = np.zeros(n)
    cmp_counts = np.zeros(n)
    total_rev = 0.0
    total_cmp = 0.0
    for j in range(n):
        stronger = acc > acc[j]
        if not stronger.any():
            continue
        both = present[j] & present[stronger]
        wins = (filled[j] > filled[stronger]) & both
        rev = wins.sum(axis=1).astype(float)
        cmp = both.sum(axis=1).astype(float)
        total_rev += rev.sum()
        total_cmp += cmp.sum()
        rev_counts[j] += rev.sum()
        cmp_counts[j] += cmp.sum()
        rev_counts[stronger] += rev
        cmp_counts[stronger] += cmp
    with np.errstate(invalid="ignore", divide="ignore"):
        per_model = np.where(cmp_counts > 0, rev_counts / np.maximum(cmp_counts, 1), 0.0)
    return (total_rev / total_cmp if total_cmp else 0.0), per_model


def _item_reversals(rates: np.ndarray, success: np.ndarray) -> tuple[float, np.ndarray]:
    """Share of (easier item, harder item, model) triples where the harder item is solved more.

    Counted per model with sorted cumulative counts over the (few) distinct success
    levels, so the cost is O(levels · n log n) per model instead of O(n²).
    """
    n_items = rates.shape[1]
    order = np.argsort(-success, kind="stable")
    s_sorted = success[order]
    rev_item = np.zeros(n_items)
    cmp_item = np.zeros(n_items)
    total_rev = 0.0
    total_cmp = 0.0
    # number of items with strictly larger / strictly smaller overall success
    n_greater = np.searchsorted(-s_sorted, -s_sorted, side="left")
    n_le = np.searchsorted(-s_sorted, -s_sorted, side="right")
    for row in rates:
        v = row[order]
        present = ~np.isnan(v)
        cum_present = np.concatenate([[0], np.cumsum(present)])
        easier_present = cum_present[n_greater]
        harder_present = cum_present[-1] - cum_present[n_le]
        rev_as_harder = np.zeros(n_items)
        rev_as_easier = np.zeros(n_items)
        levels = np.unique(v[present])
        for level in levels:
            at = present & (v == level)
            cum_at = np.concatenate([[0], np.cumsum(at)])
            easier_at = cum_at[n_greater]
            harder_at = cum_at[-1] - cum_at[n_le]
            # harder item i beats an easier item at this lower level
            rev_as_harder += np.where(present & (v > level), easier_at, 0)
            # easier item i loses to a harder item at this higher level
            rev_as_easier += np.where(present & (v < level), harder_at, 0)
        cmp = np.where(present, easier_present + harder_present, 0)
        total_rev += rev_as_harder.sum()
        total_cmp += np.where(present, easier_present, 0).sum()
        rev_item[order] += rev_as_harder + rev_as_easier
        cmp_item[order] += cmp
    with np.errstate(invalid="ignore", divide="ignore"):
        per_item = np.where(cmp_item > 0, rev_item / np.maximum(cmp_item, 1), 0.0)
    return (total_rev / total_cmp if total_cmp else 0.0), per_item


def check_matrix(
    responses: pl.DataFrame, *, benchmark: str, warn: WarnSettings | None = None
) -> CheckReport:
    """Run the §3.2 checks on one benchmark's long response table; ``warn`` says when a
    diagnostic becomes a warning (default: ``check.warn``'s defaults)."""
    limits = warn if warn is not None else WarnSettings()
    m = ResponseMatrix.from_responses(responses)
    rates, present = m.rates, m.present
    n_models, n_items = rates.shape
    with np.errstate(invalid="ignore"):
        item_max = np.nanmax(rates, axis=0)
        item_min = np.nanmin(rates, axis=0)
        success = np.nanmean(rates, axis=0)
        acc = np.nanmean(rates, axis=1)
        variance = np.nanvar(rates, axis=1)
    n_present = present.sum(axis=0)
    informative = (item_max > item_min) & (n_present >= 2)
    all_solved = [m.items[i] for i in np.flatnonzero(item_min == 1.0)]
    none_solved = [m.items[i] for i in np.flatnonzero(item_max == 0.0)]
    model_ok = (acc > 0) & (acc < 1)
    model_rev, per_model = _model_reversals(rates, acc)
    item_rev, per_item = _item_reversals(rates, success)

    warnings: list[str] = []
    model_cut = limits.per_model_reversal_factor * model_rev
    item_cut = limits.per_item_reversal_factor * item_rev
    order_models = np.argsort(-per_model, kind="stable")
    order_items = np.argsort(-per_item, kind="stable")
    offending_models = [m.models[j] for j in order_models if model_rev and per_model[j] > model_cut]
    offending_items = [m.items[i] for i in order_items if item_rev and per_item[i] > item_cut]
    item_info = float(informative.mean())
    model_info = float(model_ok.mean())
    if item_info < limits.item_informativeness_below:
        warnings.append(
            f"only {item_info:.1%} of items separate the models "
            f"({len(all_solved)} all-solved, {len(none_solved)} none-solved)"
        )
    if model_info < limits.model_informativeness_below:
        flat = [m.models[j] for j in np.flatnonzero(~model_ok)]
        warnings.append(f"models at 0% or 100% carry no information: {', '.join(flat)}")
    if model_rev > limits.model_reversal_above:
        warnings.append(f"model reversal rate {model_rev:.3f} is high")
    if item_rev > limits.item_reversal_above:
        warnings.append(f"item reversal rate {item_rev:.3f} is high")
    if offending_models:
        warnings.append(
            f"{len(offending_models)} models reverse the accuracy order more than "
            f"{limits.per_model_reversal_factor}x as often as the benchmark overall "
            f"({model_rev:.3f}): {', '.join(offending_models[:5])}"
        )
    if offending_items:
        warnings.append(
            f"{len(offending_items)} items reverse the difficulty order more than "
            f"{limits.per_item_reversal_factor}x as often as the benchmark overall "
            f"({item_rev:.3f}), e.g. {', '.join(offending_items[:5])}"
        )
    missing = (~present).sum(axis=1)
    missing_by_model = {
        m.models[j]: int(missing[j]) for j in np.argsort(-missing, kind="stable") if missing[j]
    }
    if missing_by_model:
        first = ", ".join(f"{k} ({v})" for k, v in list(missing_by_model.items())[:5])
        warnings.append(
            f"{int(missing.sum())} of {present.size} cells are missing (kept as missing, "
            f"never imputed) in {len(missing_by_model)} models: {first}"
            + (" …" if len(missing_by_model) > 5 else "")
        )
    return CheckReport(
        benchmark=benchmark,
        n_models=n_models,
        n_items=n_items,
        missing_share=float(1 - present.mean()),
        item_informativeness=item_info,
        all_solved=all_solved,
        none_solved=none_solved,
        model_informativeness=model_info,
        model_accuracy={mm: float(a) for mm, a in zip(m.models, acc, strict=True)},
        model_variance={mm: float(v) for mm, v in zip(m.models, variance, strict=True)},
        model_reversal_rate=float(model_rev),
        per_model_reversal={mm: float(r) for mm, r in zip(m.models, per_model, strict=True)},
        item_reversal_rate=float(item_rev),
        per_item_reversal={it: float(r) for it, r in zip(m.items, per_item, strict=True)},
        item_success={it: float(s) for it, s in zip(m.items, success, strict=True)},
        warnings=warnings,
        offending_models=offending_models,
        offending_items=offending_items,
        missing_by_model=missing_by_model,
    )
