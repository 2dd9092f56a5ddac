"""All figures, one style. Each domain keeps its figures in its own module here."""

from curation.plots._style import new_figure, save_figure

__all__ = ["new_figure", "save_figure"]
