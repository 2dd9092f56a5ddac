"""params.yaml ``build``: the versioned HF dataset of each benchmark.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``, and the build stage reads :class:`BuildSettings`
itself (the ``…_for(benchmark)`` methods resolve the per-benchmark forms).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Literal

from pydantic import (
    Field,
    PositiveInt,
)

from curation.paths import DIST_ROOT, REVIEW_ACCEPTED_TEMPLATE, REVIEW_DECISIONS
from curation.settings import PathSetting, Section

AUTO = "auto"
"""``build.version: auto``: bump from the release committed in releases/<b>.json."""


class CardSettings(Section):
    """``build.card``: dataset-card fields."""

    language: list[str] = Field(default_factory=list)
    """The card's ``language`` list (e.g. [en])."""
    tags: list[str] = Field(default_factory=list)
    """The card's ``tags``."""
    task_categories: list[str] | dict[str, list[str]] | None = None
    """The card's ``task_categories``: a list, or domain -> list (a domain left out, or an
    empty list: none)."""
    pretty_name: str | dict[str, str] | None = None
    """The card's ``pretty_name``: one, or benchmark -> name (a benchmark left out: none)."""

    def pretty_name_for(self, benchmark: str) -> str | None:
        """``pretty_name`` of ``benchmark``'s card."""
        if isinstance(self.pretty_name, dict):
            return self.pretty_name.get(benchmark)
        return self.pretty_name

    def task_categories_for(self, domain: str) -> tuple[str, ...] | None:
        """``task_categories`` of a card in ``domain`` (None: the card names none)."""
        tasks = self.task_categories
        if isinstance(tasks, dict):
            tasks = tasks.get(domain)
        return tuple(tasks) if tasks else None


SemVer = Annotated[str, Field(pattern=r"^\d+\.\d+\.\d+$")]


class BuildSettings(Section):
    """params.yaml ``build``: the versioned HF dataset of each benchmark."""

    version: Literal["auto"] | SemVer | dict[str, Literal["auto"] | SemVer] = AUTO
    """"auto" (bump from releases/<b>.json), "X.Y.Z", or benchmark -> either (a benchmark
    left out: auto)."""
    initial_version: SemVer = "1.0.0"
    """The version of a benchmark's first build (no release committed yet)."""
    dist: PathSetting = DIST_ROOT
    """Folder the datasets are built into (``<dist>/<b>/<b>-<version>/``)."""
    accepted: Annotated[str, Field(min_length=1)] = REVIEW_ACCEPTED_TEMPLATE
    """Reviewed additions the build publishes (``{benchmark}`` expands; read when the file
    exists)."""
    decisions: PathSetting = REVIEW_DECISIONS
    """The review decision log the card cites (when the file exists)."""
    max_shard_rows: PositiveInt = 100_000
    """Rows per parquet shard of a config."""
    card: CardSettings = CardSettings()
    """Dataset-card fields."""
    repo_id: str | dict[str, str] | None = None
    """The Hub repository the card's ``load_dataset`` example names: an "org/{benchmark}"
    template, or benchmark -> repo id; unset: the one the last ``curate publish
    --repo-id`` recorded in releases/."""
    subsets: bool = True
    """Add the calibrated subsets (stage subsets) as configs."""

    def unknown_benchmarks(self, configured: Collection[str]) -> str | None:
        """``.<key>.<name>: why`` for the first per-benchmark mapping (version, repo_id,
        card.pretty_name) that names no configured benchmark (a typo would be ignored)."""
        for key, value in (
            ("version", self.version),
            ("repo_id", self.repo_id),
            ("card.pretty_name", self.card.pretty_name),
        ):
            for name in value if isinstance(value, dict) else ():
                if name not in configured:
                    return (
                        f".{key}.{name}: not a benchmark of params.yaml (benchmarks: "
                        f"{', '.join(configured)})"
                    )
        return None

    def version_for(self, benchmark: str) -> str:
        """The version requested for ``benchmark``: "auto" or "X.Y.Z"."""
        if isinstance(self.version, dict):
            return self.version.get(benchmark, AUTO)
        return self.version

    def accepted_path(self, benchmark: str) -> Path:
        """The reviewed additions of ``benchmark``."""
        return Path(self.accepted.format(benchmark=benchmark))

    def repo_id_for(self, benchmark: str) -> str | None:
        """The configured Hub repository of ``benchmark`` (None: not configured here)."""
        raw = self.repo_id.get(benchmark) if isinstance(self.repo_id, dict) else self.repo_id
        return raw.format(benchmark=benchmark) if raw else None
