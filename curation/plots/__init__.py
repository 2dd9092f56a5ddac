"""All figures, one style. Each domain keeps its figures in its own module here."""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.plots._settings import PlotSettings
    from curation.plots._style import new_figure, save_figure

_EXPORTS = {
    "PlotSettings": "_settings",
    "new_figure": "_style",
    "save_figure": "_style",
}

__all__ = [
    "PlotSettings",
    "new_figure",
    "save_figure",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
