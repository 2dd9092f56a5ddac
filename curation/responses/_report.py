"""A readable Markdown report of the response-matrix checks, and its terminal line."""

from __future__ import annotations

from curation.report.format import fixed, percent
from curation.report.markdown import bullets, heading, image, table
from curation.responses._checks import CheckReport


def summary_line(report: CheckReport) -> str:
    """One line per benchmark for the terminal."""
    return (
        f"{report.benchmark:<12} {report.n_models:>3} models x {report.n_items:>5} items  "
        f"missing {percent(report.missing_share):>6}  "
        f"item-info {percent(report.item_informativeness):>6}  "
        f"model-info {percent(report.model_informativeness):>6}  "
        f"model-rev {fixed(report.model_reversal_rate)}  "
        f"item-rev {fixed(report.item_reversal_rate)}  "
        f"warnings {len(report.warnings)}"
    )


def render_check_markdown(report: CheckReport, *, list_limit: int = 10) -> str:
    """The per-benchmark check report (``reports/check/<benchmark>.md``)."""
    figures = [
        ("models × items", f"{report.n_models} × {report.n_items}"),
        ("missing cells", percent(report.missing_share)),
        ("item informativeness (p varies across models)", percent(report.item_informativeness)),
        ("all-solved items (difficulty only bounded)", str(len(report.all_solved))),
        ("none-solved items (difficulty only bounded)", str(len(report.none_solved))),
        ("model informativeness (not at 0% or 100%)", percent(report.model_informativeness)),
        ("model reversal rate", fixed(report.model_reversal_rate, 4)),
        ("item reversal rate", fixed(report.item_reversal_rate, 4)),
    ]
    lines = [
        heading(1, f"Response-matrix checks: {report.benchmark}"),
        "",
        *table(("figure", "value"), figures, align="ll", compact=True),
        "",
        image(f"../../plots/check/{report.benchmark}.png", "overview"),
        "",
        heading(2, "Warnings"),
        "",
    ]
    lines += bullets(report.warnings, marker="*") or ["None."]
    models = [
        (
            model,
            fixed(acc),
            fixed(report.model_variance[model]),
            fixed(report.per_model_reversal[model]),
        )
        for model, acc in sorted(report.model_accuracy.items(), key=lambda kv: -kv[1])
    ]
    header = ("model", "accuracy", "item-level variance", "reversal rate")
    lines += ["", heading(2, "Models (by accuracy)"), ""]
    lines += table(header, models, align="llll", compact=True)
    worst = sorted(report.per_item_reversal.items(), key=lambda kv: -kv[1])[:list_limit]
    lines += ["", heading(2, f"Items with the highest reversal rates (top {len(worst)})"), ""]
    lines += table(
        ("item", "reversal rate"),
        [(item, fixed(rate)) for item, rate in worst],
        align="ll",
        compact=True,
    )
    gaps = list(report.missing_by_model.items())
    lines += ["", heading(2, f"Models with missing cells ({len(gaps)})"), ""]
    lines += (
        table(
            ("model", "missing cells"),
            [(model, str(n)) for model, n in gaps[:list_limit]],
            align="ll",
            compact=True,
        )
        if gaps
        else ["None."]
    )
    for title, ids in (
        ("All-solved items", report.all_solved),
        ("None-solved items", report.none_solved),
    ):
        shown = ", ".join(ids[:list_limit]) + (" …" if len(ids) > list_limit else "")
        lines += ["", heading(2, f"{title} ({len(ids)})"), "", shown or "None."]
    return "\n".join(lines) + "\n"
