"""Graders: one verdict per sampled answer, always with the extracted answer kept.

Pure functions (no I/O, no randomness): the same output and reference always give
the same :class:`Grade`, which is what lets a cached completion be re-graded after
a grader fix without calling a model again.
"""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from curation.grading._extract import (
    LETTERS,
    explicit_answer,
    extract_choice,
    extract_code,
    extract_exact,
    extract_numeric,
    last_boxed,
)
from curation.grading._numeric import clean_math, numbers_equal, parse_number
from curation.grading._settings import GradingSettings, Method
from curation.grading._symbolic import symbolically_equal

_DEFAULT_METHOD: dict[str, Method] = {
    "numeric": "numeric",
    "exact": "exact",
    "choice": "choice",
    "code": "code",
    "free": "skip",
}
_LITERAL_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Grade:
    """The verdict on one sampled answer."""

    correct: bool | None
    """True/False when graded; None when the sample was skipped."""
    extracted: str | None
    """The answer found in the output (what was compared), or None if none was found."""
    method: str
    """Grader used: numeric, exact, choice, regex, code or skip."""
    skipped: str | None = None
    """Why the sample was not graded (code without sandbox, free-form without judge,
    cut off at max_tokens before any final-answer marker)."""


class CodeSandbox(Protocol):
    """Runs untrusted code in isolation; the only way code answers are graded."""

    def check(self, program: str, *, reference: str | None, item: str | None) -> bool:
        """True if ``program`` passes the item's tests."""
        ...


TRUNCATED = "cut off at max_tokens before a final answer"
"""``Grade.skipped`` of a truncated generation with no explicit final answer."""


def _explicit_letter(output: str, choices: Sequence[str] | None) -> bool:
    """A choice answer stated as such ("answer is B"), not just a letter somewhere."""
    n = len(choices) if choices else 10
    return bool(re.search(rf"(?i:answer)\s*(?i:is|:)\s*[\(\[]?[{LETTERS[:n]}]\b", output))


def method_for(answer_type: str, settings: GradingSettings | None = None) -> Method:
    """The grader an item uses: the settings' override, else by answer type."""
    if settings is not None and settings.method is not None:
        return settings.method
    return _DEFAULT_METHOD.get(answer_type, "exact")


def normalize_text(text: str) -> str:
    """Case-, width- and spacing-insensitive form for exact match.

    Removes markdown emphasis, enclosing backticks or ``$``, and a final period,
    because models add them freely; keeps inner punctuation, which can matter.
    """
    s = unicodedata.normalize("NFKC", text).strip()
    for _ in range(3):
        before = s
        for pair in (("**", "**"), ("`", "`"), ("$", "$"), ("\\(", "\\)")):
            if len(s) >= 2 * len(pair[0]) and s.startswith(pair[0]) and s.endswith(pair[1]):
                s = s[len(pair[0]) : len(s) - len(pair[1])].strip()
        s = s.rstrip(".").strip()
        if s == before:
            break
    return " ".join(s.casefold().split())


def _math_form(text: str) -> str:
    s = clean_math(text)
    s = re.sub(r"\\[dt]frac", r"\\frac", s)
    s = re.sub(r"_\{(\w)\}", r"_\1", s)
    s = s.replace(" ", "").rstrip(".")
    return s.casefold()


def _literal(text: str) -> tuple[bool, object]:
    if len(text) > _LITERAL_LIMIT:
        return False, None
    try:
        return True, ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False, None


def texts_match(extracted: str, reference: str) -> bool:
    """Exact match up to normalisation, or equal Python literals (``[1,2]`` == ``[1, 2]``)."""
    if extracted.strip() == reference.strip():
        return True
    ok_a, a = _literal(extracted)
    ok_b, b = _literal(reference)
    if ok_a and ok_b:
        return type(a) is type(b) and a == b
    return normalize_text(extracted) == normalize_text(reference)


def values_match(
    extracted: str, reference: str, *, rel_tol: float = 1e-4, abs_tol: float = 1e-9
) -> bool:
    """Numbers compare by value (with tolerance); anything else by normalised math text,
    then symbolically (math-verify: ``\\sqrt{117}`` equals ``3\\sqrt{13}``)."""
    a, b = parse_number(extracted), parse_number(reference)
    if a is not None and b is not None:
        return numbers_equal(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
    if b is not None and a is None:
        boxed = last_boxed(extracted)
        if boxed is not None:
            return values_match(boxed, reference, rel_tol=rel_tol, abs_tol=abs_tol)
    if _math_form(extracted) == _math_form(reference) or texts_match(extracted, reference):
        return True
    return symbolically_equal(extracted, reference)


def reference_letter(reference: str, choices: Sequence[str] | None) -> str | None:
    """A choice item's reference as a letter: a letter, a 0-based index, or the option text."""
    ref = reference.strip().strip("()[]. ")
    n = len(choices) if choices else 10
    if len(ref) == 1 and ref.upper() in LETTERS[:n]:
        return ref.upper()
    if ref.isdigit() and choices and int(ref) < len(choices):
        return LETTERS[int(ref)]
    if choices:
        norm = normalize_text(reference)
        for i, option in enumerate(choices):
            if normalize_text(option) == norm:
                return LETTERS[i]
    return None


def _grade_choice(output: str, reference: str, choices: Sequence[str] | None) -> Grade:
    want = reference_letter(reference, choices)
    got = extract_choice(output, len(choices) if choices else None)
    if got is None and choices:
        norm = normalize_text(extract_exact(output) or "")
        for i, option in enumerate(choices):
            if normalize_text(option) == norm:
                got = LETTERS[i]
    return Grade(correct=got is not None and got == want, extracted=got, method="choice")


def grade(
    output: str,
    reference: str | None,
    answer_type: str,
    *,
    choices: Sequence[str] | None = None,
    settings: GradingSettings | None = None,
    sandbox: CodeSandbox | None = None,
    item: str | None = None,
    truncated: bool = False,
) -> Grade:
    """Grade one sampled ``output`` against the item's ``reference`` answer.

    The method follows the answer type (numeric, exact, choice, code; free-form is
    skipped because it needs a judge) unless ``settings.method`` overrides it. Code
    is graded only through a ``sandbox``; without one it is skipped, never run.

    ``truncated`` (the generation hit ``max_tokens``): only an explicit final answer
    (``\\boxed{}``, answer tags or an "answer is" marker) is graded; the weak fallbacks
    (the last number in the text, the whole text) would grade mid-reasoning text and
    read a small token budget as low ability, so such a sample is skipped instead.
    """
    settings = settings or GradingSettings()
    method = method_for(answer_type, settings)
    if truncated and method in ("numeric", "exact", "regex", "choice"):
        if explicit_answer(output) is None and not (
            method == "choice" and _explicit_letter(output, choices)
        ):
            return Grade(None, None, method, skipped=TRUNCATED)
    if method == "skip":
        return Grade(None, None, "skip", skipped="free-form answers need a judge")
    if method == "code":
        program = extract_code(output)
        if sandbox is None:
            return Grade(
                None, program, "code", skipped="code is graded only in a sandbox; none configured"
            )
        ok = program is not None and sandbox.check(program, reference=reference, item=item)
        return Grade(bool(ok), program, "code")
    if reference is None:
        return Grade(None, None, method, skipped="item has no reference answer")
    if method == "choice":
        return _grade_choice(output, reference, choices)
    if method == "regex":
        if not settings.pattern:
            raise ValueError("regex grading needs a pattern (grading.pattern)")
        hits = list(re.finditer(settings.pattern, output, re.M))
        if not hits:
            return Grade(False, None, "regex")
        last = hits[-1]
        extracted = (last.group(1) if last.re.groups else last.group(0)).strip()
        ok = values_match(extracted, reference, rel_tol=settings.rel_tol, abs_tol=settings.abs_tol)
        return Grade(ok, extracted, "regex")
    if method == "numeric":
        extracted = extract_numeric(output) or None  # an empty \\boxed{} is no answer
        if extracted is None:
            return Grade(False, None, "numeric")
        ok = values_match(extracted, reference, rel_tol=settings.rel_tol, abs_tol=settings.abs_tol)
        return Grade(ok, extracted, "numeric")
    extracted = extract_exact(output) or None
    if extracted is None:
        return Grade(False, None, "exact")
    return Grade(texts_match(extracted, reference), extracted, "exact")
