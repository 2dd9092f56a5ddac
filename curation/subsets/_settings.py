"""params.yaml ``subsets``: calibrated subsets (SPEC §6).

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    Field,
    PositiveInt,
)

from curation.settings import Section, TargetSpec, default_targets


class BenchmarkSubsetsSettings(Section):
    """``subsets.benchmarks.<b>``: one benchmark's overrides."""

    sizes: list[PositiveInt] | PositiveInt | None = None
    targets: list[TargetSpec] | None = None
    reference: str | dict[str, Any] | None = None


class SubsetsSettings(Section):
    """params.yaml ``subsets``: calibrated subsets by quantile matching (SPEC §6)."""

    sizes: list[PositiveInt] | PositiveInt = Field(default_factory=lambda: [50, 100])
    """Subset sizes; each must not exceed the benchmark's number of items."""
    targets: list[TargetSpec] = Field(default_factory=default_targets, min_length=1)
    reference: str | dict[str, Any] | None = None
    """{kind: domain} | {kind: benchmarks, benchmarks: [...]} | {kind: models, ...} | none."""
    benchmarks: dict[str, BenchmarkSubsetsSettings] = Field(default_factory=dict)
