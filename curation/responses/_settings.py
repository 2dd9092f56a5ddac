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

from curation.settings import FilePath, Section


class ResponsesSettings(Section):
    """``benchmarks.<b>.responses``: the response matrix to import."""

    path: FilePath
    """The matrix file (CSV, JSONL, parquet)."""
    format: str | None = None
    """Reader for ``path`` (csv, jsonl, json, parquet); unset: from its name."""
    layout: Literal["wide", "long"] = "wide"
    """wide: one row per model, one column per item; long: one row per (model, item)
    cell, or per sample."""
    model_column: str = "model"
    """Wide layout: the column that names the model."""
    columns: dict[str, str] = Field(default_factory=dict)
    """Long layout: target column (model, item, n_trials, n_correct, correct) -> source."""
    n_trials: Annotated[int, Field(ge=1, le=1_000_000)] = 1
    """Wide layout: trials behind each cell (cells are 0/1 or success rates)."""
    aggregate: Literal["none", "sum"] = "none"
    """Long rows repeating a (model, item) cell: none = an error naming both rows; sum =
    add them up (the count is printed)."""
    source: Literal["collected", "imported", "simulated"] = "imported"
    """Where the responses came from (recorded on every row; simulated never publishes)."""
    protocol: dict[str, Any] = Field(default_factory=dict)
    """How the responses were produced (prompt_template, system_prompt, temperature,
    max_tokens, seed, model_revision), recorded on every row."""


class WarnSettings(Section):
    """``check.warn``: when a diagnostic becomes a warning.

    Per-model and per-item reversal rates are judged against the benchmark's own overall
    rate (a model is named when its rate is ``factor`` times the overall one), since the
    absolute level depends on how many cells agree anyway.
    """

    item_informativeness_below: NonNegativeFloat = 0.5
    """Warn when fewer than this share of items separate the models (not all-solved,
    not none-solved)."""
    model_informativeness_below: NonNegativeFloat = 1.0
    """Warn when fewer than this share of models score strictly between 0% and 100%."""
    model_reversal_above: NonNegativeFloat = 0.15
    """Warn when the model reversal rate (model pairs out of accuracy order) is above this."""
    item_reversal_above: NonNegativeFloat = 0.25
    """Warn when the item reversal rate (item pairs out of difficulty order) is above this."""
    per_model_reversal_factor: PositiveFloat = 1.5
    """Name a model whose reversal rate is this many times the benchmark's."""
    per_item_reversal_factor: PositiveFloat = 2.5
    """Name an item whose reversal rate is this many times the benchmark's."""


class CheckSettings(Section):
    """params.yaml ``check``."""

    list_limit: PositiveInt = 10
    """How many models/items each list in the report names."""
    warn: WarnSettings = WarnSettings()
