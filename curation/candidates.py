"""The candidate record: one new item proposed by gap filling, and the judge's verdict on it.

A candidate (``schemas/candidate.schema.json``, the source of truth for its fields) is
made by BenchFill (:mod:`curation.fill`), given a verdict by the LLM judge
(:mod:`curation.judge`), measured again after a reviewer's edit
(``curate review recalibrate``) and shown to reviewers (:mod:`curation.review`). This
module is the one definition they all import:

* :class:`Candidate` — the record, a frozen dataclass whose fields are exactly the
  schema's, in schema order; :meth:`Candidate.to_row` / :meth:`Candidate.from_row`
  and :func:`candidates_frame` (a ``candidate`` table from records);
* the values of its enumerated fields as ``Literal`` types with one constant each:
  :data:`CandidateStatus` (``INVALID`` … ``INSERTED``), :data:`Method`
  (``BENCHFILL``, ``BASELINE``, ``ORACLE``) and :data:`Source` (``COLLECTED``,
  ``SIMULATED``; a simulated record says so and is never published), declared in the
  polars-free :mod:`curation.candidate_values` and re-exported here;
* :class:`Verdict` and the :class:`Judge` protocol — what a judge returns and the
  interface BenchFill's validity hook calls; :func:`passed`, :func:`verdict_columns`.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

import polars as pl

from curation.candidate_values import (  # the enumerated fields, re-exported here
    BASELINE,
    BENCHFILL,
    CALIBRATED,
    CANDIDATE_STATUSES,
    COLLECTED,
    DUPLICATE,
    INSERTED,
    INVALID,
    JUDGE_REJECTED,
    METHODS,
    ORACLE,
    SIMULATED,
    SOURCES,
    CandidateStatus,
    Method,
    Source,
)
from curation.schemas import conform, empty_frame

CANDIDATE_SCHEMA: Final = "candidate"
"""The JSON Schema of a candidate record (``schemas/candidate.schema.json``)."""

# ---- the judge's verdict -----------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """A judge's structured verdict on one candidate (the ``judge_*`` candidate columns)."""

    correct: bool | None
    """Is the candidate's reference answer correct? None = could not be decided."""
    well_posed: bool | None
    """Is the question well-posed (one intended answer, nothing missing or contradictory)?"""
    format_kept: bool | None
    """Does it keep its parent's format (answer type, form of the answer, kind of question)?"""
    reason: str
    """One paragraph a reviewer can read; starts with ``[simulated]`` for the simulation."""
    model: str
    """Judge model name, or ``simulated``."""

    @property
    def passed(self) -> bool:
        """Correct and well-posed, format not changed (undecided correctness is no pass)."""
        return passed(self)


@runtime_checkable
class Judge(Protocol):
    """Judges a candidate against its parent; BenchFill's validity hook.

    BenchFill calls ``await judge.judge(candidate, parent)`` on every child that passed
    the mechanical checks and before the panel is paid to answer it. ``candidate`` is
    the candidate record so far (:meth:`Candidate.judge_view`); ``parent`` is the item
    or memory entry it was rewritten from (item, question, answer, answer_type,
    choices, b, se, z, origin). The shapes are structural: a judge may return its own
    verdict class as long as it has :class:`Verdict`'s five fields.
    """

    async def judge(self, candidate: Mapping[str, Any], parent: Mapping[str, Any]) -> Verdict:
        """The verdict on ``candidate`` (a partial candidate record), rewritten from ``parent``."""
        ...


def passed(verdict: Any) -> bool:
    """``correct`` and ``well_posed`` are True and ``format_kept`` is not False.

    An undecided correctness (an unparseable verdict is all-null) is not a pass: a
    verdict that decided nothing must not let a candidate through; ``format_kept`` may
    be null (no parent to compare with).
    """
    return (
        verdict.correct is True and verdict.well_posed is True and verdict.format_kept is not False
    )


VERDICT_COLUMNS: Final[Mapping[str, str]] = {
    "judge_correct": "correct",
    "judge_well_posed": "well_posed",
    "judge_format_kept": "format_kept",
    "judge_reason": "reason",
    "judge_model": "model",
}
"""Candidate column -> :class:`Verdict` field."""


def verdict_columns(verdict: Any | None) -> dict[str, Any]:
    """The ``judge_*`` candidate columns of a verdict (all null without one)."""
    if verdict is None:
        return {column: None for column in VERDICT_COLUMNS}
    return {
        "judge_correct": verdict.correct,
        "judge_well_posed": verdict.well_posed,
        "judge_format_kept": verdict.format_kept,
        "judge_reason": str(verdict.reason),
        "judge_model": str(verdict.model),
    }


# ---- the record --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Candidate:
    """One candidate record; its fields are exactly the ``candidate`` schema's, in order.

    Values are kept as given (no coercion), so a record written, read back and written
    again is the same bytes. Fields a candidate only gets once it is calibrated or
    judged default to "not yet" (null, 0, ``"{}"``, False).
    """

    benchmark: str
    candidate: str
    method: Method
    parent: str | None
    round: int
    target_z: float
    question: str
    answer: str | None
    answer_type: str
    change: str | None = None
    status: CandidateStatus = INVALID
    status_reason: str | None = None
    source: Source
    rewriter_model: str | None
    prompt_hash: str | None
    b: float | None = None
    se: float | None = None
    z: float | None = None
    z_low: float | None = None
    z_high: float | None = None
    n_trials: int = 0
    n_correct: int = 0
    panel: str = "{}"
    """Per-model ``{model: [n_correct, n_trials]}`` as JSON text."""
    calibration: str
    judge_correct: bool | None = None
    judge_well_posed: bool | None = None
    judge_format_kept: bool | None = None
    judge_reason: str | None = None
    judge_model: str | None = None
    selected: bool = False
    lineage: str = "{}"
    """JSON text: parent chain, prompt, cost, seeds, calibration outcome."""

    def to_row(self) -> dict[str, Any]:
        """The record as a mapping in schema order (what tables and the journal hold)."""
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Candidate:
        """A record from a table row or journal entry with exactly the schema's fields."""
        missing = [name for name in FIELDS if name not in row]
        extra = [key for key in row if key not in _FIELD_SET]
        if missing or extra:
            raise ValueError(
                f"not a candidate record: missing {missing or 'nothing'}, "
                f"unknown {extra or 'nothing'}"
            )
        return cls(**{name: row[name] for name in FIELDS})

    def replace(self, **changes: Any) -> Candidate:
        """A copy with ``changes`` (field names of the schema)."""
        return dataclasses.replace(self, **changes)

    def with_verdict(self, verdict: Any | None) -> Candidate:
        """A copy whose ``judge_*`` columns are ``verdict``'s (all null for None)."""
        return dataclasses.replace(self, **verdict_columns(verdict))

    def lineage_dict(self) -> dict[str, Any]:
        """The lineage JSON, parsed."""
        value = json.loads(self.lineage or "{}")
        return value if isinstance(value, dict) else {}

    def judge_view(
        self, *, choices: Any, lineage: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The record as a judge sees it: no status, with ``choices`` (and ``lineage``
        as JSON text when given: the lineage so far of a record still being made)."""
        view = {k: v for k, v in self.to_row().items() if k not in ("status", "lineage")}
        view["choices"] = choices
        if lineage is not None:
            view["lineage"] = json.dumps(lineage, sort_keys=True, ensure_ascii=False)
        return view


FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Candidate))
"""The candidate fields, in schema order."""
_FIELD_SET = frozenset(FIELDS)


def candidates_frame(candidates: Iterable[Candidate]) -> pl.DataFrame:
    """A ``candidate`` table of ``candidates`` (in the order given), typed by the schema."""
    rows = [c.to_row() for c in candidates]
    if not rows:
        return empty_frame(CANDIDATE_SCHEMA)
    return conform(pl.DataFrame(rows, infer_schema_length=None), CANDIDATE_SCHEMA)


__all__ = [
    "BASELINE",
    "BENCHFILL",
    "CALIBRATED",
    "CANDIDATE_SCHEMA",
    "CANDIDATE_STATUSES",
    "COLLECTED",
    "DUPLICATE",
    "FIELDS",
    "INSERTED",
    "INVALID",
    "JUDGE_REJECTED",
    "METHODS",
    "ORACLE",
    "SIMULATED",
    "SOURCES",
    "VERDICT_COLUMNS",
    "Candidate",
    "CandidateStatus",
    "Judge",
    "Method",
    "Source",
    "Verdict",
    "candidates_frame",
    "passed",
    "verdict_columns",
]
