"""Mechanical validity of a child (SPEC §4 step 4), before any panel trial is paid for.

* **Gradable**: :func:`curation.calibrate.gradable_problem` (the panel's graders can
  use its answer).
* **Not a near-duplicate** of any memory item (or of an earlier sibling): the
  normalised question is identical, or all three of
  (a) difflib similarity of the normalised question tokens ≥ ``threshold``,
  (b) the same answer (compared the way the grader compares answers),
  (c) the same numbers in the question (as a multiset).
  A rewrite that changes one constant keeps (a) but changes (c) and usually (b), so
  it is a new item — the paper's canonical edit; a paraphrase with the same numbers
  and answer is not.
* **No unexplained answer change** (:func:`unsaid_answer_change`): a reference answer
  that differs from the parent's while the question keeps the parent's numbers and the
  ``change`` line states nothing. Real small rewriters do this often: they copy the
  parent and "solve" it again, wrongly.
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from curation.grading import (
    GradingSettings,
    answers_agree,
    normalize_text,
    parse_number,
    reference_letter,
)

_TOKEN = re.compile(r"\w+|[^\w\s]")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(normalize_text(text))


def _numbers(text: str) -> tuple[str, ...]:
    return tuple(sorted(n.replace(",", "") for n in _NUMBER.findall(text)))


def answer_key(answer: str | None, answer_type: str, choices: Sequence[str] | None) -> str:
    """A key under which equal answers (as the grader sees them) collide."""
    if answer is None:
        return "\0none"
    if answer_type == "numeric":
        value = parse_number(answer)
        if value is not None:
            return f"num:{value}"
    if answer_type == "choice" and choices:
        letter = reference_letter(answer, choices)
        if letter is not None:
            return f"choice:{letter}"
    return "text:" + normalize_text(answer)


@dataclass(frozen=True)
class Duplicate:
    """The memory item a child duplicates, and how similar their questions are."""

    item: str
    similarity: float

    def reason(self) -> str:
        if self.similarity >= 1.0:
            return f"same question as {self.item}"
        return (
            f"near-duplicate of {self.item} (similarity {self.similarity:.3f}, "
            "same answer and numbers)"
        )


class DuplicateIndex:
    """Questions seen so far, indexed for the near-duplicate test."""

    def __init__(self, threshold: float) -> None:
        self.threshold = threshold
        self._exact: dict[str, str] = {}
        self._by_answer: dict[str, list[tuple[str, list[str], tuple[str, ...]]]] = defaultdict(list)

    def copy(self) -> DuplicateIndex:
        """An independent index with the same entries (cheaper than re-adding them)."""
        out = DuplicateIndex(self.threshold)
        out._exact = dict(self._exact)
        for key, entries in self._by_answer.items():
            out._by_answer[key] = list(entries)
        return out

    def add(
        self,
        item: str,
        question: str,
        answer: str | None,
        answer_type: str,
        choices: Sequence[str] | None = None,
    ) -> None:
        self._exact.setdefault(" ".join(_tokens(question)), item)
        key = answer_key(answer, answer_type, choices)
        self._by_answer[key].append((item, _tokens(question), _numbers(question)))

    def find(
        self,
        question: str,
        answer: str | None,
        answer_type: str,
        choices: Sequence[str] | None = None,
    ) -> Duplicate | None:
        tokens = _tokens(question)
        same = self._exact.get(" ".join(tokens))
        if same is not None:
            return Duplicate(same, 1.0)
        numbers = _numbers(question)
        best: Duplicate | None = None
        for item, other, other_numbers in self._by_answer.get(
            answer_key(answer, answer_type, choices), ()
        ):
            if other_numbers != numbers:
                continue
            matcher = difflib.SequenceMatcher(None, tokens, other, autojunk=False)
            if (
                matcher.real_quick_ratio() < self.threshold
                or matcher.quick_ratio() < self.threshold
            ):
                continue
            ratio = matcher.ratio()
            if ratio >= self.threshold and (best is None or ratio > best.similarity):
                best = Duplicate(item, ratio)
        return best


_NO_CHANGE = re.compile(
    r"^\W*(?:none|nothing|n/?a|no changes?(?: made)?|unchanged|same|"
    r"(?:the )?same as (?:in )?(?:the )?parent|as (?:in )?the parent|"
    r"<one line: what you changed>)?\W*$",
    re.I,
)


def says_what_changed(change: str | None) -> bool:
    """Whether the rewriter's ``change`` line states a change at all.

    Empty, "none", "as the parent", "unchanged" and the prompt's own placeholder state
    nothing; any other text counts as saying (its truth is the judge's job).
    """
    return change is not None and _NO_CHANGE.match(change) is None


def unsaid_answer_change(
    parent_question: str,
    parent_answer: str | None,
    question: str,
    answer: str | None,
    answer_type: str,
    change: str | None,
    choices: Sequence[str] | None = None,
    grading: GradingSettings | None = None,
) -> str | None:
    """Why a child's reference answer changed without the rewrite accounting for it, or None.

    The rule (mechanical, so a cheap check before any panel trial): the child's answer
    differs from the parent's (compared as the grader compares answers), yet the
    child's question carries exactly the parent's numbers (no constant changed) and the
    ``change`` line states nothing (:func:`says_what_changed`). Then nothing visible in
    the rewrite explains a new answer: either the rewriter mis-solved an unchanged
    problem, or it changed a condition in words and did not say so. A changed number,
    or a stated change, lets the answer change (whether it is right is the judge's and
    the panel's job). Answers are compared by the panel's grader (``\\frac{1}{2}`` and
    ``0.5`` agree), by :func:`answer_key` where it cannot grade (code, free-form).
    """
    same = answers_agree(answer, parent_answer, answer_type, choices=choices, settings=grading)
    if same is None:
        same = answer_key(answer, answer_type, choices) == answer_key(
            parent_answer, answer_type, choices
        )
    if same:
        return None
    if _numbers(question) != _numbers(parent_question) or says_what_changed(change):
        return None
    stated = "no change stated" if not change else f"change {change!r} states none"
    return (
        f"answer changed without saying: {parent_answer!r} -> {answer!r}, "
        f"the question has the parent's numbers and {stated}"
    )
