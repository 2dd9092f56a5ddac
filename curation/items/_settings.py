"""``benchmarks.<b>.items``: where a benchmark's raw items are and how their fields map.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
)

from curation.settings import Section


def regex_with_group(pattern: str | None) -> str | None:
    if pattern is None:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    if compiled.groups < 1:
        raise ValueError("the pattern needs one (group) around the answer")
    return pattern


class ItemsSettings(Section):
    """``benchmarks.<b>.items``: where the raw items are and how their fields map."""

    path: str
    """Raw items file (JSONL, JSON, CSV, parquet) or dataset folder."""
    format: str | None = None
    split: str | None = None
    fields: dict[str, str] = Field(default_factory=dict)
    """Target field (item, question, answer, choices, answer_type) -> source field."""
    answer_type: Literal["numeric", "exact", "choice", "code", "free"] = "exact"
    answer_pattern: Annotated[str | None, AfterValidator(regex_with_group)] = None
    """Regex with one group that extracts the reference answer from the source text."""
    metadata_fields: list[str] | None = None
    texts: bool = True
    """False for a matrix-only benchmark: ``path`` is its response matrix (the same file
    as ``responses.path``), the items are its ids, and fill, judge and build skip it."""
