"""Figures of a dataset card: difficulty histogram, ECDF against each config's target, and
DDM / gaps before and after filling. Each ``plot_*`` writes one figure (PNG + SVG, ...)
atomically in the house style."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from curation.measure import Thresholds, ddm, largest_gaps, max_gap, parse_target, top_k_sum
from curation.plots._style import (
    DEFAULT_FORMATS,
    HIGHLIGHT,
    NEUTRAL,
    PALETTE,
    SavedFigure,
    legend_outside,
    new_figure,
    save_figure,
    wrap_title,
)
from curation.plots.measure import target_cdf_points

BINS = 20


def _clean(z: ArrayLike) -> np.ndarray:
    arr = np.asarray(z, dtype=np.float64)
    return arr[np.isfinite(arr)]


def plot_difficulty_histogram(
    series: Mapping[str, ArrayLike],
    path: str | os.PathLike[str],
    *,
    title: str = "",
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
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
    ax.set_title(wrap_title(title or "Difficulty histogram", 5.5))
    legend_outside(fig, ax, ncols=3)
    return save_figure(fig, path, formats=formats)


@dataclass(frozen=True)
class EcdfPanel:
    """One panel of the card's ECDF figure: configs drawn against one target.

    ``target`` is anything :func:`curation.measure.parse_target` reads, or None for a
    target it cannot draw (e.g. another benchmark's items), whose DDMs then come from
    ``ddm`` (the subsets stage's metrics).
    """

    label: str
    target: Any
    series: Mapping[str, ArrayLike]
    ddm: Mapping[str, float | None] = field(default_factory=dict)


def plot_difficulty_ecdf(
    panels: Sequence[EcdfPanel],
    path: str | os.PathLike[str],
    *,
    title: str = "",
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """ECDF of z per config against its own target CDF, one panel per target; the
    legend gives each config's DDM to that panel's target."""
    n = max(len(panels), 1)
    fig, axes = new_figure(1, n, width=4.4 * n + 0.4, height=4.4)
    axes = np.atleast_1d(axes)
    for ax, panel in zip(axes, panels, strict=False):
        if panel.target is not None:
            pts = target_cdf_points(panel.target)
            ax.plot([p["z"] for p in pts], [p["cdf"] for p in pts], color=NEUTRAL,
                    linestyle=":", linewidth=1.2, label=f"target: {panel.label}")  # fmt: skip
        for i, (label, z) in enumerate(panel.series.items()):
            zs = np.sort(_clean(z))
            if zs.size == 0:
                continue
            x = np.concatenate([[0.0], zs, [1.0]])
            y = np.concatenate([[0.0], np.arange(1, zs.size + 1) / zs.size, [1.0]])
            value = ddm(zs, panel.target) if panel.target is not None else panel.ddm.get(label)
            shown = f"{value:.3f}" if value is not None else "n/a"
            ax.step(x, y, where="post", color=PALETTE[i % len(PALETTE)], linewidth=1.5,
                    label=f"{label} (n={zs.size}): DDM {shown}")  # fmt: skip
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1.01)
        ax.set_xlabel("difficulty z")
        ax.set_ylabel("share of items with difficulty ≤ z")
        ax.set_title(wrap_title(f"against {panel.label}", 4.0))
        # under its own panel (each panel has its own target and DDMs): inside, it hid
        # the curves of a benchmark whose items crowd one end
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)
    if title:
        fig.suptitle(wrap_title(title, 4.4 * n), fontsize=10)
    return save_figure(fig, path, formats=formats)


def ecdf_panels(
    full: Mapping[str, ArrayLike],
    subsets: Sequence[tuple[str, str, ArrayLike, float | None]],
) -> list[EcdfPanel]:
    """Panels for :func:`plot_difficulty_ecdf`: uniform first (the full benchmark's
    configs), then one per subset target; every subset sits in its target's panel, and
    the full benchmark is drawn in every panel for comparison.

    ``subsets`` holds (config name, target label, z, DDM to target from the metrics).
    """
    order: dict[str, list[tuple[str, ArrayLike, float | None]]] = {"uniform": []}
    for name, label, z, value in subsets:
        order.setdefault(label, []).append((name, z, value))
    panels = []
    for label, members in order.items():
        try:
            target: Any = parse_target(label)
        except (ValueError, TypeError):
            target = None
        series: dict[str, ArrayLike] = dict(full)
        ddms: dict[str, float | None] = {}
        for name, z, value in members:
            series[name] = z
            ddms[name] = value
        panels.append(EcdfPanel(label=label, target=target, series=series, ddm=ddms))
    return panels


def plot_ddm_gaps(
    before: ArrayLike,
    after: ArrayLike,
    path: str | os.PathLike[str],
    *,
    labels: tuple[str, str] = ("original", "filled"),
    k: int = 5,
    thresholds: Thresholds | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """Left: DDM, Max Gap and Top-5 Sum before and after filling, each with its flag
    threshold (``gaps.thresholds``). Right: the items on the difficulty axis with the
    ``k`` largest gaps shaded, one row each."""
    zb, za = _clean(before), _clean(after)
    fig, (ax_bar, ax_strip) = new_figure(1, 2, width=8.4, height=3.2)
    names = ["DDM", "Max Gap", "Top-5 Sum"]
    vals = [[ddm(z), max_gap(z), top_k_sum(z, 5)] if z.size else [0.0, 0.0, 0.0] for z in (zb, za)]
    x = np.arange(len(names))
    width = 0.38
    for i, (label, v) in enumerate(zip(labels, vals, strict=True)):
        bars = ax_bar.bar(x + (i - 0.5) * width, v, width, label=label, color=PALETTE[i])
        ax_bar.bar_label(bars, fmt="%.3f", fontsize=7, padding=2)
    # each measure's own flag threshold, over its own pair of bars (one line across all
    # three put DDM's 0.10 under the Top-5 Sum, whose threshold is 0.30)
    limits = thresholds or Thresholds()
    for j, t in enumerate((limits.ddm, limits.max_gap, limits.top_5_sum)):
        ax_bar.hlines(t, j - width, j + width, color=HIGHLIGHT, linestyles="--", linewidth=1.0,
                      label="flag threshold" if j == 0 else None)  # fmt: skip
    ax_bar.set_xticks(x, names)
    top = max(max(max(v) for v in vals), limits.top_5_sum)
    ax_bar.set_ylim(0, 1.18 * top)  # room for the value labels above the bars
    ax_bar.set_title("Measure before / after filling")
    legend_outside(fig, ax_bar, ncols=3)
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
    return save_figure(fig, path, formats=formats)
