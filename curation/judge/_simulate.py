"""The offline judge: a seeded stand-in behind the LLM layer's Backend interface.

It answers the same two prompts a real judge gets, with JSON built from what the
judge registered about the candidate (the prompt text itself is not parsed), so the
judge's code path — requests, cache, accounting, schema validation, grading — is
the one a real endpoint goes through. Every reply says ``[simulated]``.

Rules (documented in params under ``judge.simulation``): the simulated judge's own
answer is the parent's reference answer, since a simulated rewrite keeps it; with
probability ``false_reject_rate`` (drawn from a hash of the seed and the candidate,
not a shared stream, so concurrency cannot change it) it answers wrongly instead,
which rejects a correct candidate. Well-posed = the question has text; format kept =
same answer type as the parent, and an answer of that type's form.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from fractions import Fraction

from curation.grading import answers_agree, parse_number, reference_letter
from curation.hashing import hashed_uniform
from curation.llm import SIMULATED_PREFIX, ChatRequest, Completion

_ROLE_SOLVE = "solve"
_ROLE_VERDICT = "verdict"


@dataclass(frozen=True)
class SimCase:
    """What the simulated judge knows about one candidate."""

    key: str
    """Stable id of (candidate, parent) content: the seeded draw is per case."""
    question: str
    answer: str | None
    answer_type: str
    parent_answer: str | None
    parent_answer_type: str | None
    choices: tuple[str, ...] | None = None


def _wrong(answer: str | None, answer_type: str, choices: tuple[str, ...] | None) -> str:
    if answer_type == "choice":
        letter = reference_letter(answer or "", choices) or "A"
        n = len(choices) if choices else 4
        return chr(ord("A") + (ord(letter) - ord("A") + 1) % max(n, 2))
    value = parse_number(answer or "")
    if value is not None:
        wrong = value + max(Fraction(1), abs(value))
        return str(wrong.numerator) if wrong.denominator == 1 else f"{float(wrong):.6g}"
    return f"{answer or ''} (simulated wrong answer)".strip()


def _form_ok(answer: str | None, answer_type: str, choices: tuple[str, ...] | None) -> bool:
    if answer_type == "numeric":
        return answer is not None and parse_number(answer) is not None
    if answer_type == "choice":
        return answer is not None and reference_letter(answer, choices) is not None
    if answer_type == "code":
        return True
    return answer is not None and bool(answer.strip())


class SimulatedJudgeBackend:
    """Seeded judge behind the :class:`~curation.llm.Backend` interface."""

    name = "simulated"

    def __init__(self, *, seed: int, false_reject_rate: float) -> None:
        self.seed = seed
        self.false_reject_rate = false_reject_rate
        self._cases: dict[str, SimCase] = {}
        blob = json.dumps({"judge": 1, "seed": seed, "rate": false_reject_rate}, sort_keys=True)
        self._namespace = "simulated-judge:" + hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def namespace(self) -> str:
        """Includes the seed and the error rate: change either, and nothing is reused."""
        return self._namespace

    def max_in_flight(self) -> int:
        return 8

    async def aclose(self) -> None:
        return None

    def register(self, case: SimCase) -> str:
        """Make a case known; returns the hint the requests about it carry in ``item``."""
        self._cases[case.key] = case
        return case.key

    def errs(self, case: SimCase) -> bool:
        """The seeded draw: does the judge get this case wrong?"""
        return hashed_uniform("judge-false-reject", self.seed, case.key) < self.false_reject_rate

    def own_answer(self, case: SimCase) -> str | None:
        if case.answer_type == "code" or case.parent_answer is None:
            return None
        if self.errs(case):
            return _wrong(case.parent_answer, case.answer_type, case.choices)
        return case.parent_answer

    def _solve(self, case: SimCase) -> dict[str, object]:
        return {
            "solution": f"{SIMULATED_PREFIX} no solving: the simulated judge answers with the "
            "parent's reference answer, as simulated rewrites keep it",
            "answer": self.own_answer(case),
        }

    def _verdict(self, case: SimCase) -> dict[str, object]:
        own = self.own_answer(case)
        # the statement mirrors what the grader will find; the judge class decides with it
        correct = answers_agree(own, case.answer, case.answer_type, choices=case.choices)
        if case.answer_type == "code":
            # not gradable without a sandbox: the statement decides; a simulated rewrite
            # keeps the parent's tests, so it is correct unless the seeded draw errs
            correct = not self.errs(case)
        well_posed = bool(case.question.replace(SIMULATED_PREFIX, "").strip())
        if case.parent_answer_type is None:
            format_kept: bool | None = None
        else:
            format_kept = case.answer_type == case.parent_answer_type and _form_ok(
                case.answer, case.answer_type, case.choices
            )
        notes = []
        if self.errs(case) and own is not None:
            notes.append(f"seeded false reject (rate {self.false_reject_rate:g})")
        if correct is False:
            notes.append("own answer differs from the reference")
        if not well_posed:
            notes.append("empty question")
        if format_kept is False:
            notes.append("answer type or answer form differs from the parent's")
        detail = "; ".join(notes) if notes else "all checks passed"
        return {
            "answer_correct": correct,
            "well_posed": well_posed,
            "format_kept": format_kept,
            "reason": f"{SIMULATED_PREFIX} {detail}.",
        }

    async def complete(self, request: ChatRequest) -> Completion:
        hint = request.item or ""
        role, _, key = hint.partition(":")
        case = self._cases.get(key)
        if case is None or role not in (_ROLE_SOLVE, _ROLE_VERDICT):
            raise KeyError(f"simulated judge has no case for request hint {hint!r}")
        payload = self._solve(case) if role == _ROLE_SOLVE else self._verdict(case)
        text = json.dumps(payload, ensure_ascii=False)
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=sum(len(m.content.split()) for m in request.messages),
            completion_tokens=len(text.split()),
            latency_s=0.0,
            ttft_s=0.0 if request.stream else None,
            retries=0,
            served_model="simulated/judge",
            backend="simulated",
        )


def hint(role: str, case_key: str) -> str:
    """The ``item`` hint of a request (``solve:<key>`` or ``verdict:<key>``)."""
    return f"{role}:{case_key}"
