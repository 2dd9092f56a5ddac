"""What each benchmark measures in a fitted MIRT, and how benchmarks relate.

* per benchmark: mean loading on each dimension (what it measures);
* benchmark x benchmark: cosine of mean loading vectors, Spearman correlation of the
  models' expected scores, and of their observed accuracies.

Pure numbers; the Markdown report renders them (``_markdown.py``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.stats import spearmanr

from curation.irt.mirt._fit import MirtData, MirtFit


@dataclass(frozen=True)
class BenchmarkProfile:
    """Which dimensions one benchmark's items load on."""

    benchmark: str
    n_items: int
    mean_loading: tuple[float, ...]
    share: tuple[float, ...]
    """Squared mean loading per dimension over their sum."""
    loads_on: tuple[int, ...]
    """1-based dimensions whose share is at least the threshold, largest first."""


def benchmark_profiles(fit: MirtFit, *, loading_share: float = 0.2) -> list[BenchmarkProfile]:
    """Mean loading of each benchmark's items on each dimension."""
    out = []
    for b, name in enumerate(fit.benchmarks):
        cols = fit.item_benchmark == b
        if not cols.any():
            continue
        mean = fit.loadings[cols].mean(axis=0)
        sq = mean**2
        share = sq / sq.sum() if sq.sum() > 0 else np.zeros_like(sq)
        order = np.argsort(-share, kind="stable")
        loads = tuple(int(k) + 1 for k in order if share[k] >= loading_share)
        out.append(
            BenchmarkProfile(
                benchmark=name,
                n_items=int(cols.sum()),
                mean_loading=tuple(float(x) for x in mean),
                share=tuple(float(x) for x in share),
                loads_on=loads,
            )
        )
    return out


def expected_scores(fit: MirtFit) -> np.ndarray:
    """Shape (n_models, n_benchmarks): mean success probability over each benchmark's items."""
    p = fit.probabilities()
    out = np.full((len(fit.models), len(fit.benchmarks)), np.nan)
    for b in range(len(fit.benchmarks)):
        cols = fit.item_benchmark == b
        if cols.any():
            out[:, b] = p[:, cols].mean(axis=1)
    return out


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    ok = ~(np.isnan(x) | np.isnan(y))
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(y[ok]) == 0:
        return float("nan")
    return float(spearmanr(x[ok], y[ok]).statistic)


@dataclass(frozen=True)
class Similarity:
    """Benchmark x benchmark matrices (order of ``benchmarks``)."""

    benchmarks: tuple[str, ...]
    cosine: np.ndarray
    """Cosine of the mean loading vectors."""
    expected_spearman: np.ndarray
    """Spearman correlation of the models' expected scores (models that answered both)."""
    observed_spearman: np.ndarray
    """Spearman correlation of the models' observed accuracies (models that answered both)."""
    n_models: np.ndarray
    """Models that answered both benchmarks."""


def benchmark_similarity(fit: MirtFit, data: MirtData) -> Similarity:
    """How alike the benchmarks are: cosine of their mean loadings and the rank
    correlations of the models' expected and observed scores, benchmark by benchmark."""
    profiles = {p.benchmark: np.array(p.mean_loading) for p in benchmark_profiles(fit)}
    names = fit.benchmarks
    k = len(names)
    exp = expected_scores(fit)
    obs = data.observed_scores()
    cos = np.full((k, k), np.nan)
    rho_e = np.full((k, k), np.nan)
    rho_o = np.full((k, k), np.nan)
    n = np.zeros((k, k), dtype=np.int64)
    for x, y in itertools.product(range(k), repeat=2):
        if names[x] in profiles and names[y] in profiles:
            u, v = profiles[names[x]], profiles[names[y]]
            den = np.linalg.norm(u) * np.linalg.norm(v)
            cos[x, y] = float(u @ v / den) if den > 0 else float("nan")
        both = ~(np.isnan(obs[:, x]) | np.isnan(obs[:, y]))
        n[x, y] = int(both.sum())
        rho_e[x, y] = _spearman(np.where(both, exp[:, x], np.nan), exp[:, y])
        rho_o[x, y] = _spearman(np.where(both, obs[:, x], np.nan), obs[:, y])
    return Similarity(names, cos, rho_e, rho_o, n)
