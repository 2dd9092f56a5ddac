"""IRT figures: item characteristic curves and difficulty vs ability, one benchmark each."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
from scipy.special import expit

from curation.plots._style import (
    DEFAULT_FORMATS,
    HIGHLIGHT,
    NEUTRAL,
    PALETTE,
    ROW_INCHES,
    SavedFigure,
    new_figure,
    row_fontsize,
    save_figure,
    wrap_title,
)
from curation.report.panel import many_models

if TYPE_CHECKING:
    from curation.irt import FitResult


def _title(result: FitResult, what: str) -> str:
    name = result.calibration.benchmark
    model = result.calibration.model.upper()
    return f"{name}: {what} ({model})" if name else f"{what} ({model})"


def plot_item_curves(
    result: FitResult,
    path: str | os.PathLike[str],
    *,
    n_items: int = 8,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """P(correct | θ) for ``n_items`` items spread evenly over the difficulty range.

    Items are picked at evenly spaced quantiles of b among unbounded items (bounded
    items have no curve worth drawing), so the figure shows the whole axis; the
    panel's abilities are marked on the θ axis.
    """
    if n_items < 1:
        raise ValueError(f"n_items must be >= 1, got {n_items}")
    items = result.items.filter(pl.col("bound").is_null()).sort("b")
    if items.height == 0:
        items = result.items.sort("b")
    pick = np.unique(np.round(np.linspace(0, items.height - 1, min(n_items, items.height))))
    sample = items[pick.astype(int).tolist()]
    theta = result.models["theta"].to_numpy()
    lo = min(theta.min(), sample["b"].min()) - 1.5
    hi = max(theta.max(), sample["b"].max()) + 1.5
    grid = np.linspace(lo, hi, 300)
    fig, ax = new_figure(width=6.4, height=3.8)
    for n, row in enumerate(sample.iter_rows(named=True)):
        a = row["a"] if row["a"] is not None else 1.0
        # 3PL: the curve has a floor c and its own location (b is the axis location)
        c = row.get("c") or 0.0
        b = row["b_curve"] if row.get("b_curve") is not None else row["b"]
        color = PALETTE[n % len(PALETTE)]
        ax.plot(grid, c + (1.0 - c) * expit(a * (grid - b)), color=color, lw=1.4,
                label=f"{row['item'][:28]}  z={row['z']:.2f}")  # fmt: skip
    ax.plot(theta, np.zeros_like(theta), "|", color=NEUTRAL, ms=12, mew=1.2, label="panel θ")
    ax.set_xlim(lo, hi)
    ax.set_ylim(-0.03, 1.03)
    ax.set_xlabel("ability θ (logits, mean panel ability 0)")
    ax.set_ylabel("P(correct)")
    ax.set_title(wrap_title(_title(result, "item characteristic curves"), 4.0))
    ax.legend(fontsize=6.5, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return save_figure(fig, path, formats=formats)


def plot_difficulty_vs_ability(
    result: FitResult, path: str | os.PathLike[str], *, formats: Sequence[str] = DEFAULT_FORMATS
) -> SavedFigure:
    """Item difficulties (histogram) and model abilities (dots) on one logit axis.

    Shows where the benchmark's items sit relative to the panel: items left of the
    weakest model or right of the strongest are outside the range the panel can
    resolve (z clips to 0 or 1 on the default scale). Bounded items are counted in
    the legend, not drawn, since their b is set by the prior.
    """
    items, models = result.items, result.models.sort("theta")
    free = items.filter(pl.col("bound").is_null())["b"].to_numpy()
    theta = models["theta"].to_numpy()
    n_all = items.filter(pl.col("bound") == "all-solved").height
    n_none = items.filter(pl.col("bound") == "none-solved").height
    many = many_models(len(theta))  # a leaderboard: a rug of abilities, no labels
    hist_h, models_h = 2.2, 0.8 if many else 0.6 + ROW_INCHES * len(theta)
    fig, (ax_b, ax_t) = new_figure(2, 1, width=6.4, height=hist_h + models_h + 0.6)
    ax_b.get_gridspec().set_height_ratios([hist_h, models_h])
    fig.get_layout_engine().set(h_pad=0.02)
    lo = min(theta.min(), free.min() if free.size else theta.min()) - 0.5
    hi = max(theta.max(), free.max() if free.size else theta.max()) + 0.5
    bins = np.linspace(lo, hi, 41)
    ax_b.hist(free, bins=bins, color=PALETTE[0], alpha=0.85)
    for t in (theta.min(), theta.max()):
        ax_b.axvline(t, color=HIGHLIGHT, lw=1, ls="--")
    ax_b.set_ylabel("items")
    # what a legend over the bars said, under the title (the legend covered the bars)
    ax_b.set_title(
        wrap_title(_title(result, "difficulty vs ability"), 5.0)
        + f"\nitems: n={free.size} (all-solved {n_all}, none-solved {n_none});"
        " dashed: the panel's weakest and strongest model",
        fontsize=8,
    )
    if many:
        ax_t.plot(theta, np.zeros_like(theta), "|", color=HIGHLIGHT, ms=12, alpha=0.3)
        ax_t.set_yticks([])
        ax_t.set_ylabel(f"{len(theta)} models")
    else:
        y = np.arange(len(theta))
        ax_t.plot(theta, y, "o", color=HIGHLIGHT, ms=4)
        ax_t.set_yticks(
            y,
            [m[:32] for m in models["model"].to_list()],
            fontsize=row_fontsize(len(theta), models_h - 0.6),
        )
        ax_t.set_ylim(-0.6, len(theta) - 0.4)
        ax_t.set_ylabel("models")
    ax_t.set_xlim(lo, hi)
    ax_b.set_xlim(lo, hi)
    ax_t.set_xlabel("logit scale: item difficulty b / model ability θ")
    return save_figure(fig, path, formats=formats)
