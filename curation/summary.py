"""The terminal summary printed at the end of a run: one table per stage's metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from curation.params import benchmark_names
from curation.paths import (
    GAPS_METRICS,
    check_metrics_path,
    fill_metrics_path,
    irt_metrics_path,
)


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _table(rows: list[tuple[str, ...]]) -> str:
    """Left-aligned first column, right-aligned figures, a rule under the header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(
            c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(line.rstrip() for line in lines)


def _missing(name: str, header: tuple[str, ...]) -> tuple[str, ...]:
    return (name, *["-"] * (len(header) - 1))


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
            rows.append(_missing(name, header))
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
    return _table(rows)


def irt_table(names: list[str]) -> str:
    header = (
        "benchmark",
        "model",
        "method",
        "BIC 1PL",
        "BIC 2PL",
        "all-solved",
        "none-solved",
        "LOO max|dz|",
        "most influential",
    )
    rows = [header]
    for name in names:
        m = _load(irt_metrics_path(name))
        if m is None:
            rows.append(_missing(name, header))
            continue
        loo = m.get("loo") or {}
        rows.append(
            (
                name,
                m["model"].upper(),
                f"{m['method']}/{m['interval_source']}",
                f"{m['bic_1pl']:.0f}",
                f"{m['bic_2pl']:.0f}",
                str(m["n_all_solved"]),
                str(m["n_none_solved"]),
                f"{loo['max_abs_dz']:.3f}" if loo else "-",
                str(loo.get("most_influential_model", "-")),
            )
        )
    return _table(rows)


def gaps_table(names: list[str]) -> str:
    metrics = _load(GAPS_METRICS) or {}
    first = next(iter(metrics.values()), {})
    targets = sorted(first.get("ddm", {}), key=lambda t: (t != "uniform", t))
    header = (
        "benchmark",
        "n",
        *[f"DDM {t}" for t in targets],
        "Max Gap",
        "interval",
        "Top-3",
        "Top-5",
        "flags",
    )
    rows = [header]
    for name in names:
        m = metrics.get(name)
        if m is None:
            rows.append(_missing(name, header))
            continue
        flags = [k for k in ("ddm", "max_gap", "top_5_sum") if m["flags"][k]]
        rows.append(
            (
                name,
                str(m["n"]),
                *[f"{m['ddm'][t]:.3f}" for t in targets],
                f"{m['max_gap']:.3f}",
                f"[{m['max_gap_left']:.3f}, {m['max_gap_right']:.3f}]",
                f"{m['top_3_sum']:.3f}",
                f"{m['top_5_sum']:.3f}",
                ", ".join(flags) or "-",
            )
        )
    return _table(rows)


def fill_table(names: list[str]) -> str:
    header = (
        "benchmark",
        "source",
        "inserted",
        "Top-3 before",
        "BenchFill",
        "baseline",
        "oracle",
        "target dev",
        "trials/item",
        "of fixed",
    )
    rows = [header]
    for name in names:
        m = _load(fill_metrics_path(name))
        if m is None:
            rows.append(_missing(name, header))
            continue
        meth = m["methods"]
        bf = meth["benchfill"]

        def red(method: str, methods: dict[str, Any] = meth) -> str:
            return f"{-methods[method]['top_3_reduction_pct']:.1f}%" if method in methods else "-"

        rows.append(
            (
                name,
                m["source"],
                f"{bf['n_inserted']}/{m['insertions']}",
                f"{m['top_3_before']:.3f}",
                red("benchfill"),
                red("baseline"),
                red("oracle"),
                f"{bf['target_dev']:.4f}",
                f"{bf['trials_per_insertion']:,.0f}",
                f"{bf['trials_vs_fixed']:.1%}",
            )
        )
    return _table(rows)


def print_summary(params: dict[str, Any]) -> int:
    names = benchmark_names(params)
    print("Response-matrix checks (metrics/check/, reports/check/):")
    print(check_table(names))
    print("\nIRT difficulty (metrics/irt/, data/difficulty/, plots/irt/):")
    print(irt_table(names))
    print("\nDifficulty distribution and gaps (metrics/gaps.json; read reports/gaps.md first):")
    print(gaps_table(names))
    print(
        "\nGap filling, Top-3 Sum change (metrics/fill/, plots/fill/; simulated = offline backend):"
    )
    print(fill_table(names))
    return 0
