"""Reading the rewriter's structured output, robustly.

Models wrap JSON in code fences, add a sentence before or after it, or (reasoning
models) think aloud first. The first JSON object that has a ``question`` key is
taken, wherever it sits in the text; anything short of a usable object is a
:class:`ParseFailure` with a reason, and the candidate becomes ``invalid``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from curation.params import ANSWER_TYPES

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)


@dataclass(frozen=True)
class Rewrite:
    """A parsed rewrite: the child's text, reference answer, answer type and change."""

    question: str
    answer: str
    answer_type: str
    change: str | None
    choices: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ParseFailure:
    """Why an output is not a usable rewrite."""

    reason: str
    question: str = ""
    """The question text, if one was found (kept on the invalid candidate)."""


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
        return ParseFailure("empty output")
    body = _THINK.sub("", text)
    objects = [o for o in _objects(body) if isinstance(o, dict)]
    if not objects:
        why = "no JSON object in the output"
        if finish_reason == "length":
            why += " (cut off at max_tokens)"
        return ParseFailure(why)
    obj = next((o for o in objects if "question" in o), objects[0])
    question = _text(obj.get("question"))
    if not question:
        return ParseFailure("JSON object has no non-empty 'question'")
    if "answer" not in obj or obj["answer"] is None:
        return ParseFailure("JSON object has no 'answer'", question)
    answer = _text(obj["answer"])
    if answer is None or answer == "":
        return ParseFailure(
            f"'answer' is not a non-empty text or number: {obj['answer']!r}", question
        )
    kind = obj.get("answer_type") or answer_type
    if not isinstance(kind, str) or kind.strip().lower() not in ANSWER_TYPES:
        return ParseFailure(
            f"'answer_type' {kind!r} is not one of {', '.join(ANSWER_TYPES)}", question
        )
    kind = kind.strip().lower()
    change = obj.get("change")
    change = _text(change) if change is not None else None
    choices = obj.get("choices")
    if choices is not None:
        if not isinstance(choices, list) or not all(isinstance(c, str) for c in choices):
            return ParseFailure("'choices' is not a list of texts", question)
        choices = tuple(c.strip() for c in choices)
    return Rewrite(question, answer, kind, change or None, choices)
