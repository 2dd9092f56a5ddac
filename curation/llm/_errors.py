"""The error an LLM call raises when it fails for good.

Its own module so that code which only catches it (the judge, fill) does not import
the ``openai`` SDK (~1 s per stage process) merely to name the exception.
"""

from __future__ import annotations

from typing import Any

from curation.errors import CurationError


class LLMCallError(CurationError):
    """A call failed for good: after the last retry, or with a non-retryable status."""

    def __init__(self, message: str, *, model: str, endpoint: str, attempts: int) -> None:
        self.model = model
        self.endpoint = endpoint
        self.attempts = attempts
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        # keyword-only fields: pickled explicitly so a worker process can raise it here
        return (_call_error, (str(self), self.model, self.endpoint, self.attempts))


def _call_error(message: str, model: str, endpoint: str, attempts: int) -> LLMCallError:
    return LLMCallError(message, model=model, endpoint=endpoint, attempts=attempts)
