"""Figures of the gap analysis (SPEC §2): ECDF vs target, gap strip, power curves.

Each ``plot_*`` takes data and an output path and writes a PNG (and SVG, ...) atomically. The
``*_points``/``*_rows`` functions return the same data as lists of dicts, so a DVC stage
can write them as CSV/JSON plot data (``dvc plots``) next to the PNGs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import ArrayLike, NDArray

from curation.measure import (
    Histogram,
    Sample,
    TargetLike,
    as_unit_sample,
    ddm,
    largest_gaps,
    max_gap,
    parse_target,
    top_k_sum,
)
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

_BETA_POINTS = 201


def _step_points(values: NDArray[np.float64]) -> list[dict[str, float]]:
    """Corners of an ECDF on [0, 1]: (x, F(x−)) then (x, F(x)) at every jump."""
    vs = np.sort(values)
    uniq, counts = np.unique(vs, return_counts=True)
    cum = np.cumsum(counts) / vs.size
    before = np.concatenate([[0.0], cum[:-1]])
    pts = [{"z": 0.0, "cdf": 0.0}]
    for x, lo, hi in zip(uniq, before, cum, strict=True):
        pts.append({"z": float(x), "cdf": float(lo)})
        pts.append({"z": float(x), "cdf": float(hi)})
    pts.append({"z": 1.0, "cdf": 1.0})
    return pts


def ecdf_points(z: ArrayLike) -> list[dict[str, float]]:
    """The benchmark's ECDF as corner points {z, cdf} (draw as a polyline)."""
    return _step_points(as_unit_sample(z))


def target_cdf_points(
    target: TargetLike = "uniform", *, n_points: int = _BETA_POINTS
) -> list[dict[str, float]]:
    """The target CDF as points {z, cdf}: exact knots for uniform/histogram, corner
    points for a sample, ``n_points`` evenly spaced points for a Beta."""
    tgt = parse_target(target)
    if isinstance(tgt, Histogram):
        xs, cum = tgt.knots
        xs = np.concatenate([[0.0], xs, [1.0]])
        cum = np.concatenate([[0.0], cum, [1.0]])
        pts: list[dict[str, float]] = []
        for x, c in zip(xs, cum, strict=True):
            if not pts or (pts[-1]["z"], pts[-1]["cdf"]) != (float(x), float(c)):
                pts.append({"z": float(x), "cdf": float(c)})
        return pts
    if isinstance(tgt, Sample):
        return _step_points(tgt.array())
    xs = np.linspace(0.0, 1.0, int(n_points))
    return [{"z": float(x), "cdf": float(c)} for x, c in zip(xs, tgt.cdf(xs), strict=True)]


def ecdf_plot_rows(
    z: ArrayLike, target: TargetLike = "uniform", *, benchmark: str | None = None
) -> list[dict[str, Any]]:
    """ECDF and target CDF in one long table {benchmark, series, z, cdf} for DVC plots."""
    label = parse_target(target).label
    rows = [{"series": "benchmark", **p} for p in ecdf_points(z)]
    rows += [{"series": f"target: {label}", **p} for p in target_cdf_points(target)]
    if benchmark is not None:
        rows = [{"benchmark": benchmark, **r} for r in rows]
    return rows


def gap_rows(z: ArrayLike, *, k: int = 5) -> list[dict[str, float | int]]:
    """The ``k`` largest gaps as {rank, z_left, z_right, width, midpoint}."""
    return [
        {
            "rank": i + 1,
            "z_left": g.z_left,
            "z_right": g.z_right,
            "width": g.width,
            "midpoint": g.midpoint,
        }
        for i, g in enumerate(largest_gaps(z, k))
    ]


def item_rows(z: ArrayLike) -> list[dict[str, float | int]]:
    """Items on the axis as {item, z} (sorted by z) for a strip plot."""
    zs = np.sort(as_unit_sample(z))
    return [{"item": i, "z": float(v)} for i, v in enumerate(zs)]


def power_rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """A :func:`curation.measure.power_curve` frame as plain rows."""
    return frame.to_dicts()


def plot_ecdf(
    z: ArrayLike,
    path: str | os.PathLike[str],
    *,
    target: TargetLike = "uniform",
    name: str | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """ECDF of z against the target CDF; the shaded area between them is the DDM."""
    zz = as_unit_sample(z)
    tgt = parse_target(target)
    value = ddm(zz, tgt)
    zs = np.sort(zz)
    extra = tgt.array() if isinstance(tgt, Sample) else np.asarray(getattr(tgt, "edges", []))
    grid = np.unique(np.concatenate([np.linspace(0, 1, 1001), zs, extra]))
    # Each grid point twice: left limit then value, so steps are vertical in the polygon.
    xs = np.repeat(grid, 2)
    f_n = np.empty_like(xs)
    f_n[0::2] = np.searchsorted(zs, grid, side="left") / zs.size
    f_n[1::2] = np.searchsorted(zs, grid, side="right") / zs.size
    g = tgt.cdf(xs)
    if isinstance(tgt, Sample):
        ys = np.sort(tgt.array())
        g[0::2] = np.searchsorted(ys, grid, side="left") / ys.size
    fig, ax = new_figure(width=5.2, height=4.0)
    ax.fill_between(xs, f_n, g, color=HIGHLIGHT, alpha=0.25, linewidth=0, label="|F_n − F| (DDM)")
    ax.plot(xs, g, color=NEUTRAL, linestyle="--", linewidth=1.2, label=f"target: {tgt.label}")
    ax.plot(xs, f_n, color=PALETTE[0], linewidth=1.6, label=f"benchmark ECDF (n={zs.size})")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("difficulty z")
    ax.set_ylabel("cumulative share of items")
    prefix = f"{name}: " if name else ""
    ax.set_title(wrap_title(f"{prefix}DDM = {value:.3f} vs {tgt.label}", 4.4))
    legend_outside(fig, ax)
    return save_figure(fig, path, formats=formats)


def plot_gap_strip(
    z: ArrayLike,
    path: str | os.PathLike[str],
    *,
    k: int = 5,
    name: str | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """Items as ticks on [0, 1] with the ``k`` largest gaps shaded and labelled."""
    zz = as_unit_sample(z)
    top = largest_gaps(zz, k)
    fig, ax = new_figure(width=7.2, height=2.2)
    ax.vlines(zz, 0.0, 1.0, color=NEUTRAL, linewidth=0.8, alpha=0.8)
    for rank, gap in enumerate(top, start=1):
        if gap.width <= 0:
            continue
        ax.axvspan(
            gap.z_left,
            gap.z_right,
            color=HIGHLIGHT,
            alpha=0.30 if rank == 1 else 0.18,
            linewidth=0,
            label=f"#{rank} [{gap.z_left:.3f}, {gap.z_right:.3f}]  w={gap.width:.3f}",
        )
        # Short rank tags above the strip, staggered so neighbouring gaps stay legible;
        # the full intervals are in the legend.
        y = 1.05 + 0.13 * ((rank - 1) % 3)
        ax.text(gap.midpoint, y, f"#{rank}", ha="center", va="bottom", fontsize=7, color=HIGHLIGHT)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.5)
    ax.set_yticks([])
    ax.grid(False)
    ax.spines["left"].set_visible(False)
    ax.set_xlabel("difficulty z")
    prefix = f"{name}: " if name else ""
    ax.set_title(
        wrap_title(
            f"{prefix}n={zz.size}, Max Gap {max_gap(zz):.3f}, Top-3 {top_k_sum(zz, 3):.3f}, "
            f"Top-5 {top_k_sum(zz, 5):.3f}",
            4.6,
        )
    )
    if any(g.width > 0 for g in top):
        ax.legend(
            loc="center left",
            bbox_to_anchor=(1.0, 0.5),
            fontsize=7,
            title="largest gaps",
            title_fontsize=7,
        )
    return save_figure(fig, path, formats=formats)


def plot_power_curves(
    frame: pl.DataFrame,
    path: str | os.PathLike[str],
    *,
    title: str | None = None,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """Rejection rate vs repeats, one line per progress width, with the α line."""
    need = {"width", "repeats", "rejection_rate", "alpha", "blind", "n_touched"}
    missing = need - set(frame.columns)
    if missing:
        raise ValueError(f"power frame is missing columns {sorted(missing)}")
    if frame.height == 0:
        raise ValueError("power frame is empty")
    fig, ax = new_figure(width=7.6, height=3.8)
    for i, ((w,), part) in enumerate(
        frame.sort("repeats").group_by(["width"], maintain_order=True)
    ):
        blind = bool(part["blind"][0])
        what = "blind: no item touched" if blind else f"touches {int(part['n_touched'][0])} items"
        se = part["mc_se"].to_numpy() if "mc_se" in part.columns else None
        ax.errorbar(
            part["repeats"].to_numpy(),
            part["rejection_rate"].to_numpy(),
            yerr=se,
            marker="o",
            markersize=3.5,
            capsize=2,
            color=PALETTE[i % len(PALETTE)],
            label=f"w = {w:.3f} ({what})",
        )
    alpha = float(frame["alpha"][0])
    ax.axhline(alpha, color=NEUTRAL, linestyle=":", linewidth=1.0, label=f"α = {alpha:g}")
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("re-evaluations per item (repeats)")
    ax.set_ylabel("rejection rate")
    ax.set_title(wrap_title(title or "Detectability of progress centred in the largest gap", 5.0))
    ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5), fontsize=7)
    return save_figure(fig, path, formats=formats)


__all__ = [
    "ecdf_plot_rows",
    "ecdf_points",
    "gap_rows",
    "item_rows",
    "plot_ecdf",
    "plot_gap_strip",
    "plot_power_curves",
    "power_rows",
    "target_cdf_points",
]
