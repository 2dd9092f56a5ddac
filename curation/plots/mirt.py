"""Figures for the multidimensional IRT: loadings, models in ability space, choice of d."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np
from adjustText import adjust_text

from curation.irt.mirt import MirtReport
from curation.plots._collisions import GUIDE, collision_pairs
from curation.plots._style import (
    DEFAULT_FORMATS,
    HIGHLIGHT,
    NEUTRAL,
    PALETTE,
    SavedFigure,
    legend_outside,
    new_figure,
    row_fontsize,
    rows_height,
    save_figure,
    wrap_title,
)
from curation.report.panel import SHOWN_EXTREMES, extremes, many_models


def _dims(d: int) -> list[str]:
    return [f"dim {k + 1}" for k in range(d)]


def plot_mirt_loadings(
    report: MirtReport, path: str | os.PathLike[str], *, formats: Sequence[str] = DEFAULT_FORMATS
) -> SavedFigure:
    """Left: benchmarks x dimensions, mean loading (annotated). Right: every item's
    loadings, items grouped by benchmark and sorted by primary dimension."""
    fit = report.analysis
    profiles = report.profiles[report.analysis_d]
    fig, (left, right) = new_figure(1, 2, width=10.0, height=4.2)
    mean = np.array([p.mean_loading for p in profiles])
    lim = float(np.nanmax(np.abs(fit.loadings))) or 1.0
    mlim = float(np.nanmax(np.abs(mean))) or 1.0
    im = left.imshow(mean, cmap="RdBu_r", vmin=-mlim, vmax=mlim, aspect="auto")
    left.set_yticks(range(len(profiles)), labels=[p.benchmark for p in profiles])
    left.set_xticks(range(fit.d), labels=_dims(fit.d))
    left.grid(False)
    for i in range(mean.shape[0]):
        for k in range(mean.shape[1]):
            dark = abs(mean[i, k]) > 0.6 * mlim
            left.text(
                k,
                i,
                f"{mean[i, k]:.2f}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if dark else NEUTRAL,
            )
    fig.colorbar(im, ax=left, shrink=0.8, label="mean loading")
    chosen = (
        "chosen"
        if report.analysis_d == report.chosen
        else f"exploratory, chosen d = {report.chosen}"
    )
    left.set_title(f"Benchmark mean loadings\n(d = {fit.d}, {chosen})")

    order, bounds, names = [], [], []
    primary = np.argmax(np.abs(fit.loadings), axis=1)
    for b, name in enumerate(fit.benchmarks):
        idx = np.flatnonzero(fit.item_benchmark == b)
        if idx.size == 0:
            continue
        idx = idx[np.lexsort((-np.abs(fit.loadings[idx]).max(axis=1), primary[idx]))]
        order.extend(idx.tolist())
        bounds.append(len(order))
        names.append(name)
    mat = fit.loadings[order].T
    im2 = right.imshow(
        mat, cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto", interpolation="nearest"
    )
    right.set_yticks(range(fit.d), labels=_dims(fit.d))
    right.grid(False)
    start = 0
    ticks = []
    for end in bounds:
        ticks.append((start + end - 1) / 2)
        if end < len(order):
            right.axvline(end - 0.5, color=NEUTRAL, lw=0.8)
        start = end
    right.set_xticks(ticks, labels=names)
    right.set_xlabel("items (by benchmark, then primary dimension)")
    fig.colorbar(im2, ax=right, shrink=0.8, label="loading")
    right.set_title(f"Item loadings ({report.rotation} rotation)")
    return save_figure(fig, path, formats=formats)


def _drop_covering_labels(fig: Any, labels: list[Any], leaders: list[Any]) -> int:
    """Remove each model name (and its leader line) that still covers another name, an
    arrow or a leader line after adjustText, worst first, until none does; returns how
    many. A dense panel keeps every point; a name that would hide another is left out.
    One layout pass: the conflicts are found once (removing a name moves nothing else)."""
    names = {id(t) for t in labels}
    leader_of = {id(getattr(p, "patchA", None)): p for p in leaders}
    conflicts: list[set[int]] = []
    for _, a, b, _how in collision_pairs(fig):
        involved = {id(x) for x in (a, b) if id(x) in names}
        if involved:  # a name on a benchmark arrow: only dropping the name helps
            conflicts.append(involved)
    by_id = {id(t): t for t in labels}
    dropped = 0
    while conflicts:
        counts: dict[int, int] = {}
        for pair in conflicts:
            for key in pair:
                counts[key] = counts.get(key, 0) + 1
        worst = max(counts, key=lambda k: (counts[k], -labels.index(by_id[k])))
        text = by_id[worst]
        text.remove()
        if (leader := leader_of.get(worst)) is not None:
            leader.remove()
        dropped += 1
        conflicts = [pair for pair in conflicts if worst not in pair]
    return dropped


def _labelled(theta: np.ndarray, n: int) -> list[int]:
    """The models a figure names: all of a small panel; of a leaderboard
    (:mod:`curation.report.panel`) the strongest and weakest few on each of the first
    two dimensions, so the labels (and adjustText's work) stay bounded."""
    if not many_models(n):
        return list(range(n))
    k = max(1, SHOWN_EXTREMES // 2)
    picked = [j for dim in range(min(theta.shape[1], 2)) for j in extremes(theta[:, dim], k)]
    return sorted(set(picked))


def _abilities_1d(
    report: MirtReport, path: str | os.PathLike[str], formats: Sequence[str]
) -> SavedFigure:
    """d = 1: one labelled row per model; a leaderboard: a histogram, the extremes named."""
    fit = report.analysis
    theta = fit.theta
    n = len(fit.models)
    if many_models(n):
        fig, ax = new_figure(width=6.4, height=3.6)
        ax.hist(theta[:, 0], bins=40, color=PALETTE[0], edgecolor="white")
        named = extremes(theta[:, 0], max(1, SHOWN_EXTREMES // 2))
        lines = [f"{fit.models[j][:28]}  {theta[j, 0]:+.2f}" for j in named]
        ax.text(1.02, 1.0, "\n".join(lines), transform=ax.transAxes, va="top", ha="left",
                fontsize=6, color=NEUTRAL, family="monospace")  # fmt: skip
        ax.set_xlabel("ability (dim 1)")
        ax.set_ylabel("models")
        ax.set_title(f"{n} models' abilities (d = 1); strongest and weakest named")
        return save_figure(fig, path, formats=formats)
    height = rows_height(n)
    fig, ax = new_figure(width=6.4, height=height)
    order = np.argsort(theta[:, 0])
    ax.plot(theta[order, 0], np.arange(n), "o", ms=4, color=PALETTE[0])
    ax.set_yticks(
        np.arange(n),
        labels=[fit.models[j] for j in order],
        fontsize=row_fontsize(n, height - 1.0),
    )
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel("ability (dim 1)")
    ax.set_title("Model abilities (d = 1)")
    return save_figure(fig, path, formats=formats)


def plot_mirt_models(
    report: MirtReport, path: str | os.PathLike[str], *, formats: Sequence[str] = DEFAULT_FORMATS
) -> SavedFigure:
    """Models on the first two dimensions, labelled; arrows: benchmark mean loadings.

    Model labels are moved apart by adjustText (with a leader line to their point) so a
    dense panel stays legible; the figure is square-ish and grows with the panel. A
    leaderboard (more than :data:`curation.report.panel.LISTED_MODELS` models) is drawn
    as a density with only its extremes named: a label per model would not be read, and
    adjustText's solver grows with the labels (4,000 labels: gigabytes).
    """
    fit = report.analysis
    theta = fit.theta
    n = len(fit.models)
    if fit.d == 1:
        return _abilities_1d(report, path, formats)
    many = many_models(n)
    side = 9.0 if many else min(11.0, max(6.4, 3.0 + 0.12 * n))
    fig, ax = new_figure(width=side + 0.6, height=side)
    ax.axhline(0, color=NEUTRAL, lw=0.5, gid=GUIDE)  # faint guides labels may cross
    ax.axvline(0, color=NEUTRAL, lw=0.5, gid=GUIDE)
    if many:
        cells = ax.hexbin(theta[:, 0], theta[:, 1], gridsize=45, bins="log", cmap="Blues",
                          mincnt=1, zorder=2)  # fmt: skip
        fig.colorbar(cells, ax=ax, shrink=0.6, label="models per cell")
    else:
        ax.scatter(theta[:, 0], theta[:, 1], s=14, color=PALETTE[0], zorder=3)
    profiles = report.profiles[report.analysis_d]
    span = float(np.max(np.abs(theta[:, :2]))) or 1.0
    vecs = np.array([p.mean_loading[:2] for p in profiles])
    scale = 0.8 * span / (float(np.max(np.linalg.norm(vecs, axis=1))) or 1.0)
    for k, p in enumerate(profiles):
        color = PALETTE[(k + 1) % len(PALETTE)]
        v = vecs[k] * scale
        ax.annotate(
            "",
            xy=(v[0], v[1]),
            xytext=(0, 0),
            arrowprops={"arrowstyle": "->", "color": color, "lw": 1.6},
        )
        # named in the legend: a name at the arrow head landed on model labels and arrows
        ax.plot([], [], color=color, lw=1.6, label=p.benchmark)
    pad = 0.12 * span
    ax.set_xlim(min(theta[:, 0].min(), vecs[:, 0].min() * scale) - pad,
                max(theta[:, 0].max(), vecs[:, 0].max() * scale) + pad)  # fmt: skip
    ax.set_ylim(min(theta[:, 1].min(), vecs[:, 1].min() * scale) - pad,
                max(theta[:, 1].max(), vecs[:, 1].max() * scale) + pad)  # fmt: skip
    size = 7.0 if n <= 40 else 6.0
    named = _labelled(theta, n)
    if many:
        ax.scatter(theta[named, 0], theta[named, 1], s=10, color=HIGHLIGHT, zorder=3)
    labels = [ax.text(theta[j, 0], theta[j, 1], fit.models[j], fontsize=size, color=NEUTRAL)
              for j in named]  # fmt: skip
    # Points the labels must keep clear of: the named models, and points along each arrow.
    along = np.linspace(0.05, 1.0, 24)[:, None, None] * (vecs[None, :, :2] * scale)
    avoid = np.concatenate([theta[named, :2], along.reshape(-1, 2)])
    _, leaders = adjust_text(
        labels,
        x=avoid[:, 0],
        y=avoid[:, 1],
        ax=ax,
        arrowprops={"arrowstyle": "-", "color": NEUTRAL, "lw": 0.4, "alpha": 0.6},
        expand=(1.1, 1.35),
        force_text=(0.2, 0.4),
        # A fixed number of iterations: adjustText's default stops after 1 s of wall time,
        # so the layout (and the file DVC hashes) depended on the machine's load.
        iter_lim=400,
    )
    legend_outside(fig, ax, ncols=min(len(profiles), 4))
    ax.set_xlabel("ability, dim 1")
    ax.set_ylabel("ability, dim 2")
    extra = f" (of {fit.d})" if fit.d > 2 else ""
    who = (
        f"density of {n} models; named: the {len(named)} strongest and weakest on each axis"
        if many
        else f"{n} models"
    )

    def title(left_out: int) -> str:
        unnamed = f"; {left_out} names left out where they would cover others" if left_out else ""
        return wrap_title(
            f"{who} in dimensions 1–2{extra}, {report.rotation} rotation; "
            f"arrows: benchmark mean loadings{unnamed}",
            side,
        )

    # The title's final length sets the layout the names are checked in: settle it with
    # the longest count first, then again if the real count wraps it differently.
    shown = len(labels)
    ax.set_title(title(shown))
    left_out = 0
    for _ in range(4):  # checked in the layout of the title it ends with
        left_out += _drop_covering_labels(fig, labels, leaders)
        if left_out == shown:
            break
        shown = left_out
        ax.set_title(title(shown))
    return save_figure(fig, path, formats=formats)


def plot_mirt_selection(
    report: MirtReport, path: str | os.PathLike[str], *, formats: Sequence[str] = DEFAULT_FORMATS
) -> SavedFigure:
    """Held-out log likelihood per cell (with paired SE of the gap to the best) and BIC by d."""
    rows = report.selection.rows
    d = np.array([r.d for r in rows])
    ll = np.array([r.heldout_loglik for r in rows])
    se = np.array([r.heldout_gap_se for r in rows])
    fig, (left, right) = new_figure(1, 2, width=9.0, height=3.4)
    left.errorbar(d, ll, yerr=se, marker="o", color=PALETTE[0], capsize=3)
    left.scatter(
        [report.chosen],
        [ll[d == report.chosen][0]],
        s=90,
        facecolors="none",
        edgecolors=PALETTE[1],
        zorder=4,
        label=f"chosen d = {report.chosen}",
    )
    left.set_xticks(d)
    left.set_xlabel("d")
    left.set_ylabel("held-out log likelihood per cell")
    left.set_title(wrap_title("Held-out cells (bars: paired SE of gap to best)", 4.0))
    left.legend()
    bic = np.array([r.bic for r in rows])
    right.plot(d, bic, marker="o", color=PALETTE[3])
    right.set_xticks(d)
    right.set_xlabel("d")
    right.set_ylabel("BIC")
    right.set_title(f"BIC (minimum at d = {report.selection.d_bic})")
    return save_figure(fig, path, formats=formats)
