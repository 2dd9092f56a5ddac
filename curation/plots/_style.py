"""The one house style for every figure, and an atomic PNG writer.

matplotlib is used with the non-interactive Agg backend so figures render on machines
without a display (CI, DVC stages).
"""

from __future__ import annotations

import os
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from cycler import cycler  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from curation.io.atomic import atomic_path  # noqa: E402

PALETTE = ["#1f5f8b", "#d1495b", "#edae49", "#00798c", "#66a182", "#8d6a9f", "#30343f"]
HIGHLIGHT = "#d1495b"
NEUTRAL = "#30343f"

_RC: Any = {  # matplotlib types rcParams keys as a Literal; this is a plain mapping
    "figure.dpi": 110,
    "savefig.dpi": 110,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "axes.prop_cycle": cycler(color=PALETTE),
    "legend.frameon": False,
}


def new_figure(nrows: int = 1, ncols: int = 1, *, width: float = 6.4, height: float = 3.6):
    """Return ``(fig, axes)`` in the house style."""
    with plt.rc_context(_RC):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained")
    fig.set_layout_engine("constrained")
    for ax in fig.axes:
        _style_axes(ax)
    return fig, axes


def _style_axes(ax: Any) -> None:
    for key in ("top", "right"):
        ax.spines[key].set_visible(False)
    ax.grid(True, alpha=0.25)


def save_png(fig: Figure, path: str | os.PathLike[str]) -> None:
    """Write ``fig`` to ``path`` atomically as PNG and close it."""
    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format="png")
    finally:
        plt.close(fig)
