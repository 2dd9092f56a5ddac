"""`curate review stats`: queue size by status and throughput per reviewer."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

from curation.review._agreement import GroupAgreement, PairAgreement, agreement
from curation.review._store import STATUSES, Decision, ReviewStore


@dataclass(frozen=True)
class ReviewerStats:
    """One reviewer's decisions and pace."""

    reviewer: str
    decisions: int
    by_decision: dict[str, int]
    first: str
    last: str
    active_hours: float
    """Time spent deciding one item at a time, in hours: the gaps between consecutive
    single decisions, each capped at :data:`BREAK_S` (a longer gap is a break, counted as
    that much). Bulk decisions take no time of their own."""
    per_hour: float | None
    """Single decisions that ended a counted gap / active_hours; None under a minute of
    activity (one decision, or only bulk ones)."""
    bulk: int = 0
    """Decisions made by **Accept all… / Reject all…** (one batch id each): not in the pace."""


@dataclass(frozen=True)
class QueueStats:
    """Queue size by status (overall and per benchmark) and throughput per reviewer."""

    total: int
    by_status: dict[str, int]
    by_benchmark: dict[str, dict[str, int]]
    simulated: int
    decisions: int
    reviewers: list[ReviewerStats] = field(default_factory=list)
    pairs: list[PairAgreement] = field(default_factory=list)
    """Per benchmark and reviewer pair: doubly-reviewed items, percent agreement, kappa."""
    groups: list[GroupAgreement] = field(default_factory=list)
    """Per benchmark: items with 2+ reviewers, percent agreement, Krippendorff's alpha."""
    overrules: int = 0
    """Accepts that overruled the LLM judge (and were not undone)."""
    batches: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


BREAK_S = 15 * 60
"""A gap between two decisions longer than this is a break: it counts as this long."""


def _pace(ds: list[Decision]) -> tuple[float, float | None]:
    """(active hours, single decisions per active hour) of one reviewer's decisions."""
    times = sorted(_parse(d.decided_at) for d in ds if not d.batch)
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
    active = sum(min(g, BREAK_S) for g in gaps)
    per_hour = round(len(gaps) / (active / 3600), 2) if active >= 60 else None
    return round(active / 3600, 4), per_hour


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def queue_stats(store: ReviewStore) -> QueueStats:
    """The review queue's counts by status and each reviewer's decisions and pace, as
    ``curate review stats`` prints them."""
    counts = store.counts()
    by_status = dict.fromkeys(STATUSES, 0)
    for by in counts.values():
        for s, n in by.items():
            by_status[s] += n
    _, simulated = store.queue(source="simulated", limit=1)
    decisions = store.decisions()
    per: dict[str, list[Decision]] = {}
    for d in decisions:
        per.setdefault(d.reviewer, []).append(d)
    reviewers = []
    for name, ds in sorted(per.items()):
        hours, per_hour = _pace(ds)
        reviewers.append(
            ReviewerStats(
                reviewer=name,
                decisions=len(ds),
                by_decision=dict(sorted(Counter(d.decision for d in ds).items())),
                first=min(d.decided_at for d in ds),
                last=max(d.decided_at for d in ds),
                active_hours=hours,
                per_hour=per_hour,
                bulk=sum(1 for d in ds if d.batch),
            )
        )
    pairs, groups = agreement(decisions)
    undone = {d.reverts for d in decisions if d.decision == "reverted"}
    return QueueStats(
        pairs=pairs,
        groups=groups,
        overrules=sum(1 for d in decisions if d.overrules_judge and d.id not in undone),
        batches=len({d.batch for d in decisions if d.batch}),
        total=sum(by_status.values()),
        by_status=by_status,
        by_benchmark=counts,
        simulated=simulated,
        decisions=len(decisions),
        reviewers=reviewers,
    )


def format_stats(stats: QueueStats) -> str:
    """A plain-text report for the terminal."""
    lines = [
        f"queue: {stats.total} item(s) ({stats.simulated} simulated), {stats.decisions} decision(s)"
    ]
    lines.append("  " + ", ".join(f"{s} {n}" for s, n in stats.by_status.items()))
    for b, by in stats.by_benchmark.items():
        lines.append(f"  {b}: " + ", ".join(f"{s} {n}" for s, n in by.items()))
    if stats.reviewers:
        lines.append("reviewers:")
        width = max(len(r.reviewer) for r in stats.reviewers)
        for r in stats.reviewers:
            pace = (
                f"{r.per_hour:.1f}/h over {r.active_hours:.2f} h active"
                if r.per_hour is not None
                else "pace n/a (under a minute of one-by-one reviewing)"
            )
            kinds = ", ".join(f"{k} {n}" for k, n in r.by_decision.items())
            bulk = f", {r.bulk} in bulk" if r.bulk else ""
            lines.append(
                f"  {r.reviewer:<{width}}  {r.decisions:>4} decision(s) ({kinds}{bulk}); "
                f"{pace} ({r.first[:16]} .. {r.last[:16]})"
            )
        lines.append(
            f"  (active time: the gaps between decisions; a pause over {BREAK_S // 60} min "
            f"counts as {BREAK_S // 60} min)"
        )
    else:
        lines.append("reviewers: none yet")
    lines.append(
        f"judge overruled: {stats.overrules} accept(s) with a reason; bulk batches: {stats.batches}"
    )
    if stats.pairs or stats.groups:
        lines.append("agreement (accept/reject votes on the same item version):")
    for p in stats.pairs:
        lines.append(
            f"  {p.benchmark}: {p.a} vs {p.b}: {p.n} item(s) both reviewed, {p.agree} agree "
            f"({_pct(p.percent)}), Cohen's kappa {_num(p.kappa)}"
        )
    for g in stats.groups:
        if g.reviewers > 2:
            lines.append(
                f"  {g.benchmark}: {g.reviewers} reviewers on {g.units} item(s): "
                f"{_pct(g.percent)} of vote pairs agree, Krippendorff's alpha {_num(g.alpha)}"
            )
    return "\n".join(lines)


def _pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}%"


def _num(v: float | None) -> str:
    return "undefined (one label only)" if v is None else f"{v:.3f}"
