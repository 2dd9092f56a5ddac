"""The one house style for every figure, and the one writer of figure files.

Why one module: a paper figure needs the same things everywhere — 300 dpi raster plus a
vector copy, titles and labels that never clip, labels readable whatever the panel size,
and colours a colour-blind reader can tell apart. Every ``curation.plots`` function
builds its figure with :func:`new_figure` and writes it with :func:`save_figure`, so
those properties hold by construction and :func:`clipped_artists` can check them.

matplotlib is used with the non-interactive Agg backend so figures render on machines
without a display (CI, DVC stages).
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from curation.io.atomic import atomic_path  # noqa: E402
from curation.plots._collisions import text_collisions  # noqa: E402
from curation.plots._settings import DEFAULT_FORMATS, FIGURE_FORMATS  # noqa: E402

# Okabe & Ito (2008), "Color Universal Design": distinguishable under the common forms of
# colour blindness and in greyscale print. Ordered so the first colours differ most.
OKABE_ITO = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "bluish_green": "#009E73",
    "orange": "#E69F00",
    "reddish_purple": "#CC79A7",
    "sky_blue": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}
PALETTE = [
    OKABE_ITO[k]
    for k in ("blue", "orange", "bluish_green", "reddish_purple", "sky_blue", "yellow", "black")
]
"""Series colours (vermillion is kept for :data:`HIGHLIGHT`)."""
HIGHLIGHT = OKABE_ITO["vermillion"]
NEUTRAL = "#3b3b3b"

DPI = 300
"""Resolution of every PNG (print quality); the SVG/PDF beside it are vector."""
MIN_FONT = 6.0
"""Smallest font size (points) any label is allowed to shrink to."""
ROW_INCHES = 0.16
"""Height per labelled row (a model, an item) when a figure grows with its rows."""

_RC: Any = {  # matplotlib types rcParams keys as a Literal; this is a plain mapping
    "figure.dpi": 100,
    "savefig.dpi": DPI,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "axes.prop_cycle": cycler(color=PALETTE),
    "legend.frameon": False,
    "svg.hashsalt": "benchcurate",  # deterministic ids: the SVG changes only with the figure
    "svg.fonttype": "none",  # text stays text: editable, searchable, and fast to write
}


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 3.6):
    """Return ``(fig, axes)`` in the house style, with constrained layout (so titles,
    labels and legends outside the axes make room for themselves instead of clipping)."""
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained")
    for ax in fig.axes:
        _style_axes(ax)
    return fig, axes


def rows_height(n_rows: int, *, base: float = 1.2, minimum: float = 3.2) -> float:
    """Figure height (inches) that gives each of ``n_rows`` labelled rows room for a
    label at :data:`MIN_FONT` or larger: figures grow with the panel instead of shrinking
    its labels."""
    return max(minimum, base + ROW_INCHES * n_rows)


def row_fontsize(n_rows: int, height: float) -> float:
    """A label size (points) at which ``n_rows`` labels fit ``height`` inches of axes."""
    per_row_pt = 72.0 * height / max(n_rows, 1)
    return float(max(MIN_FONT, min(8.0, 0.8 * per_row_pt)))


def wrap_title(text: str, width_inches: float, *, fontsize: float = 10.0) -> str:
    """``text`` wrapped to lines that fit ``width_inches`` at ``fontsize`` (points).

    Constrained layout makes room above and beside a title but cannot make a title
    narrower than its text: a long one would run off the canvas. A character is about
    0.55 em wide in the default sans-serif font.
    """
    chars = max(12, int(width_inches * 72.0 / (0.55 * fontsize)))
    return "\n".join(textwrap.wrap(text, chars, break_on_hyphens=False)) or text


def _style_axes(ax: Any) -> None:
    for key in ("top", "right"):
        ax.spines[key].set_visible(False)
    ax.grid(True, alpha=0.25)


@dataclass(frozen=True)
class SavedFigure:
    """What :func:`save_figure` wrote, and any text it found outside the canvas."""

    files: tuple[Path, ...]
    clipped: tuple[str, ...]
    """Descriptions of artists whose extent leaves the canvas (empty when nothing clips)."""
    collisions: tuple[str, ...] = ()
    """Texts and legends that cover another text or a data mark
    (:func:`curation.plots._collisions.text_collisions`; empty when none does)."""


def clipped_artists(fig: Figure, *, tolerance: float = 1.0, laid_out: bool = False) -> list[str]:
    """Every axes (with its title, labels, tick labels, legend and annotations), figure
    legend and figure text whose window extent leaves the canvas, as short descriptions.

    Runs the layout engine first (unless ``laid_out``), so it reports what the saved file
    shows.
    """
    if not laid_out:
        fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    canvas = fig.bbox
    out: list[str] = []

    def outside(box: Any) -> bool:
        return bool(
            box.x0 < canvas.x0 - tolerance
            or box.y0 < canvas.y0 - tolerance
            or box.x1 > canvas.x1 + tolerance
            or box.y1 > canvas.y1 + tolerance
        )

    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        titles = [getattr(ax, name, None) for name in ("title", "_left_title", "_right_title")]
        for artist in [*titles, ax.xaxis.label, ax.yaxis.label]:
            if artist is None or not (artist.get_visible() and artist.get_text()):
                continue
            if outside(artist.get_window_extent(renderer)):
                out.append(f"axes {i} {artist.get_text()!r}")
        for text in ax.texts:
            if text.get_visible() and text.get_text() and outside(text.get_window_extent(renderer)):
                out.append(f"axes {i} text {text.get_text()!r}")
        box = ax.get_tightbbox(renderer)
        if box is not None and outside(box):
            out.append(f"axes {i} ({ax.get_title() or 'untitled'}) tight bbox {box.bounds}")
    for artist in [*fig.legends, *fig.texts]:
        if artist.get_visible() and outside(artist.get_window_extent(renderer)):
            out.append(f"figure {type(artist).__name__}")
    suptitle = getattr(fig, "_suptitle", None)  # matplotlib keeps it out of fig.texts
    if suptitle is not None and outside(suptitle.get_window_extent(renderer)):
        out.append(f"suptitle {suptitle.get_text()!r}")
    return out


def legend_outside(fig: Figure, ax: Any, *, ncols: int = 2, fontsize: float = 8) -> None:
    """The legend of ``ax`` under the figure (constrained layout makes room), where it can
    cover no curve or bar: a legend inside the axes hid GSM8K's ECDF, whose items sit in a
    corner any fixed legend place also takes."""
    handles, labels = ax.get_legend_handles_labels()
    if labels:
        fig.legend(
            handles,
            labels,
            loc="outside lower center",
            ncols=min(ncols, len(labels)),
            fontsize=fontsize,
            frameon=False,
        )


def fit_titles(fig: Figure) -> None:
    """Rewrap every centred axes title that runs off the canvas to the width it has
    (``fig`` must have been laid out, e.g. by ``fig.draw_without_rendering()``).

    :func:`wrap_title` guesses a width before layout; tick labels (long model names) can
    leave the axes narrower than guessed. After one layout pass, each title that still
    leaves the canvas is rewrapped to twice the distance from its centre to the nearer
    canvas edge, and the layout is redone.
    """
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    canvas = fig.bbox
    changed = False
    for ax in fig.axes:
        title = ax.title
        text = title.get_text()
        if not text or not title.get_visible():
            continue
        box = title.get_window_extent(renderer)
        if box.x0 >= canvas.x0 and box.x1 <= canvas.x1:
            continue
        centre = 0.5 * (box.x0 + box.x1)
        room = 2.0 * min(centre - canvas.x0, canvas.x1 - centre) / fig.dpi
        size = float(title.get_fontsize())
        title.set_text(wrap_title(" ".join(text.split()), 0.95 * room, fontsize=size))
        changed = True
    if changed:
        fig.draw_without_rendering()


def figure_paths(path: str | os.PathLike[str], formats: Sequence[str]) -> tuple[Path, ...]:
    """The files one figure is written to: ``path`` with each format's suffix."""
    base = Path(path)
    return tuple(base.with_suffix(f".{fmt}") for fmt in formats)


def save_figure(
    fig: Figure,
    path: str | os.PathLike[str],
    *,
    formats: Sequence[str] = DEFAULT_FORMATS,
) -> SavedFigure:
    """Write ``fig`` beside ``path`` in each of ``formats`` (atomically) and close it.

    ``path`` names the PNG (its suffix is replaced per format). File metadata carries no
    date, so an unchanged figure writes identical SVG/PDF bytes.
    """
    unknown = [f for f in formats if f not in FIGURE_FORMATS]
    if unknown:
        raise ValueError(f"unknown figure format(s) {unknown}; known: {list(FIGURE_FORMATS)}")
    try:
        fig.draw_without_rendering()
        fit_titles(fig)
        clipped = tuple(clipped_artists(fig, laid_out=True))
        collisions = tuple(text_collisions(fig, laid_out=True))
        # The layout is final (in figure fractions, so the same at any dpi): freeze it,
        # so each savefig below renders instead of laying the figure out once more.
        fig.set_layout_engine("none")
        files = figure_paths(path, formats)
        with plt.rc_context(_RC):
            for fmt, out in zip(formats, files, strict=True):
                meta: dict[str, Any] = {"svg": {"Date": None}, "pdf": {"CreationDate": None}}.get(
                    fmt, {}
                )
                with atomic_path(out) as tmp:
                    fig.savefig(tmp, format=fmt, dpi=DPI, metadata=meta)
    finally:
        plt.close(fig)
    return SavedFigure(files=files, clipped=clipped, collisions=collisions)
