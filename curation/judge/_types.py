"""What the judge returns: a verdict per candidate, and the details behind it.

``Verdict`` and ``Judge`` are the interface BenchFill's validity hook calls (defined with
the candidate record in :mod:`curation.candidates` and re-exported here); everything
else in this package is how one particular judge, :class:`~curation.judge.LLMJudge`,
arrives at a verdict.
"""

from __future__ import annotations

from dataclasses import dataclass

from curation.candidates import CALIBRATED, INSERTED, CandidateStatus, Verdict

JUDGED_STATUSES: tuple[CandidateStatus, ...] = (CALIBRATED, INSERTED)
"""Candidate statuses the judge stage judges; the others pass through untouched."""

UNPARSEABLE = "unparseable judge output"
"""The reason of a verdict whose judge never returned schema-valid JSON (after one repair)."""

NO_OWN_ANSWER = "not judged: the judge gave no answer of its own"
"""The reason's start when the judge did not solve a gradable item: its bare claim that the
reference is correct is not evidence (a weak judge rubber-stamps), so nothing is decided."""

UNDECIDED_CATEGORIES: tuple[str, ...] = ("unparseable", "no-own-answer", "undecided")
"""Categories of verdicts that decided nothing: never a pass, a reviewer must look."""


@dataclass(frozen=True)
class Assessment:
    """A verdict with what it was derived from (what the judge stage counts)."""

    verdict: Verdict
    own_answer: str | None
    """The judge's own final answer, found before it saw the reference."""
    grader_match: bool | None
    """curation.grading's comparison of ``own_answer`` with the reference (None = not gradable)."""
    stated_correct: bool | None
    """The judge's own statement of whether the reference is correct."""
    category: str
    """passed, unparseable, no-own-answer, undecided, or the failed checks
    (e.g. ``incorrect+ill-posed``)."""
    repaired: int = 0
    """How many repair requests were needed (0, 1 or 2)."""
    tolerant: int = 0
    """Replies whose JSON was found only by the tolerant reader (prose, fence, think tags)."""

    @property
    def disagreement(self) -> bool:
        """The grader and the judge's statement both decided, differently."""
        return (
            self.grader_match is not None
            and self.stated_correct is not None
            and self.grader_match != self.stated_correct
        )


def categorize(verdict: Verdict) -> str:
    """A short, countable reason: ``passed``, one of :data:`UNDECIDED_CATEGORIES`, or the
    failures joined in a fixed order, e.g. ``incorrect+ill-posed``.

    ``undecided`` = no check failed but correctness (or well-posedness) is unknown; such a
    verdict does not pass (:func:`curation.candidates.passed`).
    """
    reason = verdict.reason.removeprefix("[simulated]").strip()
    if reason.startswith(UNPARSEABLE):
        return "unparseable"
    failed = [
        name
        for name, value in (
            ("incorrect", verdict.correct),
            ("ill-posed", verdict.well_posed),
            ("format-changed", verdict.format_kept),
        )
        if value is False
    ]
    if failed:
        return "+".join(failed)
    if reason.startswith(NO_OWN_ANSWER):
        return "no-own-answer"
    if None in (verdict.correct, verdict.well_posed, verdict.format_kept):
        return "undecided"
    return "passed"
