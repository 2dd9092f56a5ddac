"""Can the panel's graders grade a new item? Checked before any panel trial is paid for."""

from __future__ import annotations

from collections.abc import Sequence

from curation.grading import GradingSettings, method_for, parse_number, reference_letter


def gradable_problem(
    answer: str | None,
    answer_type: str,
    choices: Sequence[str] | None,
    grading: GradingSettings | None = None,
) -> str | None:
    """Why ``answer`` cannot be graded (None if it can).

    An answer must be present and usable by the grader of its answer type: a number
    for numeric items, a letter/option for choice items, non-empty text for exact
    items; code needs a sandbox and free-form answers a judge, so neither can be
    calibrated here.
    """
    if answer is None or not answer.strip():
        return "no reference answer"
    method = method_for(answer_type, grading)
    if method == "skip":
        return "free-form answers need a judge to be graded; none is configured"
    if method == "code":
        return "code items need a sandbox to be graded; none is configured"
    if method == "numeric" and parse_number(answer) is None:
        return f"answer {answer!r} is not a number (answer type numeric)"
    if method == "choice":
        if not choices:
            return "a choice item needs its options ('choices')"
        if reference_letter(answer, choices) is None:
            return f"answer {answer!r} is not one of the {len(choices)} options"
    return None
