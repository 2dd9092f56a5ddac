"""Figure for the response-matrix checks: how items and models spread."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from curation.plots._style import (
    DEFAULT_FORMATS,
    HIGHLIGHT,
    PALETTE,
    SavedFigure,
    new_figure,
    row_fontsize,
    rows_height,
    save_figure,
    wrap_title,
)
from curation.report.panel import many_models
from curation.responses import CheckReport

_WIDTH = 10.0


def plot_check_overview(
    report: CheckReport,
    path: str | os.PathLike[str],
    *,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """Left: item success rates (all/none-solved items marked). Right: model accuracies as
    horizontal bars, one labelled row per model (the figure grows with the panel, so model
    names stay legible), coloured by whether a model reverses the accuracy order often."""
    # a leaderboard: a curve, not one labelled bar per model (curation.report.panel)
    many = many_models(report.n_models)
    height = 3.4 if many else rows_height(report.n_models)
    fig, (left, right) = new_figure(1, 2, width=_WIDTH, height=height)
    fig.get_layout_engine().set(wspace=0.04)
    success = np.array([r for r in report.item_success.values()])
    bins = np.linspace(0, 1, 21)
    counts, _, _ = left.hist(success, bins=bins, color=PALETTE[0], edgecolor="white")
    left.set_xlabel("item success rate across models")
    left.set_ylabel("items")
    left.set_title(
        wrap_title(
            f"{report.benchmark}: {report.n_items} items, "
            f"{len(report.all_solved)} all-solved, {len(report.none_solved)} none-solved",
            0.4 * _WIDTH,
        )
    )
    # At the top of the axes over the edge bins (which hold them), in headroom above the
    # tallest bar: placed just above its own bin, a count sat on the taller bars beside it.
    for edge, n, what in (
        (0.0, len(report.none_solved), "none-solved"),
        (1.0, len(report.all_solved), "all-solved"),
    ):
        if n:
            left.annotate(
                f"{n} {what}",
                (edge, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(0, -2),
                textcoords="offset points",
                ha="left" if edge < 0.5 else "right",
                va="top",
                color=HIGHLIGHT,
                fontsize=8,
            )
    left.set_ylim(0, 1.22 * max(float(counts.max()), 1.0))
    if height > 5:  # a tall panel: keep the histogram a readable shape at the top
        left.set_anchor("N")
        left.set_box_aspect(0.8)

    models = sorted(report.model_accuracy, key=lambda m: report.model_accuracy[m])
    acc = [report.model_accuracy[m] for m in models]
    rev = np.array([report.per_model_reversal[m] for m in models])
    if many:  # sorted accuracy curve, frequent reversers marked
        offending = set(report.offending_models)
        rank = np.arange(1, len(models) + 1)
        right.plot(rank, acc, color=PALETTE[0], linewidth=1.2)
        marked = [k for k, m in enumerate(models) if m in offending]
        right.scatter(rank[marked], np.asarray(acc)[marked], color=HIGHLIGHT, s=6, zorder=3)
        right.set_xlabel("model rank by accuracy")
        right.set_ylabel("accuracy")
        right.set_ylim(0, 1)
    else:
        colors = [HIGHLIGHT if m in report.offending_models else PALETTE[0] for m in models]
        right.barh(range(len(models)), acc, color=colors)
        right.set_yticks(
            range(len(models)), labels=models, fontsize=row_fontsize(len(models), height - 1.0)
        )
        right.set_ylim(-0.6, len(models) - 0.4)
        right.set_xlim(0, 1)
        right.set_xlabel("accuracy")
    right.set_title(
        wrap_title(
            f"{report.n_models} models by accuracy (vermillion: frequent reversals, "
            f"max rate {rev.max():.3f})",
            0.35 * _WIDTH,
        )
    )
    right.grid(axis="y", visible=False)
    return save_figure(fig, path, formats=formats)
