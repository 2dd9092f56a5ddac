"""Rank flips: a pair of models ordered one way on benchmark X and the other way on Y.

A model's expected score on a benchmark is the mean of its success probabilities over
the benchmark's items, so the flip size (A's lead on X plus B's lead on Y) is a sum of
per-item terms, ``(p_Ai - p_Bi) / |X|`` for items of X and ``(p_Bi - p_Ai) / |Y|`` for
items of Y. Per dimension the split is exact too: ``p_Ai - p_Bi = s_i a_i . (theta_A -
theta_B)`` with ``s_i`` the secant slope of the logistic between the two logits.

Pure numbers; the Markdown report renders them (``_markdown.py``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from curation.irt.mirt._fit import MirtData, MirtFit
from curation.irt.mirt._profiles import expected_scores


@dataclass(frozen=True)
class FlipItem:
    """One item's part in a rank flip."""

    benchmark: str
    item: str
    contribution: float
    """Share of the flip size this item accounts for, in score points (x100 = percentage points)."""
    p_a: float
    p_b: float
    observed_a: float | None
    observed_b: float | None
    loadings: tuple[float, ...]


@dataclass(frozen=True)
class Flip:
    """Model A ahead on ``benchmark_a``, model B ahead on ``benchmark_b``."""

    model_a: str
    model_b: str
    benchmark_a: str
    benchmark_b: str
    expected: tuple[float, float, float, float]
    """Expected scores: A on X, B on X, A on Y, B on Y (X = benchmark_a, Y = benchmark_b)."""
    observed: tuple[float, float, float, float]
    lead_a: float
    """A's expected lead on X (> 0 for a flip)."""
    lead_b: float
    """B's expected lead on Y (> 0 for a flip)."""
    by_dimension_a: tuple[float, ...]
    """A's lead on X split exactly by dimension."""
    by_dimension_b: tuple[float, ...]
    """B's lead on Y split exactly by dimension."""
    ability_gap: tuple[float, ...]
    """theta_A - theta_B."""
    items: tuple[FlipItem, ...] = field(default_factory=tuple)

    @property
    def size(self) -> float:
        return self.lead_a + self.lead_b

    @property
    def is_flip(self) -> bool:
        return self.lead_a > 0 and self.lead_b > 0


def _secant(eta_a: np.ndarray, eta_b: np.ndarray) -> NDArray[np.float64]:
    diff = eta_a - eta_b
    small = np.abs(diff) < 1e-9
    p_mid = expit(0.5 * (eta_a + eta_b))
    with np.errstate(invalid="ignore", divide="ignore"):
        sec = (expit(eta_a) - expit(eta_b)) / np.where(small, 1.0, diff)
    slope: NDArray[np.float64] = np.where(small, p_mid * (1 - p_mid), sec)
    return slope


def _four(values: Sequence[float]) -> tuple[float, float, float, float]:
    a, b, c, d = (float(v) for v in values)
    return a, b, c, d


def item_contributions(
    fit: MirtFit, model_a: str, model_b: str, benchmark_a: str, benchmark_b: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per item (all items of the fit): contribution to the flip size, and a mask of the
    items of the two benchmarks. Contributions sum to A's lead on X plus B's lead on Y."""
    ja, jb = fit.models.index(model_a), fit.models.index(model_b)
    bx, by = fit.benchmarks.index(benchmark_a), fit.benchmarks.index(benchmark_b)
    if bx == by:
        raise ValueError("a flip needs two different benchmarks")
    p = expit(fit.theta[[ja, jb]] @ fit.loadings.T - fit.difficulty)
    gap = p[0] - p[1]
    contrib = np.zeros(len(fit.items))
    x, y = fit.item_benchmark == bx, fit.item_benchmark == by
    contrib[x] = gap[x] / max(int(x.sum()), 1)
    contrib[y] = -gap[y] / max(int(y.sum()), 1)
    return contrib, x | y


def flip_attribution(
    fit: MirtFit,
    data: MirtData | None,
    model_a: str,
    model_b: str,
    benchmark_a: str,
    benchmark_b: str,
    *,
    n_items: int = 10,
) -> Flip:
    """Decompose ``model_a``'s lead on ``benchmark_a`` and ``model_b``'s on ``benchmark_b``.

    ``items`` lists the ``n_items`` items contributing most to the flip (largest
    contribution first); observed outcomes come from ``data`` when given.
    """
    ja, jb = fit.models.index(model_a), fit.models.index(model_b)
    bx, by = fit.benchmarks.index(benchmark_a), fit.benchmarks.index(benchmark_b)
    contrib, in_pair = item_contributions(fit, model_a, model_b, benchmark_a, benchmark_b)
    eta = fit.theta[[ja, jb]] @ fit.loadings.T - fit.difficulty
    p = expit(eta)
    dtheta = fit.theta[ja] - fit.theta[jb]
    per_dim = (
        _secant(eta[0], eta[1])[:, None] * fit.loadings * dtheta
    )  # (items, d), rows sum to p_a - p_b
    x, y = fit.item_benchmark == bx, fit.item_benchmark == by
    exp = (p[0][x].mean(), p[1][x].mean(), p[0][y].mean(), p[1][y].mean())
    if data is not None:
        obs_scores = data.observed_scores()
        observed = (
            obs_scores[ja, bx],
            obs_scores[jb, bx],
            obs_scores[ja, by],
            obs_scores[jb, by],
        )
    else:
        observed = (float("nan"),) * 4
    order = np.argsort(-np.where(in_pair, contrib, -np.inf), kind="stable")[:n_items]
    items = []
    for i in order:
        if not in_pair[i]:
            continue
        bench = fit.benchmarks[int(fit.item_benchmark[i])]
        oa = ob = None
        if data is not None:
            if data.trials[ja, i] > 0:
                oa = float(data.correct[ja, i] / data.trials[ja, i])
            if data.trials[jb, i] > 0:
                ob = float(data.correct[jb, i] / data.trials[jb, i])
        items.append(
            FlipItem(
                benchmark=bench,
                item=fit.items[i][len(bench) + 1 :],
                contribution=float(contrib[i]),
                p_a=float(p[0, i]),
                p_b=float(p[1, i]),
                observed_a=oa,
                observed_b=ob,
                loadings=tuple(float(v) for v in fit.loadings[i]),
            )
        )
    return Flip(
        model_a=model_a,
        model_b=model_b,
        benchmark_a=benchmark_a,
        benchmark_b=benchmark_b,
        expected=_four(exp),
        observed=_four(observed),
        lead_a=float(exp[0] - exp[1]),
        lead_b=float(exp[3] - exp[2]),
        by_dimension_a=tuple(float(v) for v in per_dim[x].mean(axis=0)),
        by_dimension_b=tuple(float(v) for v in -per_dim[y].mean(axis=0)),
        ability_gap=tuple(float(v) for v in dtheta),
        items=tuple(items),
    )


FLIP_BLOCK = 512
"""Models A per block of the pair search: the A x B lead matrices stay a few MB however
large the panel (4,000 models: 16 M ordered pairs per pair of benchmarks)."""


def _clearest_pair(
    exp: np.ndarray, obs: np.ndarray, bx: int, by: int
) -> tuple[tuple[int, int] | None, float]:
    """The ordered model pair (A, B) with the largest flip strength between benchmarks
    ``bx`` and ``by``, and that strength (0 if none): the first in (A, B) order among
    equals, as a scan of every pair would find it, in blocks of :data:`FLIP_BLOCK` rows."""
    ok = ~np.isnan(obs[:, bx]) & ~np.isnan(obs[:, by])
    ex, ey, ox, oy = exp[:, bx], exp[:, by], obs[:, bx], obs[:, by]
    best, best_key = None, 0.0
    for start in range(0, exp.shape[0], FLIP_BLOCK):
        rows = slice(start, start + FLIP_BLOCK)
        lead_x = ex[rows, None] - ex[None, :]
        lead_y = ey[None, :] - ey[rows, None]
        valid = (ok[rows, None] & ok[None, :]) & (lead_x > 0) & (lead_y > 0)
        with np.errstate(invalid="ignore"):
            valid &= (ox[rows, None] > ox[None, :]) & (oy[None, :] > oy[rows, None])
        strength = np.where(valid, np.minimum(lead_x, lead_y), 0.0)
        flat = int(np.argmax(strength))
        key = float(strength.flat[flat])
        if key > best_key:
            ja, jb = divmod(flat, exp.shape[0])
            best, best_key = (start + ja, jb), key
    return best, best_key


def find_flips(fit: MirtFit, data: MirtData, *, n: int = 3, n_items: int = 10) -> list[Flip]:
    """The clearest flip for each pair of benchmarks, clearest first (at most ``n``).

    A flip must hold in the model (expected scores) and in the data (observed accuracy,
    both models having answered both benchmarks); its strength is the smaller of the
    two expected leads. Every ordered pair of models is considered, vectorised in
    blocks (:func:`_clearest_pair`): time grows with models², memory does not.
    """
    exp = expected_scores(fit)
    obs = data.observed_scores()
    found = []
    for bx, by in itertools.combinations(range(len(fit.benchmarks)), 2):
        best, best_key = _clearest_pair(exp, obs, bx, by)
        if best is not None:
            ja, jb = best
            found.append(
                (
                    best_key,
                    flip_attribution(
                        fit,
                        data,
                        fit.models[ja],
                        fit.models[jb],
                        fit.benchmarks[bx],
                        fit.benchmarks[by],
                        n_items=n_items,
                    ),
                )
            )
    found.sort(key=lambda t: -t[0])
    return [f for _, f in found[:n]]
