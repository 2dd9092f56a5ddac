"""All figures, one style. Each domain keeps its figures in its own module here."""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.plots._settings import DEFAULT_FORMATS, FIGURE_FORMATS, FigureFormat, PlotSettings
    from curation.plots._style import new_figure, save_figure

_EXPORTS = {
    "DEFAULT_FORMATS": "_settings",
    "FIGURE_FORMATS": "_settings",
    "FigureFormat": "_settings",
    "PlotSettings": "_settings",
    "new_figure": "_style",
    "save_figure": "_style",
}

__all__ = [
    "DEFAULT_FORMATS",
    "FIGURE_FORMATS",
    "FigureFormat",
    "PlotSettings",
    "new_figure",
    "save_figure",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
