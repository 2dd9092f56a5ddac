"""params.yaml ``plots``: how every figure is written.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import (
    Field,
    field_validator,
)

from curation.settings import Section

FigureFormat = Literal["png", "svg", "pdf"]
"""A figure file format :func:`curation.plots.save_figure` writes."""
FIGURE_FORMATS: tuple[FigureFormat, ...] = get_args(FigureFormat)
DEFAULT_FORMATS: tuple[FigureFormat, ...] = ("png", "svg")
"""``plots.format``'s default, and the formats a figure function writes unless told."""


def _default_formats() -> list[FigureFormat]:
    return list(DEFAULT_FORMATS)


class PlotSettings(Section):
    """params.yaml ``plots``: how every figure is written (curation/plots/_style.py)."""

    format: list[FigureFormat] = Field(default_factory=_default_formats, min_length=1)
    """Files written per figure, beside each other (same stem). png and svg are required:
    dvc.yaml declares both as outputs, and the README, reports and cards link the PNGs;
    pdf is optional. Not a DVC params dependency (a format change must not refit
    anything): after adding pdf, `dvc repro -f -s <stage>` writes the PDFs."""

    @field_validator("format")
    @classmethod
    def _declared_outputs(cls, value: list[str]) -> list[str]:
        missing = [f for f in ("png", "svg") if f not in value]
        if missing:
            raise ValueError(f"must include {' and '.join(missing)} (declared outputs in dvc.yaml)")
        return list(dict.fromkeys(value))
