"""The terminal summary printed at the end of a run: one table per stage's metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.paths import (
    GAPS_METRICS,
    check_metrics_path,
    fill_metrics_path,
    irt_metrics_path,
)
from curation.report.format import DASH, fixed, general, interval, percent, with_interval
from curation.report.text import table

if TYPE_CHECKING:
    from curation.params_model import ParamsFile


def _load(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _missing(name: str, header: tuple[str, ...]) -> tuple[str, ...]:
    return (name, *[DASH] * (len(header) - 1))


def check_table(names: list[str]) -> str:
    """The check stage's diagnostics per benchmark; a dash row where it has not run yet."""
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
    rows: list[tuple[str, ...]] = []
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
                percent(m["missing_share"]),
                percent(m["item_informativeness"]),
                percent(m["model_informativeness"]),
                fixed(m["model_reversal_rate"]),
                fixed(m["item_reversal_rate"]),
                str(m["n_warnings"]),
            )
        )
    return table(header, rows)


def irt_table(names: list[str]) -> str:
    """The annotate fit per benchmark: model and method chosen, the BIC beside the
    held-out choice, the degenerate items and the leave-one-model-out sensitivity; then
    each benchmark's one-line reason for its model."""
    header = (
        "benchmark",
        "model",
        "method",
        "BIC 1PL",
        "BIC 2PL",
        "BIC 3PL",
        "all-solved",
        "none-solved",
        "LOO max|dz|",
        "most influential",
    )
    rows: list[tuple[str, ...]] = []
    reasons: list[str] = []
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
                fixed(m["bic_1pl"], 0),
                fixed(m["bic_2pl"], 0),
                fixed(m["bic_3pl"], 0) if m.get("bic_3pl") is not None else DASH,
                str(m["n_all_solved"]),
                str(m["n_none_solved"]),
                fixed(loo["max_abs_dz"]) if loo else DASH,
                str(loo.get("most_influential_model", DASH)),
            )
        )
        choice = m.get("choice")
        if choice and m.get("model_choice") != "params":
            reasons.append(f"  {name}: {choice['reason']}")
    return table(header, rows) + "".join(f"\n{r}" for r in reasons)


def gaps_table(names: list[str]) -> str:
    """The gaps stage per benchmark: DDM against each target, the largest gap and where,
    the Top-3/Top-5 sums and the flags raised."""
    metrics = _load(GAPS_METRICS) or {}
    first: dict[str, Any] = next(iter(metrics.values()), {})
    targets = sorted(first.get("ddm", {}), key=lambda t: (t != "uniform", t))
    header = (
        "benchmark",
        "n",
        *[f"DDM {t}" for t in targets],
        "Max Gap (observed z)",
        "largest gap at",
        "Top-3",
        "Top-5",
        "Max Gap est. [90% CI]",
        "flags",
    )
    rows: list[tuple[str, ...]] = []
    for name in names:
        m = metrics.get(name)
        if m is None:
            rows.append(_missing(name, header))
            continue
        flags = [k for k in ("ddm", "max_gap", "top_5_sum") if m["flags"][k]]
        iv = (m.get("intervals") or {}).get("max_gap")
        rows.append(
            (
                name,
                str(m["n"]),
                *[fixed(m["ddm"][t]) for t in targets],
                fixed(m["max_gap"]),
                interval(m["max_gap_left"], m["max_gap_right"]),
                fixed(m["top_3_sum"]),
                fixed(m["top_5_sum"]),
                with_interval(iv["estimate"], iv["low"], iv["high"]) if iv else DASH,
                ", ".join(flags) or DASH,
            )
        )
    return table(header, rows)


# --- gaps: resolution and anchoring (issue 13) -------------------------------------------


def resolution_table(names: list[str]) -> str:
    """Levels, score step, clipped items and panel span of each benchmark's z."""
    metrics = _load(GAPS_METRICS) or {}
    header = (
        "benchmark",
        "trials/cell",
        "z levels",
        "resolution",
        "clipped at 0",
        "clipped at 1",
        "panel θ span",
        "gaps resolved",
    )
    rows: list[tuple[str, ...]] = []
    for name in names:
        r = (metrics.get(name) or {}).get("resolution")
        if r is None:
            rows.append(_missing(name, header))
            continue
        p = r["panel"]
        rows.append(
            (
                name,
                general(r.get("trials_per_cell", 0)),
                str(r["n_levels"]),
                fixed(r.get("resolution")),
                f"{r['n_clipped_low']} ({percent(r.get('share_clipped_low', 0), 0)})",
                f"{r['n_clipped_high']} ({percent(r.get('share_clipped_high', 0), 0)})",
                f"{p['theta_min']:.2f}..{p['theta_max']:.2f} ({p['span']:.2f})",
                f"{r.get('largest_gaps_resolved', 0)}/{r.get('largest_gaps_listed', 0)}",
            )
        )
    return table(header, rows)


# --- end of gaps: resolution and anchoring -----------------------------------------------


def fill_table(names: list[str]) -> str:
    """One row per benchmark on the ESTIMATED z (confirmation estimates: what a real run
    can know); a simulated run adds a row on the simulated world's TRUE z."""
    header = (
        "benchmark",
        "source",
        "z",
        "inserted",
        "Top-3 before",
        "BenchFill",
        "baseline",
        "oracle",
        "target dev",
        "on target",
        "trials/item",
        "of fixed",
    )
    rows: list[tuple[str, ...]] = []
    for name in names:
        m = _load(fill_metrics_path(name))
        if m is None or m.get("skipped"):  # a matrix-only benchmark has no fill
            rows.append(_missing(name, header))
            continue
        meth = m["methods"]
        bf = meth["benchfill"]

        def red(method: str, key: str, methods: dict[str, Any] = meth) -> str:
            value = methods.get(method, {}).get(key)
            return DASH if value is None else fixed(-value, 1) + "%"

        se = bf.get("target_dev_se")
        dev = fixed(bf["target_dev"], 4) + (f" ± {se:.4f}" if se is not None else "")
        on = f"{bf['n_on_target']}/{bf['n_inserted']}" if "n_on_target" in bf else DASH
        rows.append(
            (
                name,
                m["source"],
                "estimated",
                f"{bf['n_inserted']}/{m['insertions']}",
                fixed(m["top_3_before"]),
                red("benchfill", "top_3_reduction_pct"),
                red("baseline", "top_3_reduction_pct"),
                red("oracle", "top_3_reduction_pct"),
                dev,
                on,
                fixed(bf["trials_per_insertion"], 0, grouping=True),
                percent(bf["trials_vs_fixed"]),
            )
        )
        if m.get("true") is not None:
            rows.append(
                (
                    "",
                    "",
                    "true (sim.)",
                    "",
                    "",
                    red("benchfill", "true_top_3_reduction_pct"),
                    red("baseline", "true_top_3_reduction_pct"),
                    red("oracle", "true_top_3_reduction_pct"),
                    fixed(bf.get("true_target_dev"), 4),
                    "",
                    "",
                    "",
                )
            )
    return table(header, rows)


def print_summary(params: ParamsFile) -> int:
    """Print every stage's table for params' benchmarks (`curate summary`); returns 0.
    It reads only the metrics files, so it also works after a partial run."""
    names = list(params.benchmarks)
    print("Response-matrix checks (metrics/check/, reports/check/):")
    print(check_table(names))
    print("\nIRT difficulty (metrics/irt/, data/difficulty/, plots/irt/):")
    print(irt_table(names))
    print("\nDifficulty distribution and gaps (metrics/gaps.json; read reports/gaps.md first):")
    print(gaps_table(names))
    print(
        "\nResolution and anchoring (z = 0 / 1: below the weakest / above the strongest model;"
        " resolution: z change of one score step):"
    )
    print(resolution_table(names))
    print(
        "\nGap filling, Top-3 Sum change (metrics/fill/, plots/fill/; simulated = offline backend;"
        "\nz: estimated = confirmation estimates, true = the simulated world's truth):"
    )
    print(fill_table(names))
    return 0
