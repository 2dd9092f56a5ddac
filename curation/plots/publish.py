"""Figures of a dataset card: difficulty histogram, ECDF against uniform, and DDM / gaps
before and after filling. Each ``plot_*`` writes one PNG atomically in the house style."""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

from curation.measure import ddm, largest_gaps, max_gap, top_k_sum
from curation.plots._style import HIGHLIGHT, NEUTRAL, PALETTE, new_figure, save_png

BINS = 20


def _clean(z: ArrayLike) -> np.ndarray:
    arr = np.asarray(z, dtype=np.float64)
    return arr[np.isfinite(arr)]


def plot_difficulty_histogram(
    series: Mapping[str, ArrayLike], path: str | os.PathLike[str], *, title: str = ""
) -> None:
    """Overlaid step histograms of z on [0, 1] (one per config), with the uniform level."""
    fig, ax = new_figure(width=6.4, height=3.4)
    edges = np.linspace(0.0, 1.0, BINS + 1)
    for i, (label, z) in enumerate(series.items()):
        zs = _clean(z)
        if zs.size == 0:
            continue
        counts, _ = np.histogram(zs, bins=edges)
        share = counts / zs.size
        ax.stairs(
            share,
            edges,
            label=f"{label} (n={zs.size})",
            color=PALETTE[i % len(PALETTE)],
            linewidth=1.6,
            fill=(i == 0),
            alpha=0.35 if i == 0 else 1.0,
        )
    ax.axhline(1.0 / BINS, color=NEUTRAL, linestyle=":", linewidth=1, label="uniform")
    ax.set_xlim(0, 1)
    ax.set_xlabel("difficulty z")
    ax.set_ylabel("share of items")
    ax.set_title(title or "Difficulty histogram")
    ax.legend(fontsize=8)
    save_png(fig, path)


def plot_difficulty_ecdf(
    series: Mapping[str, ArrayLike], path: str | os.PathLike[str], *, title: str = ""
) -> None:
    """ECDF of z per config against the uniform CDF; the legend gives each DDM."""
    fig, ax = new_figure(width=5.2, height=4.2)
    ax.plot([0, 1], [0, 1], color=NEUTRAL, linestyle=":", linewidth=1, label="uniform")
    for i, (label, z) in enumerate(series.items()):
        zs = np.sort(_clean(z))
        if zs.size == 0:
            continue
        x = np.concatenate([[0.0], zs, [1.0]])
        y = np.concatenate([[0.0], np.arange(1, zs.size + 1) / zs.size, [1.0]])
        ax.step(
            x,
            y,
            where="post",
            color=PALETTE[i % len(PALETTE)],
            linewidth=1.5,
            label=f"{label}: DDM {ddm(zs):.3f}",
        )
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("difficulty z")
    ax.set_ylabel("share of items with difficulty ≤ z")
    ax.set_title(title or "ECDF vs uniform")
    ax.legend(fontsize=8, loc="lower right")
    save_png(fig, path)


def plot_ddm_gaps(
    before: ArrayLike,
    after: ArrayLike,
    path: str | os.PathLike[str],
    *,
    labels: tuple[str, str] = ("original", "filled"),
    k: int = 5,
) -> None:
    """Left: DDM, Max Gap and Top-5 Sum before and after filling. Right: the items on the
    difficulty axis with the ``k`` largest gaps shaded, one row each."""
    zb, za = _clean(before), _clean(after)
    fig, (ax_bar, ax_strip) = new_figure(1, 2, width=8.4, height=3.2)
    names = ["DDM", "Max Gap", "Top-5 Sum"]
    vals = [[ddm(z), max_gap(z), top_k_sum(z, 5)] if z.size else [0.0, 0.0, 0.0] for z in (zb, za)]
    x = np.arange(len(names))
    width = 0.38
    for i, (label, v) in enumerate(zip(labels, vals, strict=True)):
        bars = ax_bar.bar(x + (i - 0.5) * width, v, width, label=label, color=PALETTE[i])
        ax_bar.bar_label(bars, fmt="%.3f", fontsize=7)
    ax_bar.axhline(0.10, color=HIGHLIGHT, linestyle="--", linewidth=0.8, label="flag 0.10")
    ax_bar.set_xticks(x, names)
    ax_bar.set_title("Measure before / after filling")
    ax_bar.legend(fontsize=8)
    for row, z in enumerate((zb, za)):
        y = 1 - row
        if z.size:
            for gap in largest_gaps(z, k):
                ax_strip.axvspan(
                    gap.z_left,
                    gap.z_right,
                    ymin=(y + 0.1) / 2,
                    ymax=(y + 0.9) / 2,
                    color=HIGHLIGHT,
                    alpha=0.25,
                    linewidth=0,
                )
            ax_strip.plot(z, np.full(z.size, y + 0.5), "|", color=PALETTE[row], markersize=10)
    ax_strip.set_yticks([1.5, 0.5], list(labels))
    ax_strip.set_ylim(0, 2)
    ax_strip.set_xlim(0, 1)
    ax_strip.set_xlabel("difficulty z")
    ax_strip.set_title(f"Items and the {k} largest gaps")
    save_png(fig, path)
