"""params.yaml ``build``: the versioned HF dataset of each benchmark.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    Field,
    PositiveInt,
)

from curation.settings import Section


class CardSettings(Section):
    """``build.card``: dataset-card fields."""

    language: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    task_categories: list[str] | dict[str, list[str]] | None = None
    pretty_name: str | dict[str, str] | None = None


SemVer = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]


class BuildSettings(Section):
    """params.yaml ``build``: the versioned HF dataset of each benchmark."""

    version: Literal["auto"] | SemVer | dict[str, Literal["auto"] | SemVer] = "auto"
    initial_version: SemVer = "1.0.0"
    dist: str = "dist"
    accepted: str | None = None
    decisions: str | None = None
    max_shard_rows: PositiveInt = 100_000
    card: CardSettings = CardSettings()
    repo_id: str | dict[str, str] | None = None
    subsets: bool = True
