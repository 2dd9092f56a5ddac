"""The terminal summary printed at the end of a run: one table per stage's metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curation.params import benchmark_names
from curation.stages._paths import check_metrics_path


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def check_table(names: list[str]) -> str:
    header = (
        "benchmark",
        "models",
        "items",
        "missing",
        "item-info",
        "model-info",
        "model-rev",
        "item-rev",
        "warnings",
    )
    rows = [header]
    for name in names:
        m = _load(check_metrics_path(name))
        if m is None:
            rows.append((name, *["-"] * (len(header) - 1)))
            continue
        rows.append(
            (
                name,
                str(m["n_models"]),
                str(m["n_items"]),
                f"{m['missing_share']:.1%}",
                f"{m['item_informativeness']:.1%}",
                f"{m['model_informativeness']:.1%}",
                f"{m['model_reversal_rate']:.3f}",
                f"{m['item_reversal_rate']:.3f}",
                str(m["n_warnings"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def print_summary(params: dict[str, Any]) -> int:
    names = benchmark_names(params)
    print("Response-matrix checks (metrics/check/, reports/check/):")
    print(check_table(names))
    return 0
