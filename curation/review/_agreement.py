"""Inter-reviewer agreement on accept/reject votes: Cohen's kappa per reviewer pair
(statsmodels), Krippendorff's alpha over all reviewers (krippendorff), each with the
raw percent agreement beside it.

A unit is one item version; each reviewer's vote is their latest accept/reject on it
that no undo reverted (adjudicators are not raters: they resolve disagreements).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np
from statsmodels.stats.inter_rater import cohens_kappa

from curation.review._store import Decision

LABELS = ("accepted", "rejected")


@dataclass(frozen=True)
class PairAgreement:
    benchmark: str
    a: str
    b: str
    n: int
    """Items both reviewed (same version)."""
    agree: int
    percent: float | None
    kappa: float | None
    """Cohen's kappa; None when undefined (n = 0, or both always gave one same label)."""


@dataclass(frozen=True)
class GroupAgreement:
    benchmark: str
    reviewers: int
    units: int
    """Items with two or more reviewers' votes."""
    percent: float | None
    """Share of agreeing pairs of votes within those items."""
    alpha: float | None
    """Krippendorff's alpha (nominal); None when undefined."""


def votes(decisions: list[Decision]) -> dict[str, dict[tuple[str, int], dict[str, str]]]:
    """benchmark -> (candidate, version) -> reviewer -> latest counting vote."""
    undone = {d.reverts for d in decisions if d.decision == "reverted"}
    out: dict[str, dict[tuple[str, int], dict[str, str]]] = {}
    for d in sorted(decisions, key=lambda d: d.id):
        if d.decision in LABELS and d.role == "reviewer" and d.id not in undone:
            out.setdefault(d.benchmark, {}).setdefault((d.candidate, d.version), {})[d.reviewer] = (
                d.decision
            )
    return out


def pair_agreement(
    benchmark: str, units: dict[tuple[str, int], dict[str, str]], a: str, b: str
) -> PairAgreement:
    both = [(v[a], v[b]) for v in units.values() if a in v and b in v]
    agree = sum(x == y for x, y in both)
    kappa = None
    if both:
        table = np.zeros((2, 2))
        for x, y in both:
            table[LABELS.index(x), LABELS.index(y)] += 1
        expected = (table.sum(1) @ table.sum(0)) / len(both) ** 2
        if expected < 1:  # kappa is 0/0 when both reviewers only ever gave one label
            kappa = float(cohens_kappa(table, return_results=False))
    return PairAgreement(
        benchmark=benchmark,
        a=a,
        b=b,
        n=len(both),
        agree=agree,
        percent=round(100 * agree / len(both), 2) if both else None,
        kappa=None if kappa is None else round(kappa, 4),
    )


def group_agreement(benchmark: str, units: dict[tuple[str, int], dict[str, str]]) -> GroupAgreement:
    multi = [v for v in units.values() if len(v) >= 2]
    raters = sorted({r for v in multi for r in v})
    pairs = agree = 0
    for v in multi:
        for x, y in combinations(v.values(), 2):
            pairs += 1
            agree += x == y
    alpha = None
    if multi:
        data = np.full((len(raters), len(multi)), np.nan)
        for j, v in enumerate(multi):
            for r, label in v.items():
                data[raters.index(r), j] = LABELS.index(label)
        if len({x for v in multi for x in v.values()}) > 1:
            alpha = round(
                float(krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")), 4
            )
    return GroupAgreement(
        benchmark=benchmark,
        reviewers=len(raters),
        units=len(multi),
        percent=round(100 * agree / pairs, 2) if pairs else None,
        alpha=alpha,
    )


def agreement(decisions: list[Decision]) -> tuple[list[PairAgreement], list[GroupAgreement]]:
    """Per benchmark: every reviewer pair with a shared item, and the whole group."""
    pairs, groups = [], []
    for b, units in sorted(votes(decisions).items()):
        reviewers = sorted({r for v in units.values() for r in v})
        for x, y in combinations(reviewers, 2):
            p = pair_agreement(b, units, x, y)
            if p.n:
                pairs.append(p)
        g = group_agreement(b, units)
        if g.units:
            groups.append(g)
    return pairs, groups
