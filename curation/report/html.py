"""One self-contained HTML page from :mod:`~curation.report.blocks`.

Inline CSS and relative ``<img>`` links only: the page opens offline, with no CDN. The
one script is inline, beside a searchable table (:attr:`Table.searchable`): it hides the
rows that do not contain what is typed in the box. Text is escaped; ``**bold**``
becomes ``<strong>``.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from curation.report.blocks import Block, Bullets, Heading, Images, Paragraph, Table

SEARCH_SCRIPT = (
    "<script>document.querySelectorAll('input.table-search').forEach(function (box) {"
    "var rows = box.nextElementSibling.tBodies[0].rows;"
    "box.addEventListener('input', function () {"
    "var q = box.value.toLowerCase();"
    "for (var i = 0; i < rows.length; i++) {"
    "rows[i].style.display = rows[i].textContent.toLowerCase().indexOf(q) < 0 ? 'none' : '';"
    "}});});</script>"
)
"""Filters a searchable table's rows by the text typed above it (case-insensitive)."""

CSS = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto;
       padding: 0 1rem; color: #30343f; line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1rem; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f4f5f7; }
td strong { color: #d1495b; }
img { max-width: 100%; margin: 0.5rem 0; display: block; }
"""
"""The page style; bold table cells (flagged values) are drawn in red."""

_BOLD = re.compile(r"\*\*(.+?)\*\*")


def inline(text: str) -> str:
    """``text`` escaped for HTML, with ``**bold**`` as ``<strong>``."""
    return _BOLD.sub(r"<strong>\1</strong>", html.escape(text))


def _block(b: Block) -> list[str]:
    if isinstance(b, Heading):
        return [f"<h{b.level}>{inline(b.text)}</h{b.level}>"]
    if isinstance(b, Paragraph):
        return [f"<p>{inline(b.text)}</p>"]
    if isinstance(b, Bullets):
        return ["<ul>" + "".join(f"<li>{inline(i)}</li>" for i in b.items) + "</ul>"]
    if isinstance(b, Table):
        head = "".join(f"<th>{inline(h)}</th>" for h in b.header)
        rows = "".join(
            "<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>" for row in b.rows
        )
        grid = f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        if b.searchable:
            box = (
                '<input class="table-search" type="search" placeholder="search '
                f'{len(b.rows)} rows" aria-label="search the table">'
            )
            return [box + grid]
        return [grid]
    if isinstance(b, Images):
        return [
            f'<img src="{html.escape(src, quote=True)}" alt="{html.escape(alt, quote=True)}">'
            for src, alt in b.images
        ]
    raise TypeError(f"not a report block: {b!r}")


def page(blocks: Sequence[Block], title: str, *, css: str = CSS) -> str:
    """Blocks as one HTML document titled ``title``."""
    body = [line for b in blocks for line in _block(b)]
    if any(isinstance(b, Table) and b.searchable for b in blocks):
        body.append(SEARCH_SCRIPT)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{css}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )
