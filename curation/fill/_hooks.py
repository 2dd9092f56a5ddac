"""The validity hook an LLM judge plugs into (BenchFill step 4).

BenchFill calls ``await judge.judge(candidate, parent)`` on every child that passed the
mechanical checks (parsed, gradable, not a near-duplicate) and before the panel is
paid to answer it. ``candidate`` is the candidate record so far (the fields of
``schemas/candidate.schema.json`` that are known before calibration); ``parent`` is
the memory entry it was rewritten from (item, question, answer, answer_type, choices,
b, se, z, origin). A verdict that fails any check makes the candidate
``judge-rejected`` with the verdict's reason; every verdict fills the ``judge_*``
columns. With no judge configured those columns stay null.

The shapes are structural: a judge may return its own verdict class as long as it
has the five fields below (``curation.judge`` does exactly that).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from curation.errors import ConfigError


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
        """True unless a check failed (an undecided check does not fail)."""
        return passed(self)


@runtime_checkable
class Judge(Protocol):
    """Judges a candidate against its parent; BenchFill's validity hook."""

    async def judge(self, candidate: Mapping[str, Any], parent: Mapping[str, Any]) -> Verdict:
        """The verdict on ``candidate`` (a partial candidate record), rewritten from ``parent``."""
        ...


JudgeFactory = Callable[..., Judge]
"""``factory(params, *, params_file, benchmark) -> Judge``, named in ``fill.judge``."""


def passed(verdict: Any) -> bool:
    """``correct``, ``well_posed`` and ``format_kept`` are none of them False."""
    return (
        verdict.correct is not False
        and verdict.well_posed is not False
        and verdict.format_kept is not False
    )


def verdict_columns(verdict: Any | None) -> dict[str, Any]:
    """The ``judge_*`` candidate columns of a verdict (all null without one)."""
    if verdict is None:
        return {
            "judge_correct": None,
            "judge_well_posed": None,
            "judge_format_kept": None,
            "judge_reason": None,
            "judge_model": None,
        }
    return {
        "judge_correct": verdict.correct,
        "judge_well_posed": verdict.well_posed,
        "judge_format_kept": verdict.format_kept,
        "judge_reason": str(verdict.reason),
        "judge_model": str(verdict.model),
    }


def load_judge_factory(spec: str, *, where: str) -> JudgeFactory:
    """Import ``module:attribute`` (e.g. ``curation.judge:fill_judge``)."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{where}: expected 'module:factory', got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{where}: cannot import {module_name!r}: {exc}") from None
    factory = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"{where}: {module_name!r} has no callable {attr!r}")
    return factory
