"""Format-neutral pieces of a report page.

A report that is written both as Markdown and as HTML (the gap report) builds one list
of these and hands it to :func:`curation.report.markdown.document` and
:func:`curation.report.html.page`, so the two renderings cannot drift apart. Text may
use ``**bold**``, the one inline markup both renderers understand.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    searchable: bool = False
    """HTML: a search box above the table that hides the rows not matching it (a
    leaderboard's thousands of models); Markdown: a plain table."""


@dataclass(frozen=True)
class Images:
    images: tuple[tuple[str, str], ...]
    """(relative path, alt text)."""


Block = Heading | Paragraph | Bullets | Table | Images
