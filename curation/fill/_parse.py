r"""Reading the rewriter's structured output, robustly.

Models wrap JSON in code fences, add a sentence before or after it, or (reasoning
models) think aloud first. The first JSON object that has a ``question`` key is
taken, wherever it sits in the text; anything short of a usable object is a
:class:`ParseFailure` with a reason (and a stable :attr:`ParseFailure.kind`), and the
candidate becomes ``invalid``.

What real small models (SmolLM2-135M, Gemma-3-270M, Qwen2.5-Coder-0.5B on llama.cpp;
replayed in ``tests/llm/test_real_outputs.py``) add: LaTeX with single backslashes,
which is invalid JSON (``\(``, ``\sqrt``) or silently wrong JSON (``\frac`` decodes as
a form feed and ``rac``), and a ``change`` line that runs on until ``max_tokens``. So:
LaTeX read as escapes is put back (:func:`curation.grading.restore_latex`); when no
decodable object has a question, the maintained ``json_repair`` library is tried on the
text from the first ``{`` (never on free prose); and an object cut off at the token limit
is used only if the cut falls in ``change`` (kept, marked), never in the question or
answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import json_repair

from curation.grading import restore_latex
from curation.items import ANSWER_TYPES

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_CLOSED = re.compile(r'["\d\]}el]\s*\}')
"""A value's end then ``}``: the reply closes an object (brace counts are fooled by LaTeX)."""
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


@dataclass(frozen=True)
class Rewrite:
    """A parsed rewrite: the child's text, reference answer, answer type and change."""

    question: str
    answer: str
    answer_type: str
    change: str | None
    choices: tuple[str, ...] | None = None
    repaired: bool = False
    """Read only by ``json_repair`` (broken JSON: LaTeX escapes, missing commas, cut off)."""


CUT_MARK = " [cut off at max_tokens]"
_REQUIRED = ("question", "answer", "answer_type", "choices")


FAILURE_KINDS: tuple[str, ...] = (
    "empty",
    "truncated",
    "no_json",
    "no_question",
    "no_answer",
    "bad_answer",
    "bad_answer_type",
    "bad_choices",
)
"""Stable names of the ways an output fails to parse (for counting; the reason says more)."""


@dataclass(frozen=True)
class ParseFailure:
    """Why an output is not a usable rewrite."""

    reason: str
    question: str = ""
    """The question text, if one was found (kept on the invalid candidate)."""
    kind: str = "no_json"
    """One of :data:`FAILURE_KINDS`: the reason's category, stable for tallies."""


def _objects(text: str) -> list[Any]:
    """JSON values found in ``text``: the whole text, fenced blocks, then every ``{...}``."""
    found: list[Any] = []
    stripped = text.strip()
    try:
        found.append(json.loads(stripped))
    except ValueError:
        pass
    for block in _FENCE.findall(text):
        try:
            found.append(json.loads(block.strip()))
        except ValueError:
            pass
    decoder = json.JSONDecoder()
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        found.append(value)
        i = text.find("{", end)
    return found


def _repaired(body: str) -> list[dict[str, Any]]:
    """Objects ``json_repair`` reads from the text from the first ``{`` on (empty if none)."""
    start = body.find("{")
    if start < 0:
        return []
    try:
        value = json_repair.repair_json(body[start:], return_objects=True)
    except Exception:  # noqa: BLE001 - a repair library failing is just "nothing found"
        return []
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, dict) and v]


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    return None


def parse_rewrite(
    text: str, *, answer_type: str, finish_reason: str | None = None
) -> Rewrite | ParseFailure:
    """The rewrite in ``text``, or why there is none.

    ``answer_type`` is the parent's, used when the output names none. Numbers given as
    JSON numbers are accepted as answers (``"answer": 42``).
    """
    if not text or not text.strip():
        return ParseFailure("empty output", kind="empty")
    body = _THINK.sub("", text)
    objects = [restore_latex(o) for o in _objects(body) if isinstance(o, dict)]
    repaired = False
    # json_repair: for broken syntax in a complete reply, or a reply cut at max_tokens (an
    # unclosed reply that stopped for another reason is not guessed at)
    span = body[body.find("{") :] if "{" in body else ""
    closed = _CLOSED.search(span) is not None
    if not any("question" in o for o in objects) and (closed or finish_reason == "length"):
        fixed = [restore_latex(o) for o in _repaired(body)]
        if fixed and (not objects or any("question" in o for o in fixed)):
            objects, repaired = fixed, True
    if not objects:
        if finish_reason == "length":
            return ParseFailure(
                "no JSON object in the output (cut off at max_tokens)", kind="truncated"
            )
        return ParseFailure("no JSON object in the output", kind="no_json")
    obj = dict(next((o for o in objects if "question" in o), objects[0]))
    cut_in_change = False
    if repaired and not closed:
        # the object was closed by the repair: its last value may be cut short
        last = list(obj)[-1]
        if last in _REQUIRED:
            return ParseFailure(
                f"cut off at max_tokens inside '{last}'",
                _text(obj.get("question")) or "" if last != "question" else "",
                kind="truncated",
            )
        cut_in_change = last == "change"
    question = _text(obj.get("question"))
    if not question:
        return ParseFailure("JSON object has no non-empty 'question'", kind="no_question")
    if "answer" not in obj or obj["answer"] is None:
        return ParseFailure("JSON object has no 'answer'", question, kind="no_answer")
    answer = _text(obj["answer"])
    if answer is None or answer == "":
        return ParseFailure(
            f"'answer' is not a non-empty text or number: {obj['answer']!r}",
            question,
            kind="bad_answer",
        )
    kind = obj.get("answer_type") or answer_type
    if not isinstance(kind, str) or kind.strip().lower() not in ANSWER_TYPES:
        return ParseFailure(
            f"'answer_type' {kind!r} is not one of {', '.join(ANSWER_TYPES)}",
            question,
            kind="bad_answer_type",
        )
    kind = kind.strip().lower()
    change = obj.get("change")
    change = _text(change) if change is not None else None
    if cut_in_change and change:
        change += CUT_MARK
    choices = obj.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            return ParseFailure("'choices' is not a list of texts", question, kind="bad_choices")
        choices = tuple(c.strip() for c in choices)
    return Rewrite(question, answer, kind, change or None, choices, repaired)
