"""A readable Markdown report of the response-matrix checks."""

from __future__ import annotations

from curation.responses._checks import CheckReport


def _pct(x: float) -> str:
    return f"{x:.1%}"


def summary_line(report: CheckReport) -> str:
    """One line per benchmark for the terminal."""
    return (
        f"{report.benchmark:<12} {report.n_models:>3} models x {report.n_items:>5} items  "
        f"missing {_pct(report.missing_share):>6}  "
        f"item-info {_pct(report.item_informativeness):>6}  "
        f"model-info {_pct(report.model_informativeness):>6}  "
        f"model-rev {report.model_reversal_rate:.3f}  item-rev {report.item_reversal_rate:.3f}  "
        f"warnings {len(report.warnings)}"
    )


def render_check_markdown(report: CheckReport, *, list_limit: int = 10) -> str:
    """The per-benchmark check report (``reports/check/<benchmark>.md``)."""
    lines = [
        f"# Response-matrix checks: {report.benchmark}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| models × items | {report.n_models} × {report.n_items} |",
        f"| missing cells | {_pct(report.missing_share)} |",
        f"| item informativeness (p varies across models) | {_pct(report.item_informativeness)} |",
        f"| all-solved items (difficulty only bounded) | {len(report.all_solved)} |",
        f"| none-solved items (difficulty only bounded) | {len(report.none_solved)} |",
        f"| model informativeness (not at 0% or 100%) | {_pct(report.model_informativeness)} |",
        f"| model reversal rate | {report.model_reversal_rate:.4f} |",
        f"| item reversal rate | {report.item_reversal_rate:.4f} |",
        "",
        f"![overview](../../plots/check/{report.benchmark}.png)",
        "",
        "## Warnings",
        "",
    ]
    lines += [f"* {w}" for w in report.warnings] or ["None."]
    lines += [
        "",
        "## Models (by accuracy)",
        "",
        "| model | accuracy | item-level variance | reversal rate |",
        "|---|---|---|---|",
    ]
    for model, acc in sorted(report.model_accuracy.items(), key=lambda kv: -kv[1]):
        lines.append(
            f"| {model} | {acc:.3f} | {report.model_variance[model]:.3f} | "
            f"{report.per_model_reversal[model]:.3f} |"
        )
    worst = sorted(report.per_item_reversal.items(), key=lambda kv: -kv[1])[:list_limit]
    lines += [
        "",
        f"## Items with the highest reversal rates (top {len(worst)})",
        "",
        "| item | reversal rate |",
        "|---|---|",
    ]
    lines += [f"| {item} | {rate:.3f} |" for item, rate in worst]
    for title, ids in (
        ("All-solved items", report.all_solved),
        ("None-solved items", report.none_solved),
    ):
        shown = ", ".join(ids[:list_limit]) + (" …" if len(ids) > list_limit else "")
        lines += ["", f"## {title} ({len(ids)})", "", shown or "None."]
    return "\n".join(lines) + "\n"
