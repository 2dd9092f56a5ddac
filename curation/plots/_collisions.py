"""Text that covers text or data: the second half of the figure check (the first is
:func:`curation.plots._style.clipped_artists`, text off the canvas).

A label printed on top of the bars it describes, a legend over the curve it names, two
model names on one spot, or a name crossed by another name's leader line: each one hides
what the figure is for. After layout, each axes' texts and legend are compared with

* each other (their window boxes may not overlap),
* the data marks: bars and other patches, line and step curves, and the arrows (leader
  lines) of annotations other than the text's own. Scatter points are not: a labelled
  scatter puts each name beside its point.

Reference lines that span the axes (``axhline``/``axvline``: a threshold, a target) are
data too: a label may sit beside its line, not on it. Grid lines and spines are not, nor
a translucent band (a highlighted gap a label names). The axis labels count as text (a
legend under the axes must clear them).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch
from matplotlib.path import Path
from matplotlib.text import Annotation, Text
from matplotlib.transforms import Bbox

GUIDE = "guide"
"""``gid`` of a faint reference line (a zero line) that labels may cross, as the grid."""

PAD = 1.0
"""Pixels a box is shrunk by before comparing: touching is not covering."""


def _box(artist: Any, renderer: Any) -> Bbox | None:
    box = artist.get_window_extent(renderer)
    if box.width <= 2 * PAD or box.height <= 2 * PAD:
        return None
    return Bbox.from_extents(box.x0 + PAD, box.y0 + PAD, box.x1 - PAD, box.y1 - PAD)


def _texts(ax: Axes) -> list[Text]:
    return [t for t in ax.texts if t.get_visible() and t.get_text().strip()]


def _label(artist: Any) -> str:
    if isinstance(artist, Text) and artist.get_text().strip():
        return repr(artist.get_text().strip().splitlines()[0][:40])
    if isinstance(artist, Annotation):
        return "an arrow"
    return type(artist).__name__.lower()


def _line_paths(ax: Axes) -> list[tuple[Any, Path]]:
    """Display-space paths of the axes' data lines (markers as their points)."""
    out: list[tuple[Any, Path]] = []
    for line in ax.lines:
        if not line.get_visible() or not isinstance(line, Line2D) or line.get_gid() == GUIDE:
            continue
        path = line.get_transform().transform_path(line.get_path())
        if line.get_linestyle() not in ("None", "none", "", " "):
            out.append((line, path))
        elif line.get_marker() not in (None, "None", "none", ""):
            out.append((line, Path(path.vertices)))  # points only
    return out


def _crosses(path: Path, box: Bbox) -> bool:
    """Whether a drawn path passes through the box (a segment, or a point inside it)."""
    vertices = np.asarray(path.vertices, dtype=float)
    if len(vertices) == 0:
        return False
    inside = (
        (vertices[:, 0] > box.x0)
        & (vertices[:, 0] < box.x1)
        & (vertices[:, 1] > box.y0)
        & (vertices[:, 1] < box.y1)
    )
    if bool(np.any(inside)):
        return True
    return len(vertices) > 1 and bool(path.intersects_bbox(box, filled=False))


def _marks(ax: Axes, renderer: Any) -> list[tuple[Any, Bbox | Path]]:
    """The data marks of an axes: patch boxes, line paths, scatter points, arrows."""
    marks: list[tuple[Any, Bbox | Path]] = []
    for patch in ax.patches:
        if not patch.get_visible():
            continue
        if isinstance(patch, FancyArrowPatch):  # a leader line (adjustText): owned by its label
            owner = getattr(patch, "patchA", None) or patch
            marks.append((owner, patch.get_transform().transform_path(patch.get_path())))
            continue
        alpha = patch.get_alpha()
        if alpha is not None and alpha < 0.5:
            continue  # a translucent band (a highlighted gap) is background a label may name
        if isinstance(patch, Patch) and patch.get_fill():
            box = patch.get_window_extent(renderer)
            if box.width > 0 and box.height > 0:
                marks.append((patch, box))
    marks += _line_paths(ax)
    for text in ax.texts:  # every annotation's arrow: leader lines have no text
        arrow = getattr(text, "arrow_patch", None)
        if isinstance(text, Annotation) and arrow is not None and arrow.get_visible():
            marks.append((text, arrow.get_transform().transform_path(arrow.get_path())))
    return marks


def _starts_in(mark: Bbox | Path, box: Bbox, slack: float = 6.0) -> bool:
    """Whether an arrow starts or ends at the box (a leader line drawn from that label)."""
    if not isinstance(mark, Path):
        return False
    vertices = np.asarray(mark.vertices, dtype=float)
    if len(vertices) == 0:
        return False
    grown = Bbox.from_extents(box.x0 - slack, box.y0 - slack, box.x1 + slack, box.y1 + slack)
    ends = (vertices[0], vertices[-1])
    return any(grown.contains(float(x), float(y)) for x, y in ends)


def _hits(mark: Bbox | Path, box: Bbox) -> bool:
    if isinstance(mark, Bbox):
        return bool(mark.overlaps(box))
    return _crosses(mark, box)


def collision_pairs(fig: Figure, *, laid_out: bool = False) -> list[tuple[int, Any, Any, str]]:
    """(axes index, text or legend, what it overlaps or covers, "overlaps" | "covers") for
    every collision (see the module doc). Runs the layout engine first unless
    ``laid_out``. A leader line's owner is its label, so a caller can drop the label."""
    if not laid_out:
        fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    out: list[tuple[int, Any, Any, str]] = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        boxes: list[tuple[Any, Bbox]] = []
        # the axis labels: a legend placed under the axes must clear the x label
        for label in (ax.xaxis.label, ax.yaxis.label):
            if label.get_visible() and label.get_text().strip():
                box = _box(label, renderer)
                if box is not None:
                    boxes.append((label, box))
        n_axis_labels = len(boxes)
        for text in _texts(ax):
            box = _box(text, renderer)
            if box is not None:
                boxes.append((text, box))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            box = _box(legend, renderer)
            if box is not None:
                boxes.append((legend, box))
        for (a, box_a), (b, box_b) in combinations(boxes, 2):
            if box_a.overlaps(box_b):
                out.append((i, a, b, "overlaps"))
        marks = _marks(ax, renderer)
        for artist, box in boxes[n_axis_labels:]:
            for owner, mark in marks:
                if owner is artist or (isinstance(owner, Annotation) and _starts_in(mark, box)):
                    continue  # an annotation's own arrow, or a leader line from this label
                if _hits(mark, box):
                    out.append((i, artist, owner, "covers"))
    return out


def text_collisions(fig: Figure, *, laid_out: bool = False) -> list[str]:
    """Every text or legend of an axes that covers another text or a data mark, as short
    descriptions (empty when none does), one per artist and mark it covers. Runs the
    layout engine first unless ``laid_out``."""
    return [
        f"axes {i}: {_label(a)} {how} {_label(b)}"
        for i, a, b, how in collision_pairs(fig, laid_out=laid_out)
    ]
