"""A chat request that also asks for structured output (``response_format``).

The LLM layer's :class:`~curation.llm.ChatRequest` has no ``response_format``; this
subclass adds it to the request body and to the cache key (an answer given under
one format is never served for another). Calls still go through the LLM layer's
backends, cache and accounting unchanged.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from curation.llm import ChatRequest


@dataclass(frozen=True, slots=True)
class StructuredRequest(ChatRequest):
    """A :class:`~curation.llm.ChatRequest` with an optional ``response_format``."""

    response_format: str | None = None
    """The ``response_format`` body field as canonical JSON text (hashable), or None."""
    hint_in_key: bool = False
    """The backend answers from the ``item`` hint, not from the prompt alone (the
    simulated judge answers from the case it registered: the solve prompt holds the
    candidate but not its parent), so the hint joins the key; otherwise a case whose
    prompt matches another's (the same question under an edited parent) would be served
    that one's answer, and a warm cache would give other verdicts than a cold one."""

    def key(self, namespace: str) -> str:
        base = ChatRequest.key(self, namespace)
        extra = ""
        if self.response_format is not None:
            extra += f"\x1fresponse_format\x1f{self.response_format}"
        if self.hint_in_key:
            extra += f"\x1fhint\x1f{self.item}"
        if not extra:
            return base
        return hashlib.sha256(f"{base}{extra}".encode()).hexdigest()

    def body(self) -> dict[str, Any]:
        body = ChatRequest.body(self)
        if self.response_format is not None:
            body["response_format"] = json.loads(self.response_format)
        return body


def format_json(response_format: dict[str, Any] | None) -> str | None:
    """Canonical text of a ``response_format`` value (for :class:`StructuredRequest`)."""
    if response_format is None:
        return None
    return json.dumps(response_format, sort_keys=True, separators=(",", ":"))
