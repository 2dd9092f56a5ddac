"""3PL: each item's guessing floor, the fit, and its 1PL-equivalent location.

* :func:`item_floors` — the floor c of each item from its record: 1/options for a
  multiple-choice item whose choices are listed, 0 for a free-response item (nothing to
  guess among), NaN where the record cannot say (a matrix-only benchmark, a choice item
  without its choices);
* :func:`fit_map_3pl` — MAP with those floors held fixed; the unknown ones share one
  floor, estimated jointly (its posterior mode under a Beta prior, found by a bounded
  search, each step a warm-started fit);
* :func:`equivalent_b` — where a 3PL item sits on the axis z reports: the 1PL difficulty
  the panel would need to score the same on it, b_eq with Σ_j σ(θ_j − b_eq) =
  Σ_j P_j(item). The simulated worlds define an item's true z the same way
  (:mod:`curation.calibrate._world`), so a 3PL item's z is "how hard this panel finds
  it", not where its curve's steep part lies. A chance-level item (P ≈ c for every
  model) thus sits where the panel would solve a no-guessing item c of the time, not
  at the top of the scale: an item no model can do better than guess on is reported
  as hard as that, not as infinitely hard.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from curation.irt._data import Cells
from curation.irt._guess import floor_probability
from curation.irt._map import MapFit, fit_2pl_raw
from curation.irt._settings import FitSettings

C_BOUNDS = (1e-4, 0.95)
"""Range of a shared floor (a 2-option item guesses at 0.5)."""
C_XTOL = 1e-5
"""The shared floor is found to this (far inside its standard error at any panel size)."""
C_ROUNDS = 50
"""Secant steps at most for a shared floor (each a warm-started fit)."""


def item_floors(
    items: Sequence[str],
    choices: Mapping[str, Sequence[Any] | None],
    answer_types: Mapping[str, str | None],
) -> NDArray[np.float64]:
    """The guessing floor of each of ``items``: 1/len(choices) when the choices are listed
    (two or more), 0 for an item whose answer type is not "choice" and lists no choices,
    NaN when unknown (no record, or a choice item without its choices)."""
    out = np.full(len(items), np.nan)
    for i, item in enumerate(items):
        listed = choices.get(item)
        if listed is not None and len(listed) >= 2:
            out[i] = 1.0 / len(listed)
        elif item in answer_types and answer_types[item] not in (None, "choice"):
            out[i] = 0.0
    return out


def floors_of_items(items: pl.DataFrame, order: Sequence[str]) -> NDArray[np.float64]:
    """:func:`item_floors` of an item table (schema ``item``) in ``order``.

    An item without a question (a matrix-only benchmark's id) or absent from the table
    has no record to read its options from: unknown.
    """
    rows = items.select("item", "question", "choices", "answer_type").to_dicts()
    choices = {r["item"]: r["choices"] for r in rows}
    kinds = {r["item"]: r["answer_type"] for r in rows if r["question"] is not None}
    return item_floors(order, choices, kinds)


def _beta(settings: FitSettings) -> tuple[float, float]:
    return settings.c_mean * settings.c_strength, (1.0 - settings.c_mean) * settings.c_strength


_CHUNK = 1 << 20


def shared_floor_step(
    cells: Cells, x: tuple[np.ndarray, ...], unknown: np.ndarray, c: float, settings: FitSettings
) -> float:
    """The shared floor's posterior mode given the fit's (θ, b, log a): its log posterior
    is concave in c (logs of functions affine in c, and a Beta prior with both shapes
    >= 1 is log-concave), so a safeguarded 1-D Newton finds it exactly."""
    th, b, al = x
    a = np.exp(al)
    alpha, beta = _beta(settings)
    use = unknown[cells.ii]
    mi, ii, k, n = cells.mi[use], cells.ii[use], cells.k[use], cells.n[use]
    # σ per cell is fixed while c moves: computed once, then Newton on c
    sig = np.empty(mi.size)
    for s0 in range(0, mi.size, _CHUNK):
        sl = slice(s0, s0 + _CHUNK)
        eta = a[ii[sl]] * (th[mi[sl]] - b[ii[sl]])
        sig[sl] = 0.5 + 0.5 * np.tanh(0.5 * eta)
    one_minus = 1.0 - sig
    wrong = float(np.sum(n - k))
    lo, hi = C_BOUNDS
    for _ in range(60):
        p = c + (1.0 - c) * sig
        ratio = one_minus / p
        g = float(k @ ratio) - wrong / (1.0 - c) + (alpha - 1.0) / c - (beta - 1.0) / (1.0 - c)
        h = -float(k @ (ratio * ratio)) - wrong / (1.0 - c) ** 2
        h -= (alpha - 1.0) / c**2 + (beta - 1.0) / (1.0 - c) ** 2
        if g > 0:
            lo = max(lo, c)
        else:
            hi = min(hi, c)
        nxt = c - g / h if h < 0 else 0.5 * (lo + hi)
        if not lo < nxt < hi:
            nxt = 0.5 * (lo + hi)
        if abs(nxt - c) < 1e-12:
            return nxt
        c = nxt
    return c


def fit_map_3pl(
    cells: Cells,
    settings: FitSettings,
    floor: np.ndarray,
    start: MapFit | None = None,
) -> MapFit:
    """3PL MAP: P = c + (1 − c) σ(a (θ − b)) with ``floor`` c per item (``cells.items``
    order; NaN = unknown: those items share one floor, estimated). The returned fit's
    ``c`` holds the floors used.

    The shared floor c is at the joint mode when it is its own mode given the rest
    fitted at c: g(c) = (the floor's mode given the fit at c, :func:`shared_floor_step`)
    − c = 0. Coordinate ascent (c ← c + g(c)) would converge only linearly, so after one
    such round secant steps on g solve it, each a warm-started fit, until |g| <
    :data:`C_XTOL`.
    """
    floor = np.asarray(floor, dtype=np.float64)
    if floor.shape != (cells.n_items,):
        raise ValueError(f"floor must have one value per item ({cells.n_items}), got {floor.shape}")
    known = floor[~np.isnan(floor)]
    if known.size and (known.min() < 0 or known.max() >= 1):
        raise ValueError("a guessing floor must be in [0, 1)")
    unknown = np.isnan(floor)
    if not unknown.any():
        return _map_fit(fit_2pl_raw(cells, settings, start, floor), floor)
    lo, hi = C_BOUNDS

    def refit(c: float, prev: dict[str, Any] | None) -> tuple[dict[str, Any], float]:
        """The fit at floor c and the gap g(c) = (floor's mode given that fit) − c."""
        res = fit_2pl_raw(
            cells,
            settings,
            start,
            np.where(unknown, c, floor),
            centre=0.0 if prev is None else prev["scale_centre"],
            x0=None if prev is None else prev["x"],
        )
        return res, shared_floor_step(cells, res["x"], unknown, c, settings) - c

    c_prev = settings.c_mean
    res, g_prev = refit(c_prev, None)
    iterations = res["iterations"]
    c = c_prev + g_prev  # one plain coordinate-ascent round
    res, g = refit(c, res)
    iterations += res["iterations"]
    for _ in range(C_ROUNDS):
        if abs(g) < C_XTOL:
            break
        # secant on g (coordinate ascent alone converges linearly, ~0.9 a round)
        c_new = c - g * (c - c_prev) / (g - g_prev) if g != g_prev else c + g
        if not lo < c_new < hi:
            c_new = c + g
        c_prev, g_prev = c, g
        c = c_new
        res, g = refit(c, res)
        iterations += res["iterations"]
    res["iterations"] = iterations
    res["converged"] = bool(res["converged"]) and abs(g) < C_XTOL
    return _map_fit(res, np.where(unknown, c, floor))


def _map_fit(res: dict[str, Any], floor: np.ndarray) -> MapFit:
    keep = {k: v for k, v in res.items() if k not in ("x", "scale_centre")}
    return MapFit(**keep, c=floor)


def expected_panel_score(
    theta: np.ndarray, b: np.ndarray, a: np.ndarray | None, c: np.ndarray | None
) -> NDArray[np.float64]:
    """Σ_j P_j(item) over the panel's abilities, per item (items × models work)."""
    a_ = np.ones_like(b) if a is None else a
    c_ = np.zeros_like(b) if c is None else c
    eta = a_[:, None] * (theta[None, :] - b[:, None])
    out: NDArray[np.float64] = floor_probability(eta, c_[:, None]).sum(axis=1)
    return out


def invert_panel_score(theta: np.ndarray, score: np.ndarray) -> NDArray[np.float64]:
    """x with Σ_j σ(θ_j − x) = score, per entry of ``score`` (0 < score < models).

    Newton on the convex-concave, strictly decreasing panel curve from a bracketed
    start, safeguarded by bisection; converged to 1e-12 logits.
    """
    m = theta.size
    target = np.clip(np.asarray(score, dtype=np.float64), 1e-12, m - 1e-12)
    lo = np.full(target.shape, float(theta.min()) - 40.0)
    hi = np.full(target.shape, float(theta.max()) + 40.0)
    # start: the logit of the mean score, centred on the panel
    p = target / m
    x = float(np.mean(theta)) - np.log(p / (1.0 - p))
    x = np.clip(x, lo, hi)
    for _ in range(100):
        s = np.tanh(0.5 * (theta[None, :] - x[..., None]))
        s *= 0.5
        s += 0.5
        f = s.sum(axis=-1) - target
        slope = -(s * (1.0 - s)).sum(axis=-1)
        hi = np.where(f < 0, x, hi)  # score too low: x too hard
        lo = np.where(f > 0, x, lo)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = f / slope
        nxt = x - step
        bad = ~np.isfinite(nxt) | (nxt <= lo) | (nxt >= hi)
        nxt = np.where(bad, 0.5 * (lo + hi), nxt)
        done = np.abs(nxt - x) < 1e-12
        x = nxt
        if done.all():
            break
    return x


def equivalent_b(
    theta: np.ndarray, b: np.ndarray, a: np.ndarray | None, c: np.ndarray | None
) -> NDArray[np.float64]:
    """The 1PL-equivalent difficulty of each item on the panel ``theta`` (module doc)."""
    return invert_panel_score(theta, expected_panel_score(theta, b, a, c))


def equivalent_slope(
    theta: np.ndarray,
    b: np.ndarray,
    b_eq: np.ndarray,
    a: np.ndarray | None,
    c: np.ndarray | None,
) -> NDArray[np.float64]:
    """d b_eq / d b per item: the panel's score slope in the curve's b over its slope
    in the 1PL location at b_eq (both negative)."""
    a_ = np.ones_like(b) if a is None else a
    c_ = np.zeros_like(b) if c is None else c
    s = 0.5 + 0.5 * np.tanh(0.5 * a_[:, None] * (theta[None, :] - b[:, None]))
    num = a_ * (1.0 - c_) * (s * (1.0 - s)).sum(axis=1)
    s_eq = 0.5 + 0.5 * np.tanh(0.5 * (theta[None, :] - b_eq[:, None]))
    den = (s_eq * (1.0 - s_eq)).sum(axis=1)
    out: NDArray[np.float64] = num / np.maximum(den, np.finfo(np.float64).tiny)
    return out
