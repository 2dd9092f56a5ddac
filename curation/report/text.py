"""Plain-text tables for the terminal (``curate summary``)."""

from __future__ import annotations

from collections.abc import Sequence


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell: the first left-aligned (labels), the others
    right-aligned (figures), a rule of dashes under the header, no trailing spaces."""
    lines = [header, *rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
    out = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in lines
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in out)
