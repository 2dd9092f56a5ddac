"""What a fitted MIRT says about benchmarks and models, computed once for the stage.

:func:`build_report` rotates every d's fit and gathers the benchmark profiles and
similarities (``_profiles.py``) and the rank flips (``_flips.py``) into a
:class:`MirtReport`, whose :meth:`MirtReport.metrics` is the JSON record; the Markdown
page is rendered from it by ``_markdown.py``. Nothing here formats text for people.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from curation.irt.mirt._fit import MirtData, MirtFit
from curation.irt.mirt._flips import Flip, find_flips
from curation.irt.mirt._profiles import (
    BenchmarkProfile,
    Similarity,
    benchmark_profiles,
    benchmark_similarity,
)
from curation.irt.mirt._rotate import rotate_fit
from curation.irt.mirt._select import Selection


@dataclass(frozen=True)
class MirtReport:
    """Everything the stage writes, computed once."""

    data: MirtData
    selection: Selection
    rotation: str
    fits: dict[int, MirtFit]
    """Rotated full-data fit of every d."""
    analysis_d: int
    """The d the detailed sections use: the chosen d, or 2 if d = 1 was chosen."""
    profiles: dict[int, list[BenchmarkProfile]]
    similarity: Similarity
    flips: list[Flip]
    loading_share: float
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def chosen(self) -> int:
        return self.selection.chosen

    @property
    def fit(self) -> MirtFit:
        """The rotated fit of the chosen d."""
        return self.fits[self.chosen]

    @property
    def analysis(self) -> MirtFit:
        return self.fits[self.analysis_d]

    def metrics(self) -> dict[str, Any]:
        """The JSON metrics record (schemas/mirt_metrics.schema.json)."""
        fit, sel, sim = self.analysis, self.selection, self.similarity
        names = list(sim.benchmarks)

        def _num(v: float) -> float | None:
            return None if not np.isfinite(v) else round(float(v), 6)

        def _matrix(m: np.ndarray) -> dict[str, dict[str, float | None]]:
            return {a: {b: _num(m[i, j]) for j, b in enumerate(names)} for i, a in enumerate(names)}

        sample = (
            {"selection_sample": {"models": sel.n_models_selection, "max_cells": sel.max_cells}}
            if sel.n_models_selection is not None
            else {}
        )
        return {
            **sample,
            "benchmarks": names,
            "n_models": self.data.n_models,
            "n_items": self.data.n_items,
            "n_cells": self.data.n_cells,
            "missing_share": round(self.data.missing_share, 6),
            "dropped": {k: int(v) for k, v in self.data.dropped.items()},
            "d_max": len(sel.rows),
            "d_chosen": sel.chosen,
            "d_heldout": sel.d_heldout,
            "d_bic": sel.d_bic,
            "d_analysis": self.analysis_d,
            "select": sel.select,
            "se_rule": sel.se_rule,
            "holdout_share": sel.holdout,
            "n_heldout_cells": sel.n_heldout,
            "seed": sel.seed,
            "rotation": self.rotation,
            "converged": all(r.converged for r in sel.rows),
            "selection": [
                {
                    "d": r.d,
                    "n_params": r.n_params,
                    "train_loglik": round(r.train_loglik, 3),
                    "heldout_loglik_per_cell": round(r.heldout_loglik, 6),
                    "heldout_gap": round(r.heldout_gap, 6),
                    "heldout_gap_se": round(r.heldout_gap_se, 6),
                    "loglik": round(r.loglik, 3),
                    "bic": round(r.bic, 3),
                }
                for r in sel.rows
            ],
            "benchmark_loadings": {
                p.benchmark: [round(v, 6) for v in p.mean_loading]
                for p in self.profiles[self.analysis_d]
            },
            "benchmark_dimensions": {
                p.benchmark: list(p.loads_on) for p in self.profiles[self.analysis_d]
            },
            "benchmark_cosine": _matrix(sim.cosine),
            "expected_score_spearman": _matrix(sim.expected_spearman),
            "observed_score_spearman": _matrix(sim.observed_spearman),
            "factor_correlation": [
                [round(float(v), 6) for v in row] for row in factor_correlation(fit)
            ],
            "abilities": {
                m: [round(float(v), 6) for v in fit.theta[j]] for j, m in enumerate(fit.models)
            },
            "flips": [
                {
                    "model_a": f.model_a,
                    "model_b": f.model_b,
                    "benchmark_a": f.benchmark_a,
                    "benchmark_b": f.benchmark_b,
                    "lead_a": round(f.lead_a, 6),
                    "lead_b": round(f.lead_b, 6),
                    "top_items": [f"{it.benchmark}/{it.item}" for it in f.items],
                }
                for f in self.flips
            ],
        }


def factor_correlation(fit: MirtFit) -> np.ndarray:
    """Correlations of the abilities: an oblique rotation's, or the identity when the
    rotation is orthogonal (the standardised abilities are then uncorrelated)."""
    return fit.factor_corr if fit.factor_corr is not None else np.eye(fit.d)


def build_report(
    data: MirtData,
    selection: Selection,
    *,
    rotation: str = "varimax",
    loading_share: float = 0.2,
    n_flips: int = 3,
    n_flip_items: int = 10,
    timings: dict[str, float] | None = None,
) -> MirtReport:
    """Rotate every d's fit and compute profiles, similarities and flips."""
    fits = {d: rotate_fit(f, rotation) for d, f in selection.fits.items()}
    analysis_d = selection.chosen if selection.chosen >= 2 or 2 not in fits else 2
    analysis = fits[analysis_d]
    return MirtReport(
        data=data,
        selection=selection,
        rotation=rotation,
        fits=fits,
        analysis_d=analysis_d,
        profiles={d: benchmark_profiles(f, loading_share=loading_share) for d, f in fits.items()},
        similarity=benchmark_similarity(analysis, data),
        flips=find_flips(analysis, data, n=n_flips, n_items=n_flip_items)
        if analysis.d >= 2
        else [],
        loading_share=loading_share,
        timings=dict(timings or {}),
    )


def loadings_frame(fit: MirtFit, data: MirtData | None = None) -> pl.DataFrame:
    """One row per item: benchmark, item, difficulty b, loadings a1..ad (the fit's
    rotation), communality (sum of squared loadings), primary dimension (1-based, the
    largest |loading|) and, with ``data``, the number of models that answered it."""
    bench = [fit.benchmarks[int(b)] for b in fit.item_benchmark]
    cols: dict[str, Any] = {
        "benchmark": bench,
        "item": [key[len(b) + 1 :] for key, b in zip(fit.items, bench, strict=True)],
        "difficulty": fit.difficulty.astype(float),
    }
    for k in range(fit.d):
        cols[f"a{k + 1}"] = fit.loadings[:, k].astype(float)
    cols["communality"] = np.sum(fit.loadings**2, axis=1)
    cols["primary_dimension"] = (np.argmax(np.abs(fit.loadings), axis=1) + 1).astype(np.int64)
    if data is not None:
        cols["n_models"] = (data.trials > 0).sum(axis=0).astype(np.int64)
    frame = pl.DataFrame(cols)
    return frame.with_columns(
        pl.lit(fit.rotation).alias("rotation"), pl.lit(fit.d).cast(pl.Int64).alias("d")
    )
