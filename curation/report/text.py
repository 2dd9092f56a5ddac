"""Plain-text tables for the terminal (``curate summary``)."""

from __future__ import annotations

from collections.abc import Sequence


def table(header: Sequence[str], rows: Sequence[Sequence[str]], *, align: str | None = None) -> str:
    """Columns padded to their widest cell, a rule of dashes under the header, no trailing
    spaces. ``align`` has one letter per column, ``l`` or ``r``; by default the first
    column is left-aligned (labels) and the others right-aligned (figures)."""
    align = align if align is not None else "l" + "r" * (len(header) - 1)
    if len(align) != len(header):
        raise ValueError(f"align {align!r} has {len(align)} letters for {len(header)} columns")
    lines = [header, *rows]
    widths = [max(len(r[i]) for r in lines) for i in range(len(header))]
    out = [
        "  ".join(
            c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(r, widths, align, strict=True)
        )
        for r in lines
    ]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in out)
