"""params.yaml ``review``: the human review queue.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import (
    Field,
    PositiveInt,
)

from curation.settings import Section


class ReviewSettings(Section):
    """params.yaml ``review``: the human review queue (curation.review parses the details)."""

    db: str | None = None
    candidates: str | list[str] | None = None
    items: str | None = None
    seed_statuses: list[str] | None = None
    seed_methods: list[str] | None = None
    decisions: str | None = None
    accepted: str | None = None
    edited: str | None = None
    recalibrated: str | None = None
    host: str | None = None
    port: Annotated[int, Field(ge=0, le=65535)] | None = None
    required_reviews: PositiveInt | dict[str, PositiveInt] | None = None
    users: str | None = None
    guidelines: str | None = None
