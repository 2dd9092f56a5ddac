"""Do two bare answers agree, by the panel's grader?

The judge compares its own solution with a candidate's reference, and BenchFill checks
whether a rewrite's answer differs from its parent's: both ask the
grader the panel's answers go through, so "agree" means what "correct" means.
"""

from __future__ import annotations

from collections.abc import Sequence

from curation.grading._grade import grade, method_for
from curation.grading._settings import GradingSettings


def _as_output(answer: str, method: str) -> str:
    """A bare answer in the form the default panel templates ask for, so the grader's
    extraction takes all of it (a bare ``\\frac{3}{4}`` would be read as 4)."""
    if method in ("numeric", "regex"):
        return f"\\boxed{{{answer}}}"
    if method == "exact":
        return f"[ANSWER]{answer}[/ANSWER]"
    if method == "choice":
        return f"Answer: {answer}"
    return answer


def answers_agree(
    own: str | None,
    reference: str | None,
    answer_type: str,
    *,
    choices: Sequence[str] | None = None,
    settings: GradingSettings | None = None,
) -> bool | None:
    """Does ``own`` grade correct against ``reference``? None when it cannot be graded
    (no answer, no reference, code without a sandbox, free-form)."""
    if own is None or reference is None:
        return None
    method = method_for(answer_type, settings)
    return grade(
        _as_output(own, method), reference, answer_type, choices=choices, settings=settings
    ).correct
