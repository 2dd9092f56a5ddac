"""``benchmarks.<b>.responses`` (the matrix to import) and the ``check`` section.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
)

from curation.settings import Section


class ResponsesSettings(Section):
    """``benchmarks.<b>.responses``: the response matrix to import."""

    path: str
    format: str | None = None
    layout: Literal["wide", "long"] = "wide"
    model_column: str = "model"
    columns: dict[str, str] = Field(default_factory=dict)
    """Long layout: target column (model, item, n_trials, n_correct, correct) -> source."""
    n_trials: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    """Wide layout: trials behind each cell (cells are 0/1 or success rates)."""
    aggregate: Literal["none", "sum"] = "none"
    """Long rows repeating a (model, item) cell: none = an error naming both rows; sum =
    add them up (the count is printed)."""
    source: Literal["collected", "imported", "simulated"] = "imported"
    protocol: dict[str, Any] = Field(default_factory=dict)


class WarnSettings(Section):
    """``check.warn``: when a diagnostic becomes a warning (defaults in curation.responses)."""

    item_informativeness_below: NonNegativeFloat | None = None
    model_informativeness_below: NonNegativeFloat | None = None
    model_reversal_above: NonNegativeFloat | None = None
    item_reversal_above: NonNegativeFloat | None = None
    per_model_reversal_factor: PositiveFloat | None = None
    per_item_reversal_factor: PositiveFloat | None = None


class CheckSettings(Section):
    """params.yaml ``check``."""

    list_limit: PositiveInt = 10
    """How many models/items each list in the report names."""
    warn: WarnSettings = WarnSettings()
