"""Figure for the response-matrix checks: how items and models spread."""

from __future__ import annotations

import os

import numpy as np

from curation.plots._style import HIGHLIGHT, PALETTE, new_figure, save_png
from curation.responses._checks import CheckReport

LABELLED_MODELS = 120
"""Above this many models the right panel is a curve, not one labelled bar per model."""


def plot_check_overview(report: CheckReport, path: str | os.PathLike[str]) -> None:
    """Left: item success rates (all/none-solved items marked). Right: model accuracies,
    coloured by how often each model reverses the accuracy order.

    Up to :data:`LABELLED_MODELS` models each gets a labelled bar; a leaderboard's
    thousands get the sorted accuracy curve with the frequent reversers marked (a bar
    per model would make a figure hundreds of inches tall that takes minutes to draw).
    """
    many = report.n_models > LABELLED_MODELS
    height = 3.4 if many else max(3.4, 0.13 * report.n_models)
    fig, (left, right) = new_figure(1, 2, width=10.0, height=height)
    success = np.array([r for r in report.item_success.values()])
    bins = np.linspace(0, 1, 21)
    left.hist(success, bins=bins, color=PALETTE[0], edgecolor="white")
    left.set_xlabel("item success rate across models")
    left.set_ylabel("items")
    left.set_title(
        f"{report.benchmark}: {report.n_items} items, "
        f"{len(report.all_solved)} all-solved, {len(report.none_solved)} none-solved"
    )
    for edge, n in ((0.0, len(report.none_solved)), (1.0, len(report.all_solved))):
        if n:
            left.annotate(
                f"{n}",
                (edge, 0),
                xytext=(0, 4),
                textcoords="offset points",
                ha="center",
                color=HIGHLIGHT,
                fontsize=8,
            )

    models = sorted(report.model_accuracy, key=lambda m: report.model_accuracy[m])
    acc = [report.model_accuracy[m] for m in models]
    rev = np.array([report.per_model_reversal[m] for m in models])
    if many:
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
        fontsize = max(4, 8 - len(models) // 12)
        right.set_yticks(range(len(models)), labels=models, fontsize=fontsize)
        right.set_xlim(0, 1)
        right.set_xlabel("accuracy")
    right.set_title(
        f"{report.n_models} models by accuracy (red: frequent reversals, max rate {rev.max():.3f})"
    )
    right.grid(axis="y", visible=False)
    save_png(fig, path)
