"""How well a fill run knows its new items' z and its Top-3 reduction: their intervals.

A child's b is calibrated online with the panel's *fitted* abilities θ̂ held fixed, so
its interval from the trials alone (``b ± 1.645·SE``) leaves out how wrong θ̂ may be
for the new items. That error hardly moves an item in the middle of the panel, but
towards the ends of the axis, where the largest gaps are, only the strongest (weakest)
models answer anything and an item's place follows their abilities' error
(:func:`curation.calibrate.equal_score_b`). Two steps:

* :func:`estimate_ability_error` — how far the abilities are off *for these children*:
  every calibrated child's panel counts are refitted with a shift per model (centred:
  the abilities' mean is the scale's anchor); the spread of the shifts about a line in
  θ̂ (a common slope is the children's discrimination, not the abilities), beyond their
  own sampling error (cluster-robust over children, so model × item effects count as
  noise, not as ability), is the SD of the ability error.
* :class:`AbilityDraws` — abilities drawn around θ̂ with that SD (centred), and every
  item (original or new) moved into each draw's frame. A per-item interval is
  ``b ± 1.645·sqrt(SE² + frame SD²)`` (:func:`widen`); the Top-3 reduction's interval
  (:func:`reduction_interval`) redraws each inserted item's b from all its trials and
  moves it and the benchmark's own items into each draw's frame, so the interval holds
  the items' measurement error and the panel's, jointly.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from curation.calibrate import Z90, equal_score_b
from curation.candidates import CALIBRATED, INSERTED, ORACLE, Candidate
from curation.fill._targets import top_k_reduction
from curation.irt import Calibration

_GRID = 241
"""Grid points of b on which each draw's frame shift is solved and interpolated."""
_MARGIN = 8.0
"""The grid spans the panel's abilities ± this (logits); beyond it the shift is flat."""
_ITERATIONS = 60
"""Alternating Newton rounds of the shift fit (converges in well under this)."""
_SHIFT_PRIOR_SD = 3.0
"""A weak ridge on each model's shift, so a model no child informs stays at 0."""


@dataclass(frozen=True)
class AbilityError:
    """The panel's ability error for the new items, estimated from their counts."""

    sd: float
    """SD of a model's ability error (logits; 0 when the shifts are within their noise)."""
    shifts: dict[str, float]
    """Each model's estimated shift (centred), for the record."""
    n_children: int
    """Children whose counts the estimate rests on (bounded ones carry no information)."""

    def describe(self) -> dict[str, Any]:
        return {
            "sd": round(self.sd, 6),
            "n_children": self.n_children,
            "shifts": {m: round(v, 6) for m, v in self.shifts.items()},
        }


def panel_counts(c: Candidate) -> dict[str, tuple[int, int]]:
    """Every (correct, trials) the panel gave a candidate, per model: its record's and,
    for a confirmed item, the selection's before it (all its trials, pooled)."""
    out: dict[str, list[int]] = {}
    sources = [c.panel or "{}"]
    selection = c.lineage_dict().get("selection") or {}
    if selection.get("panel"):
        sources.append(selection["panel"])
    for text in sources:
        for m, (k, n) in json.loads(text).items():
            cell = out.setdefault(m, [0, 0])
            cell[0] += int(k)
            cell[1] += int(n)
    return {m: (k, n) for m, (k, n) in out.items()}


def _expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def estimate_ability_error(
    counts: Sequence[Mapping[str, tuple[int, int]]], calibration: Calibration
) -> AbilityError:
    """SD of the panel's ability error from the children's counts (module docstring).

    Joint fit of a b per child and a centred shift per model (alternating Newton steps,
    a weak ridge on the shifts); the shifts' sampling variance is the cluster-robust one
    (sum over children of the squared score, over the information squared); the SD is
    the method-of-moments excess over it of the shifts' spread about their regression
    on θ̂, floored at 0 (zero with fewer than three models).
    """
    models = list(calibration.panel)
    col = {m: j for j, m in enumerate(models)}
    rows = []
    for cell in counts:
        k = np.zeros(len(models))
        n = np.zeros(len(models))
        for m, (kk, nn) in cell.items():
            if m in col:
                k[col[m]], n[col[m]] = kk, nn
        if (n > 0).sum() >= 2 and 0 < k.sum() < n.sum():  # a bound says nothing
            rows.append((k, n))
    if len(rows) < 2 or len(models) < 2:
        return AbilityError(0.0, dict.fromkeys(models, 0.0), len(rows))
    k = np.array([r[0] for r in rows])
    n = np.array([r[1] for r in rows])
    theta_hat = calibration.theta
    shift = np.zeros(len(models))
    rate = np.clip(k.sum(axis=1) / n.sum(axis=1), 1e-3, 1 - 1e-3)
    b = np.mean(theta_hat) - np.log(rate / (1 - rate))
    for _ in range(_ITERATIONS):
        for _ in range(3):  # the children's b given the shifts
            p = _expit(theta_hat + shift - b[:, None])
            info = (n * p * (1 - p)).sum(axis=1)
            b = b - (k - n * p).sum(axis=1) / np.maximum(info, 1e-12)
        p = _expit(theta_hat + shift - b[:, None])
        score = (k - n * p).sum(axis=0) - shift / _SHIFT_PRIOR_SD**2
        info_j = (n * p * (1 - p)).sum(axis=0) + 1 / _SHIFT_PRIOR_SD**2
        step = score / info_j
        shift = shift + step
        shift -= shift.mean()
        if np.max(np.abs(step)) < 1e-8:
            break
    p = _expit(theta_hat + shift - b[:, None])
    info_j = (n * p * (1 - p)).sum(axis=0) + 1 / _SHIFT_PRIOR_SD**2
    robust = ((k - n * p) ** 2).sum(axis=0) / info_j**2
    # a common slope (children more or less discriminating than the benchmark's items,
    # model × item effects flattening the curve) moves every model in proportion to
    # its ability: only the spread about that line counts as ability error
    centred = theta_hat - theta_hat.mean()
    if len(models) < 3 or not np.any(centred):
        return AbilityError(0.0, dict(zip(models, shift.tolist(), strict=True)), len(rows))
    across = shift - (shift @ centred) / (centred @ centred) * centred
    excess = float(np.sum(across**2) / (len(models) - 2) - np.mean(robust))
    return AbilityError(
        sd=float(np.sqrt(max(excess, 0.0))),
        shifts={m: float(v) for m, v in zip(models, shift, strict=True)},
        n_children=len(rows),
    )


class AbilityDraws:
    """Abilities drawn around θ̂ (centred normal, SD ``error.sd``) and, per draw, the
    shift of any b into that draw's frame (solved on a grid, interpolated)."""

    def __init__(
        self, calibration: Calibration, error: AbilityError, *, draws: int, seed: int
    ) -> None:
        self.calibration = calibration
        self.error = error
        theta = calibration.theta
        rng = np.random.default_rng([seed, 29])
        eps = rng.normal(0.0, error.sd, size=(draws, theta.size))
        eps -= eps.mean(axis=1, keepdims=True)
        self.theta = theta + eps
        self.grid = np.linspace(theta.min() - _MARGIN, theta.max() + _MARGIN, _GRID)
        self._shift = (
            equal_score_b(self.grid, theta, self.theta) - self.grid
            if error.sd > 0
            else np.zeros((draws, _GRID))
        )

    @property
    def n(self) -> int:
        return int(self.theta.shape[0])

    def _at(self, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = np.clip(np.asarray(b, dtype=np.float64), self.grid[0], self.grid[-1])
        i = np.clip(np.searchsorted(self.grid, x) - 1, 0, self.grid.size - 2)
        return i, (x - self.grid[i]) / (self.grid[i + 1] - self.grid[i])

    def shift(self, b: np.ndarray) -> np.ndarray:
        """(draws, len(b)): each b's move into each draw's frame (flat past the grid)."""
        i, w = self._at(b)
        out: np.ndarray = self._shift[:, i] * (1 - w) + self._shift[:, i + 1] * w
        return out

    def shift_each(self, b: np.ndarray) -> np.ndarray:
        """(draws, m): row r of ``b`` moved by draw r only."""
        i, w = self._at(b)
        left = np.take_along_axis(self._shift, i, axis=1)
        right = np.take_along_axis(self._shift, i + 1, axis=1)
        out: np.ndarray = left * (1 - w) + right * w
        return out

    def frame_sd(self, b: float) -> float:
        """SD over the draws of ``b``'s place: the ability error's share of its error."""
        return float(self.shift(np.array([b]))[:, 0].std())


def widen(c: Candidate, draws: AbilityDraws) -> Candidate:
    """A calibrated candidate with its 90% interval of z widened by the ability error:
    ``b ± 1.645·sqrt(SE² + frame SD²)`` mapped to z (a bound keeps its open end); the
    parts are recorded in ``lineage.interval``."""
    if c.status not in (CALIBRATED, INSERTED) or c.method == ORACLE or c.b is None:
        return c
    se = float(c.se or 0.0)
    frame = draws.frame_sd(float(c.b))
    half = Z90 * float(np.sqrt(se**2 + frame**2))
    z_low, z_high = (float(v) for v in draws.calibration.to_z(np.array([c.b - half, c.b + half])))
    lineage = c.lineage_dict()
    bound = lineage.get("bound")
    if bound == "all-solved":
        z_low = 0.0
    elif bound == "none-solved":
        z_high = 1.0
    lineage["interval"] = {
        "level": 0.9,
        "se_b": se,
        "ability_sd_b": frame,
        "ability_error_sd": draws.error.sd,
        "trials_only": [c.z_low, c.z_high],
    }
    return c.replace(
        z_low=min(z_low, c.z_low) if c.z_low is not None else z_low,
        z_high=max(z_high, c.z_high) if c.z_high is not None else z_high,
        lineage=json.dumps(lineage, sort_keys=True, ensure_ascii=False),
    )


def _posterior_b(c: Candidate) -> tuple[float, float]:
    """An inserted item's b and SE from all its trials (the confirmation pooled with
    the selection's), or its record's; the oracle's is exact."""
    if c.method == ORACLE or c.b is None:
        return float(c.b or 0.0), 0.0
    pooled = c.lineage_dict().get("pooled") or {}
    if pooled.get("b") is not None and pooled.get("se") is not None:
        return float(pooled["b"]), float(pooled["se"])
    return float(c.b), float(c.se or 0.0)


def reduction_interval(
    inserted: Sequence[Candidate],
    b_before: np.ndarray,
    draws: AbilityDraws,
    *,
    seed: int,
    k: int = 3,
) -> dict[str, Any] | None:
    """Median and 90% interval of the Top-k reduction (percent) over the draws.

    Each draw moves the benchmark's items (``b_before``, their calibrated b) and the
    inserted items (b redrawn from all their trials) into one ability draw's frame.
    None without an inserted item.
    """
    if not inserted:
        return None
    cal = draws.calibration
    rng = np.random.default_rng([seed, 29, k])
    post = np.array([_posterior_b(c) for c in inserted])
    b_new = post[:, 0][None, :] + post[:, 1][None, :] * rng.standard_normal((draws.n, len(post)))
    uniq, inverse = np.unique(b_before, return_inverse=True)
    z_old = cal.to_z(uniq[None, :] + draws.shift(uniq))[:, inverse]
    z_new = cal.to_z(b_new + draws.shift_each(b_new))
    values = np.array(
        [top_k_reduction(z_old[r], np.concatenate([z_old[r], z_new[r]]), k) for r in range(draws.n)]
    )
    lo, mid, hi = np.quantile(values, [0.05, 0.5, 0.95])
    return {
        "estimate": round(float(mid), 4),
        "low": round(float(lo), 4),
        "high": round(float(hi), 4),
        "level": 0.9,
        "draws": draws.n,
    }


def calibrated(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Candidates measured by the panel (calibrated or inserted; never the oracle)."""
    return [
        c
        for c in candidates
        if c.status in (CALIBRATED, INSERTED) and c.method != ORACLE and c.panel is not None
    ]
