"""Reading the judge's structured replies: find the JSON object, check it against its schema."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from curation.schemas import load_schema, validate_record

_FENCE = re.compile(r"^\s*```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```\s*$", re.S)


@dataclass(frozen=True)
class Parsed:
    """A reply checked against a schema: the object, or what is wrong with it."""

    value: dict[str, Any] | None
    problem: str | None


def _candidates(text: str) -> list[str]:
    """Texts that may hold the object: the reply, its fenced block, its outermost braces."""
    out = [text.strip()]
    fenced = _FENCE.match(text)
    if fenced:
        out.append(fenced.group(1).strip())
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        out.append(text[start : end + 1])
    return out


def parse_reply(text: str, schema: str, *, finish_reason: str | None = None) -> Parsed:
    """The JSON object in ``text`` if it is valid against ``schemas/<schema>.schema.json``.

    Lenient about wrapping (a code fence, a sentence around the object), strict about
    content: the object itself must validate, or the problem is returned for the
    repair message.
    """
    decoded: Any = None
    error: str | None = None
    for candidate in _candidates(text):
        try:
            decoded = json.loads(candidate)
        except ValueError as exc:
            error = str(exc)
            continue
        error = None
        break
    if error is not None or decoded is None:
        problem = "it is not a JSON object"
        if not text.strip():
            problem = "it is empty"
        elif error:
            problem = f"it is not valid JSON ({error})"
        if finish_reason == "length":
            problem += "; it was cut off at the token limit, so keep it much shorter"
        return Parsed(None, problem)
    if not isinstance(decoded, dict):
        return Parsed(None, f"it is JSON but a {type(decoded).__name__}, not an object")
    found = validate_record(decoded, schema)
    if found is not None:
        field, message = found
        where = f"key '{field}'" if field else "the object"
        return Parsed(None, f"{where}: {message}")
    return Parsed(decoded, None)


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
