"""Markdown: tables, headings, lists, images, and a page of :mod:`~curation.report.blocks`.

The line helpers return lists of lines (or one line) so a report can be assembled as a
list of strings and joined once. Two table styles exist in the published outputs and
both are kept: the MIRT report spaces its rule (``| --- | ---: |``), the other reports
write it compact (``|---|---:|``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from curation.report.blocks import Block, Bullets, Heading, Images, Paragraph, Table


def cell(text: object) -> str:
    """``text`` made safe for one table cell: pipes escaped, newlines flattened."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def row(cells: Sequence[str], *, pad_empty: bool = True) -> str:
    """One table line, ``| a | b |``. ``pad_empty=False`` writes an empty cell as a single
    space (``| |``) instead of two, as the dataset card's coverage table does."""
    if pad_empty:
        return "| " + " | ".join(cells) + " |"
    return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"


def table(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    align: str | None = None,
    compact: bool = False,
    escape: bool = False,
    pad_empty: bool = True,
) -> list[str]:
    """The lines of a table.

    ``align`` has one letter per column, ``l`` or ``r``; by default the first column is
    left-aligned and the others right-aligned (a label followed by figures).
    ``compact`` writes the rule without spaces. ``escape`` passes every cell through
    :func:`cell`; leave it off when cells hold Markdown (code spans, bold) built with
    :func:`cell` where needed.
    """
    align = align if align is not None else "l" + "r" * (len(header) - 1)
    if len(align) != len(header):
        raise ValueError(f"align {align!r} has {len(align)} letters for {len(header)} columns")
    rule = ["---:" if a == "r" else "---" for a in align]

    def line(cells: Sequence[str]) -> str:
        return row([cell(c) for c in cells] if escape else cells, pad_empty=pad_empty)

    out = [line(header), "|" + "|".join(rule) + "|" if compact else row(rule)]
    out += [line(r) for r in rows]
    return out


def heading(level: int, text: str) -> str:
    """``## text`` for ``level`` 2."""
    return "#" * level + " " + text


def bullets(items: Iterable[str], *, marker: str = "-") -> list[str]:
    """One list line per item, ``- item`` (or ``* item`` with ``marker="*"``)."""
    return [f"{marker} {item}" for item in items]


def image(src: str, alt: str) -> str:
    """``![alt](src)``."""
    return f"![{alt}]({src})"


def document(blocks: Sequence[Block]) -> str:
    """Blocks as one Markdown page: blank line between blocks, tables compact and
    left-aligned with every cell escaped, a final newline."""
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out.append(heading(b.level, b.text))
        elif isinstance(b, Paragraph):
            out.append(b.text)
        elif isinstance(b, Bullets):
            out.append("\n".join(bullets(b.items)))
        elif isinstance(b, Table):
            lines = table(b.header, b.rows, align="l" * len(b.header), compact=True, escape=True)
            out.append("\n".join(lines))
        elif isinstance(b, Images):
            out.append("\n".join(image(src, alt) for src, alt in b.images))
    return "\n\n".join(out) + "\n"
