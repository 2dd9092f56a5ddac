"""Errors a user has to act on.

Every problem with an input is reported once, naming the file, the record (line or
row) and the field, so the user can go straight to it. The CLI turns these into a
single line on stderr and exit code 2.
"""

from __future__ import annotations


class CurationError(Exception):
    """Base class for errors benchcurate reports to the user (exit code 2)."""

    exit_code = 2


class InputError(CurationError):
    """A malformed input: which file, which record, which field, and what is wrong."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        record: str | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.record = record
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [p for p in (self.file, self.record) if p]
        if self.field:
            parts.append(f"field '{self.field}'")
        parts.append(self.message)
        return ": ".join(parts)


class ConfigError(CurationError):
    """params.yaml (or another setting) is missing something or contradicts itself."""
