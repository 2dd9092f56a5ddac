"""Reading the judge's structured replies: find the JSON object, check it against its schema.

Real models wrap their JSON: a sentence before it, a code fence, a ``<think>`` block
(reasoning models), Python literals (``True``/``None``), a trailing comma. The reader
tries, in order: the reply as is; the reply with think blocks removed; every fenced
block; every balanced ``{...}`` span (decoded with ``json.JSONDecoder.raw_decode``);
and last the maintained ``json_repair`` library on the outermost-brace span only (never
on free prose, where it invents objects). Whatever it finds must still validate against
the schema: lenient about wrapping, strict about content.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import json_repair

from curation.grading import restore_latex
from curation.schemas import load_schema, validate_record

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.S)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S | re.I)
_DECODER = json.JSONDecoder()
_CLOSES = re.compile(r'["\d\]}el]\s*\}')
"""A value's end then ``}``: the reply closes an object somewhere."""
_FREE_TEXT = ("reason", "solution")
"""Keys whose value may be cut short without losing a decision."""


@dataclass(frozen=True)
class Parsed:
    """A reply checked against a schema: the object, or what is wrong with it."""

    value: dict[str, Any] | None
    problem: str | None
    tolerant: bool = False
    """The object was found only by the tolerant steps (prose, fence, think tags, repair)."""


def strip_think(text: str) -> str:
    """The reply without ``<think>...</think>`` blocks (an unclosed one runs to the end)."""
    return _THINK.sub("", text).strip()


def _objects(text: str) -> Iterator[Any]:
    """Every JSON value that starts at a ``{`` in ``text``, in order."""
    for m in re.finditer(r"\{", text):
        try:
            value, _ = _DECODER.raw_decode(text, m.start())
        except ValueError:
            continue
        yield value


def _strict(text: str) -> Any:
    try:
        return json.loads(text.strip())
    except ValueError:
        return None


def _tolerant(text: str) -> Iterator[Any]:
    """Candidate objects from a wrapped reply, most explicit first."""
    bare = strip_think(text)
    if bare != text.strip():
        value = _strict(bare)
        if value is not None:
            yield value
    for block in _FENCE.findall(bare):
        value = _strict(block)
        if value is not None:
            yield value
        yield from _objects(block)
    yield from _objects(bare)
    start, end = bare.find("{"), bare.rfind("}")
    if 0 <= start < end:
        try:
            repaired = json_repair.repair_json(bare[start : end + 1], return_objects=True)
        except Exception:  # noqa: BLE001 - a repair library failing is just "not found"
            repaired = None
        if isinstance(repaired, dict) and repaired:
            yield repaired
    if start >= 0 and not _CLOSES.search(bare[start:]):
        # never closed (cut at max_tokens, or the model just stopped): usable only if what
        # is cut is the free text at the end (the verdict's reason), not a decision
        try:
            cut = json_repair.repair_json(bare[start:], return_objects=True)
        except Exception:  # noqa: BLE001 - a repair library failing is just "not found"
            cut = None
        if isinstance(cut, dict) and cut and list(cut)[-1] in _FREE_TEXT:
            yield cut


def _problem_of(found: tuple[str, str] | None) -> str | None:
    if found is None:
        return None
    field, message = found
    where = f"key '{field}'" if field else "the object"
    return f"{where}: {message}"


def parse_reply(text: str, schema: str, *, finish_reason: str | None = None) -> Parsed:
    """The JSON object in ``text`` if it is valid against ``schemas/<schema>.schema.json``.

    Returns the first schema-valid object found (see the module doc for the order), or
    the most useful problem for the repair message: the schema error of the first object
    found, else why no object was found (empty, not JSON, cut off at the token limit).
    """
    first_problem: str | None = None
    strict = _strict(text)
    attempts: list[tuple[Any, bool]] = [(strict, False)] if strict is not None else []
    for value, tolerant in [*attempts, *((v, True) for v in _tolerant(text))]:
        if not isinstance(value, dict):
            first_problem = first_problem or (
                f"it is JSON but a {type(value).__name__}, not an object"
            )
            continue
        value = restore_latex(value)
        problem = _problem_of(validate_record(value, schema))
        if problem is None:
            return Parsed(value, None, tolerant=tolerant)
        first_problem = first_problem or problem
    if first_problem is None:
        if not text.strip():
            first_problem = "it is empty"
        elif not strip_think(text):
            first_problem = "it holds only a <think> block, no JSON object"
        else:
            first_problem = "it is not valid JSON (no JSON object found in it)"
    if finish_reason == "length":
        first_problem += "; it was cut off at the token limit, so keep it much shorter"
    return Parsed(None, first_problem)


def schema_keys(schema: str) -> list[str]:
    """The keys a reply must have, in schema order (for the repair message)."""
    return list(load_schema(schema)["properties"])


_STRICT_UNSUPPORTED = {"$schema", "$id", "title", "minLength", "maxLength", "default"}


def response_schema(schema: str) -> dict[str, Any]:
    """``schemas/<schema>.schema.json`` as an endpoint's ``json_schema`` response format.

    Keywords strict structured-output modes reject are dropped; replies are validated
    against the full schema anyway.
    """

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k not in _STRICT_UNSUPPORTED}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return {
        "type": "json_schema",
        "json_schema": {"name": schema, "strict": True, "schema": strip(load_schema(schema))},
    }
