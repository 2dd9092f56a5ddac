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
"""

from __future__ import annotations

import difflib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from curation.grading import normalize_text, parse_number, reference_letter

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
