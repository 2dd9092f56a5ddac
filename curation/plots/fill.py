"""BenchFill figure: the difficulty axis before and after each method's insertions."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from curation.measure import largest_gaps, top_k_sum
from curation.plots._style import (
    DEFAULT_FORMATS,
    HIGHLIGHT,
    NEUTRAL,
    PALETTE,
    SavedFigure,
    new_figure,
    save_figure,
)
from curation.report.format import with_interval

_LABELS = {"benchfill": "BenchFill", "baseline": "baseline (uniform parents)", "oracle": "oracle"}


def plot_fill(
    z_before: ArrayLike,
    inserted: Mapping[str, Sequence[Mapping[str, Any]]],
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    k: int = 3,
    reductions: Mapping[str, Mapping[str, Any] | None] | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """One strip per row: the benchmark, then + each method's inserted items.

    Benchmark items are grey ticks, the ``k`` largest gaps of each row are shaded,
    inserted items are coloured ticks with their targets as open triangles. The ticks
    sit at each item's measured z, so the row's Top-k change is the plug-in one; where
    ``reductions`` gives a method's reduction estimate and 90% interval (the figure
    ``curate summary`` prints, ``metrics/fill/<b>.json`` ``top_3_reduction``), the title
    shows it beside the plug-in, so the figure and the summary never disagree silently.
    """
    z0 = np.asarray(z_before, dtype=np.float64)
    rows: list[tuple[str, np.ndarray, Sequence[Mapping[str, Any]]]] = [("before", z0, [])]
    for method in ("benchfill", "baseline", "oracle"):
        if method in inserted:
            ins = inserted[method]
            z = np.concatenate([z0, [float(c["z"]) for c in ins]])
            rows.append((method, z, ins))
    fig, axes = new_figure(len(rows), 1, width=7.6, height=0.95 * len(rows) + 0.7)
    axes = np.atleast_1d(axes)
    t0 = top_k_sum(z0, k)
    for idx, (ax, (method, z, ins)) in enumerate(zip(axes, rows, strict=True)):
        label = _LABELS.get(method, method)
        ax.vlines(z0, 0.0, 1.0, color=NEUTRAL, linewidth=0.5, alpha=0.55)
        for gap in largest_gaps(z, k):
            if gap.width > 0:
                ax.axvspan(gap.z_left, gap.z_right, color=HIGHLIGHT, alpha=0.18, linewidth=0)
        color = PALETTE[idx % len(PALETTE)]
        for c in ins:
            ax.vlines(float(c["z"]), 0.0, 1.0, color=color, linewidth=2.0)
            ax.plot(float(c["target_z"]), 1.12, marker="v", color=color, mfc="none", ms=5)
        tk = top_k_sum(z, k)
        text = f"{label}: Top-{k} {tk:.3f}"
        if ins and t0 > 0:
            text += f" ({100 * (tk - t0) / t0:+.1f}% at the measured z"
            est = (reductions or {}).get(method)
            if est and method != "oracle":
                change = with_interval(-est["estimate"], -est["high"], -est["low"], 1)
                text += f"; estimate {change}%, 90%"
            text += ")"
        ax.set_title(text, fontsize=8, loc="left")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.3)
        ax.set_yticks([])
        ax.grid(False)
        ax.spines["left"].set_visible(False)
        if idx < len(rows) - 1:
            ax.set_xticklabels([])
    axes[-1].set_xlabel("difficulty z (shaded: largest gaps; ▽ target)")
    if name:
        fig.suptitle(f"{name}: gap filling, before and after", fontsize=10)
    return save_figure(fig, path, formats=formats)
