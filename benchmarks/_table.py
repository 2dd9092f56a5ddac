"""The plain-text table every benchmark script prints (one home, so they all align alike)."""

from __future__ import annotations

from typing import Any


def print_table(title: str, header: list[str], rows: list[list[Any]]) -> None:
    """``title``, then ``header`` and ``rows`` in left-aligned columns between rules."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max(len(h), *(len(r[j]) for r in cells)) for j, h in enumerate(header)]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}\n{line}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print(line)
    for r in cells:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(line, flush=True)
