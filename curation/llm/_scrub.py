"""Keeping API keys out of everything benchcurate writes or prints.

Keys are read from environment variables at the last moment and handed only to the
HTTP client. Any text that crosses back (error messages, server bodies that echo
headers, even completion text) passes through :meth:`Secrets.scrub` first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

REDACTED = "***"
_MIN_SECRET_LEN = 4
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}")


class Secrets:
    """A set of secret values to blank out of any text."""

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self._values: set[str] = set()
        for v in values:
            self.add(v)

    def add(self, value: str | None) -> None:
        # very short "keys" (e.g. "x" for a local server) would shred ordinary text
        if value and len(value) >= _MIN_SECRET_LEN:
            self._values.add(value)

    def scrub(self, text: str) -> str:
        """``text`` with every known secret, and any bearer token, replaced by ``***``."""
        for value in sorted(self._values, key=len, reverse=True):
            if value in text:
                text = text.replace(value, REDACTED)
        return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


def redact_url(url: str) -> str:
    """``url`` without user info or query string (either may carry credentials)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
