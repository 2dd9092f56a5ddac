"""Choosing 1PL, 2PL or 3PL for a benchmark: held-out likelihood first, BIC beside it,
and a degeneracy check that no likelihood can talk its way past.

BIC compares in-sample fits with a penalty that assumes a regular model, and on a
leaderboard of 4,000 models a degenerate 2PL (abilities squeezed into a sliver, a few
items with a → 100) still wins it by tens of thousands. Held-out cells instead ask each
candidate to predict responses it never saw (cell-wise K-fold, the machinery the mirt
stage chooses its dimension with: :mod:`curation.irt._heldout`). A fit can still predict
well and be useless as a difficulty axis, so every candidate's full fit is also checked
against the 1PL, which cannot degenerate this way (one parameter per item, its abilities
ordered as the models' accuracy):

* its abilities must rank the models as the 1PL's do (Spearman >= ``min_rank_corr``);
* no discrimination above ``max_a`` (on the scale of an average item, mean log a = 0);
* the abilities' central 90% range at least ``min_span_ratio`` of the 1PL's;
* a 3PL's floors not all below ``min_floor`` (else it is the 2PL under another name).

A candidate failing one is set aside and the choice is made among the rest; the reason
is one line in the result (and so in the metrics and the stage's output).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from curation.irt._checks import spearman
from curation.irt._data import Cells
from curation.irt._fit import bic, fit_map, n_params
from curation.irt._guess import floor_probability
from curation.irt._heldout import (
    HeldoutRanking,
    binomial_cell_loglik,
    cell_folds,
    keep_trainable,
    rank_heldout,
)
from curation.irt._map import MapFit
from curation.irt._settings import (
    MODELS,
    FitSettings,
    ModelChoiceSettings,
    ModelType,
    check_choice,
)
from curation.irt._threads import pinned

MIN_TRAIN = 2
"""A held-out cell is put back where its item or model would keep fewer training cells."""


@dataclass(frozen=True)
class Candidate:
    """One candidate model: its full-data fit's figures and its held-out score."""

    model: str
    loglik: float
    n_params: int
    bic: float
    converged: bool
    heldout: float | None
    """Mean held-out log likelihood per cell (higher is better; None: nothing held out)."""
    heldout_gap: float | None
    """The best candidate's mean minus this one's."""
    heldout_gap_se: float | None
    rank_corr: float
    """Spearman correlation of the abilities with the 1PL's."""
    max_a: float | None
    span_ratio: float
    """Central 90% range of the abilities over the 1PL's."""
    problems: tuple[str, ...]
    """Why the fit is degenerate (empty: it is not)."""
    shared_floor: float | None = None
    """3PL: the floor estimated for the items whose options are unknown."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "loglik": self.loglik,
            "n_params": self.n_params,
            "bic": self.bic,
            "converged": self.converged,
            "heldout_loglik": self.heldout,
            "heldout_gap": self.heldout_gap,
            "heldout_gap_se": self.heldout_gap_se,
            "rank_corr_1pl": self.rank_corr,
            "max_a": self.max_a,
            "span_ratio": self.span_ratio,
            "degenerate": list(self.problems),
            "shared_floor": self.shared_floor,
        }


@dataclass(frozen=True)
class ModelChoice:
    """The candidates, what each rule prefers and what was chosen, and why (one line)."""

    candidates: tuple[Candidate, ...]
    chosen: ModelType
    heldout_choice: str | None
    """None when no cell could be held out (then BIC decides, ``rule`` says so)."""
    bic_choice: str
    reason: str
    folds: int
    se_rule: float
    seed: int
    n_scored: int
    """Cells scored (held out once; a few are kept in training by the put-back rule)."""
    rule: str = "heldout"
    """What decided: "heldout", or "bic" when no cell could be held out."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Models not considered, with why (e.g. 3PL when no item can be guessed)."""
    fits: dict[str, MapFit] = field(default_factory=dict, repr=False, compare=False)
    """The full-data fits (the chosen one can be reused); empty when ``fits_on`` is set."""
    fits_on: dict[str, int] | None = None
    """Set when the candidates were fitted on a model subset (above
    ``full_fits_max_cells``): its models and cells, and the cells of all."""

    def candidate(self, model: str) -> Candidate:
        return next(c for c in self.candidates if c.model == model)

    def to_metrics(self) -> dict[str, Any]:
        """The record metrics/irt/<b>.json keeps under ``choice``."""
        return {
            "rule": self.rule,
            "folds": self.folds,
            "se_rule": self.se_rule,
            "seed": self.seed,
            "n_scored_cells": self.n_scored,
            "heldout_choice": self.heldout_choice,
            "bic_choice": self.bic_choice,
            "chosen": self.chosen,
            "reason": self.reason,
            "candidates": {c.model: c.to_dict() for c in self.candidates},
            "skipped": dict(self.skipped),
        } | ({"fits_on": dict(self.fits_on)} if self.fits_on is not None else {})


def _span(theta: np.ndarray) -> float:
    lo, hi = np.quantile(theta, [0.05, 0.95])
    return float(hi - lo)


def problems_of(fit: MapFit, one: MapFit, checks: ModelChoiceSettings) -> list[str]:
    """The degeneracy checks of ``fit`` against the 1PL fit ``one`` (module doc)."""
    out = []
    rho = spearman(fit.theta, one.theta)
    if not rho >= checks.min_rank_corr:
        out.append(
            f"abilities rank-correlate with the 1PL's at {rho:.2f} < {checks.min_rank_corr:g}"
        )
    if fit.a is not None and float(fit.a.max()) > checks.max_a:
        out.append(f"a up to {float(fit.a.max()):.3g} > {checks.max_a:g}")
    ratio = _span(fit.theta) / max(_span(one.theta), 1e-12)
    if ratio < checks.min_span_ratio:
        out.append(
            f"abilities squeezed to {ratio:.2f} of the 1PL's range < {checks.min_span_ratio:g}"
        )
    if fit.c is not None and float(fit.c.max()) < checks.min_floor:
        out.append(f"floors below {checks.min_floor:g} (up to {float(fit.c.max()):.3g}): the 2PL")
    return out


def _predict(fit: MapFit, mi: np.ndarray, ii: np.ndarray) -> np.ndarray:
    """P(correct) of cells (model index, item index) under a fit."""
    a = 1.0 if fit.a is None else fit.a[ii]
    eta = a * (fit.theta[mi] - fit.b[ii])
    c = np.zeros(ii.size) if fit.c is None else fit.c[ii]
    return floor_probability(eta, c)


def _subset(cells: Cells, keep: np.ndarray) -> Cells:
    return Cells(cells.models, cells.items, cells.mi[keep], cells.ii[keep], cells.k[keep],
                 cells.n[keep])  # fmt: skip


def _models_scored(cells: Cells, max_cells: int, seed: int) -> Cells:
    """The cells the held-out comparison uses: all of them, or above ``max_cells`` those
    of a seeded random subset of models (every item kept: a leaderboard's thousands of
    models tell the candidates apart long before the last one)."""
    if cells.k.size <= max_cells:
        return cells
    per_model = np.bincount(cells.mi, minlength=cells.n_models)
    order = np.random.default_rng(seed).permutation(cells.n_models)
    keep = np.sort(order[: max(2, int(np.searchsorted(np.cumsum(per_model[order]), max_cells)))])
    remap = np.full(cells.n_models, -1, dtype=np.int64)
    remap[keep] = np.arange(keep.size)
    mask = remap[cells.mi] >= 0
    return Cells(
        tuple(cells.models[j] for j in keep),
        cells.items,
        remap[cells.mi[mask]].astype(np.int32),
        cells.ii[mask],
        cells.k[mask],
        cells.n[mask],
    )


def _fit_all(
    cells: Cells, models: Sequence[str], settings: FitSettings, floor: np.ndarray | None
) -> dict[str, MapFit]:
    one = fit_map(cells, "1pl", settings)
    out = {"1pl": one}
    for m in models:
        if m != "1pl":
            out[m] = fit_map(cells, m, settings, floor if m == "3pl" else None, start=one)
    return out


@pinned
def choose_model(
    cells: Cells,
    *,
    candidates: Sequence[str] = MODELS,
    settings: FitSettings | None = None,
    choice: ModelChoiceSettings | None = None,
    floor: np.ndarray | None = None,
    seed: int = 0,
) -> ModelChoice:
    """Choose among ``candidates`` (any of 1pl, 2pl, 3pl; the 1PL is always fitted, as the
    reference of the checks) by held-out likelihood, with BIC and the degeneracy checks.

    ``floor`` (3PL): the guessing floor per item in ``cells.items`` order, NaN where
    unknown (those share one floor, estimated on all cells and then held fixed in the
    folds: one parameter, so scoring it on cells it was estimated from flatters the 3PL
    by about one parameter's worth, far inside the paired SE at any real size).
    """
    for m in candidates:
        check_choice("candidate model", m, MODELS)
    s = settings if settings is not None else FitSettings()
    checks = choice if choice is not None else ModelChoiceSettings()
    order = [m for m in MODELS if m in candidates or m == "1pl"]
    if cells.n_models < 2:
        raise ValueError(f"model choice needs at least 2 models, got {cells.n_models}")
    if floor is None:
        floor = np.full(cells.n_items, np.nan)
    unknown = np.isnan(floor)
    scored = _models_scored(cells, checks.max_cells, seed)
    on_subset = cells.k.size > checks.full_fits_max_cells and scored is not cells
    basis = scored if on_subset else cells  # what BIC and the checks are computed on
    full = _fit_all(basis, order, s, floor)
    used_floor = full["3pl"].c if "3pl" in full else None
    fits_on = (
        {"models": basis.n_models, "cells": int(basis.k.size), "of_cells": int(cells.k.size)}
        if on_subset
        else None
    )
    folds = cell_folds(scored.k.size, checks.folds, seed)
    scores: dict[str, list[np.ndarray]] = {m: [] for m in order}
    scored_items: list[np.ndarray] = []
    scored_models: list[np.ndarray] = []
    n_scored = 0
    for f in range(checks.folds):
        held = keep_trainable(folds == f, scored.mi, scored.ii, scored.n_models,
                              scored.n_items, MIN_TRAIN)  # fmt: skip
        if not held.any():
            continue
        train = _subset(scored, ~held)
        fits = _fit_all(train, order, s, used_floor)
        mi, ii, k, n = scored.mi[held], scored.ii[held], scored.k[held], scored.n[held]
        n_scored += int(held.sum())
        scored_items.append(ii)
        scored_models.append(mi)
        for m in order:
            scores[m].append(binomial_cell_loglik(k, n, _predict(fits[m], mi, ii)))
    ranking = None
    if n_scored:
        per_cell = [np.concatenate(scores[m]) for m in order]
        # cluster-robust over items and models: their cells share fitted parameters
        groups = [np.concatenate(scored_items), np.concatenate(scored_models)]
        ranking = rank_heldout(per_cell, checks.se_rule, groups)

    one = full["1pl"]
    rows = []
    for c, m in enumerate(order):
        fit = full[m]
        shared = m == "3pl" and bool(unknown.any())
        rows.append(
            Candidate(
                model=m,
                loglik=fit.loglik,
                n_params=n_params(m, basis.n_models, basis.n_items, shared),
                bic=bic(fit.loglik, basis, m, floor if m == "3pl" else None),
                converged=fit.converged,
                heldout=None if ranking is None else ranking.means[c],
                heldout_gap=None if ranking is None else ranking.gaps[c],
                heldout_gap_se=None if ranking is None else ranking.gap_ses[c],
                rank_corr=1.0 if m == "1pl" else spearman(fit.theta, one.theta),
                max_a=None if fit.a is None else float(fit.a.max()),
                span_ratio=_span(fit.theta) / max(_span(one.theta), 1e-12),
                problems=() if m == "1pl" else tuple(problems_of(fit, one, checks)),
                shared_floor=float(fit.c[unknown][0]) if shared and fit.c is not None else None,
            )
        )
    bic_choice = min(rows, key=lambda r: r.bic).model
    by_model = {r.model: r for r in rows}
    if ranking is None:  # e.g. a 2-model panel: every item keeps both its cells
        ok = [m for m in order if not by_model[m].problems]
        chosen = min(ok, key=lambda m: by_model[m].bic)
        return ModelChoice(
            candidates=tuple(rows),
            chosen=cast("ModelType", chosen),
            heldout_choice=None,
            bic_choice=bic_choice,
            reason=(
                f"{chosen.upper()} by BIC: no cell can be held out (every item or model would "
                f"keep fewer than {MIN_TRAIN} training cells)"
            ),
            folds=checks.folds,
            se_rule=float(checks.se_rule),
            seed=int(seed),
            n_scored=0,
            rule="bic",
            fits={} if on_subset else full,
            fits_on=fits_on,
        )
    heldout_choice = order[ranking.chosen]
    chosen, reason = heldout_choice, _why(order, ranking, checks)
    if by_model[heldout_choice].problems:
        ok = [m for m in order if not by_model[m].problems]
        second = rank_heldout([per_cell[order.index(m)] for m in ok], checks.se_rule, groups)
        chosen = ok[second.chosen]
        reason = (
            f"{heldout_choice.upper()} set aside ({'; '.join(by_model[heldout_choice].problems)}); "
            + _why(ok, second, checks)
        )
    reason += f"; BIC prefers {bic_choice.upper()}"
    return ModelChoice(
        candidates=tuple(rows),
        chosen=cast("ModelType", chosen),
        heldout_choice=heldout_choice,
        bic_choice=bic_choice,
        reason=reason,
        folds=checks.folds,
        se_rule=float(checks.se_rule),
        seed=int(seed),
        n_scored=n_scored,
        fits={} if on_subset else full,
        fits_on=fits_on,
    )


def _why(order: Sequence[str], ranking: HeldoutRanking, checks: ModelChoiceSettings) -> str:
    """One phrase: why ``order[ranking.chosen]`` among ``order`` by held-out likelihood."""
    pick = order[ranking.chosen]
    if len(order) == 1:
        return f"{pick.upper()}: the only candidate left"
    if ranking.chosen == ranking.best:
        others = [c for c in range(len(order)) if c != ranking.chosen]
        runner = max(others, key=lambda c: ranking.means[c])
        return (
            f"{pick.upper()} predicts held-out cells best ({checks.folds}-fold; "
            f"+{ranking.gaps[runner]:.2g}/cell over {order[runner].upper()}, "
            f"SE {ranking.gap_ses[runner]:.2g})"
        )
    c = ranking.chosen
    return (
        f"{pick.upper()} is within {checks.se_rule:g} SE of the best held-out fit "
        f"({order[ranking.best].upper()} +{ranking.gaps[c]:.2g}/cell, "
        f"SE {ranking.gap_ses[c]:.2g}; {checks.folds}-fold), and simpler"
    )
