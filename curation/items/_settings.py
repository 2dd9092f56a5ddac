"""``benchmarks.<b>.items``: where a benchmark's raw items are and how their fields map.

Declared once here (type, default, constraint, docstring); ``curation.params_model``
composes the sections into ``ParamsFile``.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, get_args

from pydantic import (
    AfterValidator,
    Field,
    field_validator,
)

from curation.settings import FilePath, Section

AnswerType = Literal["numeric", "exact", "choice", "code", "free"]
"""How an answer is graded: a number, an exact string, a choice label, code, free text."""
ANSWER_TYPES: tuple[str, ...] = get_args(AnswerType)
"""The answer types, also checked per record when ``fields.answer_type`` maps a column."""
REQUIRED_FIELDS = ("item", "question")
"""Target fields every item has: an unmapped one is read from the source field of its name."""


def regex_with_group(pattern: str | None) -> str | None:
    """``pattern`` when it compiles and has a group to extract the answer (else an error)."""
    if pattern is None:
        return None
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a valid regular expression ({exc})") from None
    if compiled.groups < 1:
        raise ValueError("the pattern needs one (group) around the answer")
    return pattern


def _default_fields() -> dict[str, str]:
    return {name: name for name in REQUIRED_FIELDS}


class ItemsSettings(Section):
    """``benchmarks.<b>.items``: where the raw items are and how their fields map."""

    path: FilePath
    """Raw items file (JSONL, JSON, CSV, parquet) or dataset folder."""
    format: str | None = None
    """Reader for ``path`` (jsonl, json, csv, parquet, hf-disk); unset: from its name."""
    split: str | None = None
    """The split of a saved HF dataset folder (hf-disk) to read."""
    fields: dict[str, str] = Field(default_factory=_default_fields)
    """Target field (item, question, answer, choices, answer_type) -> source field; item
    and question, when not mapped, are read from the source fields of the same name."""
    answer_type: AnswerType = "exact"
    """How every item's answer is graded (a mapped ``fields.answer_type`` column overrides
    it per item)."""
    answer_pattern: Annotated[str | None, AfterValidator(regex_with_group)] = None
    """Regex with one group that extracts the reference answer from the source text."""
    metadata_fields: list[str] | None = None
    """Source fields kept as metadata; unset keeps every unmapped field."""
    texts: bool = True
    """False for a matrix-only benchmark: ``path`` is its response matrix (the same file
    as ``responses.path``), the items are its ids, and fill, judge and build skip it."""

    @field_validator("fields")
    @classmethod
    def _required_fields(cls, value: dict[str, str]) -> dict[str, str]:
        return {**_default_fields(), **value}
