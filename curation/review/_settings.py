"""params.yaml ``review``: where the human review queue lives, what it seeds and exports.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``, and the review code reads this model itself.
Paths with ``{benchmark}`` are templates, expanded per benchmark by the methods below.
Kept free of the review implementation (and of polars), so reading params stays cheap.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, Field, WithJsonSchema, field_validator

from curation.candidate_values import (
    BASELINE,
    BENCHFILL,
    CALIBRATED,
    INSERTED,
    JUDGE_REJECTED,
    CandidateStatus,
    Method,
)
from curation.paths import (
    ITEMS_TEMPLATE,
    JUDGED_TEMPLATE,
    REVIEW_ACCEPTED_TEMPLATE,
    REVIEW_DB,
    REVIEW_DECISIONS,
    REVIEW_EDITED_TEMPLATE,
    REVIEW_RECALIBRATED_TEMPLATE,
)
from curation.settings import PathSetting, Section

DEFAULT_GUIDELINES = Path(__file__).resolve().parent / "guidelines.md"
"""The built-in reviewer guidelines (``review.guidelines: null``)."""
TOKEN_ENV = "CURATE_REVIEW_TOKEN"
"""Environment variable holding the review server's access token."""

_ONE_OR_MORE_PATHS: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "format": "path"},
        {"type": "array", "items": {"type": "string", "format": "path"}, "minItems": 1},
    ]
}
"""``review.candidates`` in the file: one path, or a non-empty list of them."""
Reviewers = Annotated[int, Field(ge=1, le=20)]
"""How many distinct reviewers must agree on an item."""


def _per_benchmark(path: str) -> str:
    if "{benchmark}" not in path:
        raise ValueError("expected a path containing {benchmark}")
    return path


BenchmarkTemplate = Annotated[str, AfterValidator(_per_benchmark)]
"""A path containing ``{benchmark}``, expanded per benchmark."""


class ReviewSettings(Section):
    """params.yaml ``review``: paths and seeding rules of the human review queue."""

    db: PathSetting = REVIEW_DB
    """The SQLite queue (WAL). Local working state, not versioned; the exported files are
    the record."""
    candidates: Annotated[
        list[PathSetting],
        Field(min_length=1),
        WithJsonSchema(_ONE_OR_MORE_PATHS),
    ] = [Path(JUDGED_TEMPLATE), Path(REVIEW_RECALIBRATED_TEMPLATE)]
    """Candidate tables (schema ``candidate``) that ``curate review seed`` reads by default
    (one path or a list); ``{benchmark}`` expands over params' benchmarks and missing files
    are skipped. The recalibrated edits come last, so an edited item returns as a pending
    version."""
    items: str = ITEMS_TEMPLATE
    """Where a benchmark's parents (original items) are, for the side-by-side view."""
    seed_statuses: list[CandidateStatus] = [INSERTED, CALIBRATED, JUDGE_REJECTED]
    """Candidate ``status`` values that enter the queue (invalid and duplicate never do)."""
    seed_methods: list[Method] = [BENCHFILL, BASELINE]
    """Candidate ``method`` values that enter the queue (oracle items are never published)."""
    decisions: PathSetting = REVIEW_DECISIONS
    """Exported decision log (schema ``decision``); versioned, a dependency of the build."""
    accepted: BenchmarkTemplate = REVIEW_ACCEPTED_TEMPLATE
    """Exported reviewed items with z (schema ``accepted_item``) that the build reads."""
    edited: BenchmarkTemplate = REVIEW_EDITED_TEMPLATE
    """Exported edited items waiting for calibration (schema ``item``, origin edited)."""
    recalibrated: BenchmarkTemplate = REVIEW_RECALIBRATED_TEMPLATE
    """Edited items measured again by ``curate review recalibrate`` (schema ``candidate``)."""
    host: str = "127.0.0.1"
    """Address ``curate review serve`` listens on (a non-local one needs a token)."""
    port: Annotated[int, Field(ge=0, le=65535)] = 8765
    """Port of ``curate review serve`` (0 = any free port)."""
    required_reviews: Reviewers | dict[str, Reviewers] = 1
    """Distinct reviewers who must agree before an item is decided: one number, or
    benchmark -> number (key ``"*"``: the rest). Disagreement puts the item in conflict
    for an adjudicator."""
    users: PathSetting | None = None
    """Reviewer accounts (name, role, sha256 of the token); see ``curate review
    add-reviewer``. Null: no accounts (one reviewer name per browser session)."""
    guidelines: PathSetting | None = None
    """Markdown shown on every item page and linked from the queue; null = the built-in
    guidelines (curation/review/guidelines.md)."""

    @field_validator("candidates", mode="before")
    @classmethod
    def _one_or_more(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def unknown_benchmarks(self, benchmarks: Collection[str]) -> str | None:
        """``.required_reviews.<b>: why`` for the first per-benchmark count whose benchmark
        is not in params' ``benchmarks`` (a typo would silently fall back to ``"*"``)."""
        if not isinstance(self.required_reviews, dict):
            return None
        for name in self.required_reviews:
            if name != "*" and name not in benchmarks:
                return (
                    f".required_reviews.{name}: not a benchmark of params.yaml "
                    f"(benchmarks: {', '.join(benchmarks)}; '*' for the rest)"
                )
        return None

    @property
    def guidelines_file(self) -> Path:
        """The guidelines shown to reviewers (``guidelines``, else the built-in)."""
        return self.guidelines if self.guidelines is not None else DEFAULT_GUIDELINES

    def accepted_path(self, benchmark: str) -> Path:
        return Path(self.accepted.format(benchmark=benchmark))

    def edited_path(self, benchmark: str) -> Path:
        return Path(self.edited.format(benchmark=benchmark))

    def recalibrated_path(self, benchmark: str) -> Path:
        return Path(self.recalibrated.format(benchmark=benchmark))

    def items_path(self, benchmark: str) -> Path:
        return Path(self.items.format(benchmark=benchmark))
