"""Rank certificates (Theorem 2.1): when a benchmark's ordering of two models is trustworthy.

For a score difference D_B = ∫Δ dν_B on the benchmark and D_µ = ∫Δ dµ under the target,
with the per-difficulty difference Δ(z) = s_A(z) − s_B(z) L-Lipschitz in z,
|D_B − D_µ| ≤ L·W1(ν_B, µ) = L·DDM. So if |D_B| > L·DDM, D_µ has the sign of D_B: the
benchmark's winner is also the winner under the target. L is the user's assumption about
how fast a performance gap can change along the difficulty axis; the certificate also
reports the largest L it survives, so the reader can judge that assumption.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl


@dataclass(frozen=True)
class Certificate:
    """Whether the benchmark ranking of A vs B is certified under Lipschitz constant L.

    ``d_b`` = score_a − score_b. ``certified`` is |D_B| > L·DDM (strict).
    ``max_lipschitz`` = |D_B| / DDM is the supremum of the L that certify (any smaller L
    does); it is ``inf`` when DDM = 0 and D_B ≠ 0, and 0 when D_B = 0 (no L certifies a tie).
    """

    score_a: float
    score_b: float
    ddm: float
    lipschitz: float
    model_a: str = "A"
    model_b: str = "B"

    @property
    def d_b(self) -> float:
        return self.score_a - self.score_b

    @property
    def margin(self) -> float:
        """L·DDM: how much the target could move the difference."""
        return self.lipschitz * self.ddm

    @property
    def certified(self) -> bool:
        return abs(self.d_b) > self.margin

    @property
    def max_lipschitz(self) -> float:
        if self.d_b == 0.0:
            return 0.0
        if self.ddm == 0.0:
            return math.inf
        return abs(self.d_b) / self.ddm

    @property
    def winner(self) -> str | None:
        """The model ahead on the benchmark (``None`` on a tie)."""
        if self.d_b > 0:
            return self.model_a
        if self.d_b < 0:
            return self.model_b
        return None


def _finite(name: str, value: float, *, nonneg: bool = False) -> float:
    value = float(value)
    if not math.isfinite(value) or (nonneg and value < 0):
        need = "a finite number >= 0" if nonneg else "a finite number"
        raise ValueError(f"{name} must be {need}, got {value!r}")
    return value


def certify(
    score_a: float,
    score_b: float,
    ddm: float,
    lipschitz: float,
    *,
    model_a: str = "A",
    model_b: str = "B",
) -> Certificate:
    """Certificate for the benchmark ordering of A vs B (Theorem 2.1).

    ``score_*`` are the models' benchmark scores (mean per-item success), ``ddm`` the
    benchmark's DDM to the target, ``lipschitz`` the assumed L of Δ(z).
    """
    return Certificate(
        score_a=_finite("score_a", score_a),
        score_b=_finite("score_b", score_b),
        ddm=_finite("ddm", ddm, nonneg=True),
        lipschitz=_finite("lipschitz", lipschitz, nonneg=True),
        model_a=str(model_a),
        model_b=str(model_b),
    )


def leaderboard(scores: Mapping[str, float]) -> list[tuple[str, float]]:
    """Models by score descending (ties by name), the order pairs are oriented in."""
    if not scores:
        raise ValueError("scores: need at least two models, got none")
    items = [(str(k), _finite(f"scores[{k!r}]", v)) for k, v in scores.items()]
    return sorted(items, key=lambda kv: (-kv[1], kv[0]))


def certify_pairs(
    scores: Mapping[str, float],
    *,
    ddm: float,
    lipschitz: float,
    pairs: Literal["all", "adjacent"] = "all",
) -> pl.DataFrame:
    """Certificates for pairs of models, as a frame sorted by |D_B| descending.

    Each pair is oriented so ``model_a`` is the higher-ranked (``d_b`` ≥ 0); ``rank_*``
    are leaderboard ranks (1 = best). ``pairs="adjacent"`` keeps neighbours on the
    leaderboard (#1 vs #2, #2 vs #3, ...) — the comparisons a reader actually makes.
    Columns: model_a, model_b, rank_a, rank_b, score_a, score_b, d_b, abs_d_b, margin,
    certified, max_lipschitz, winner.
    """
    board = leaderboard(scores)
    if len(board) < 2:
        raise ValueError(f"scores: need at least two models, got {len(board)}")
    if pairs == "all":
        index_pairs = list(itertools.combinations(range(len(board)), 2))
    elif pairs == "adjacent":
        index_pairs = [(i, i + 1) for i in range(len(board) - 1)]
    else:
        raise ValueError(f"pairs must be 'all' or 'adjacent', got {pairs!r}")
    rows = []
    for i, j in index_pairs:
        (name_a, sa), (name_b, sb) = board[i], board[j]
        cert = certify(sa, sb, ddm, lipschitz, model_a=name_a, model_b=name_b)
        rows.append(
            {
                "model_a": name_a,
                "model_b": name_b,
                "rank_a": i + 1,
                "rank_b": j + 1,
                "score_a": sa,
                "score_b": sb,
                "d_b": cert.d_b,
                "abs_d_b": abs(cert.d_b),
                "margin": cert.margin,
                "certified": cert.certified,
                "max_lipschitz": cert.max_lipschitz,
                "winner": cert.winner,
            }
        )
    frame = pl.DataFrame(rows, schema_overrides={"winner": pl.String})
    return frame.sort(["abs_d_b", "rank_a", "rank_b"], descending=[True, False, False])


def top_pair_certificates(
    scores: Mapping[str, float], *, ddm: float, lipschitz: float, n_pairs: int = 5
) -> list[Certificate]:
    """Certificates for the leaderboard neighbours among the top ``n_pairs + 1`` models."""
    board = leaderboard(scores)
    return [
        certify(sa, sb, ddm, lipschitz, model_a=a, model_b=b)
        for (a, sa), (b, sb) in itertools.pairwise(board[: n_pairs + 1])
    ]
