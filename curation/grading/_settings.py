"""``benchmarks.<b>.grading`` in params.yaml: how a benchmark's answers are graded.

Collection, BenchFill, the judge and review all grade with the same settings, so the
model lives beside the graders rather than in one of those stages. Declared once here
(type, default, constraint, docstring); ``curation.benchmarks`` puts it in each benchmark
entry, and the graders read it.
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from pydantic import NonNegativeFloat, field_validator, model_validator

from curation.settings import Section

Method = Literal["numeric", "exact", "choice", "regex", "code", "skip"]
"""A grader (``benchmarks.<b>.grading.method``; else implied by the answer type)."""
METHODS: tuple[Method, ...] = get_args(Method)


class GradingSettings(Section):
    """``benchmarks.<b>.grading``: a method override, the regex grader's pattern, tolerances."""

    method: Method | None = None
    """Override the method implied by the item's answer type (null: by answer type)."""
    pattern: str | None = None
    """Regex grader: the pattern whose group 1 (or whole match) in the answer's last match
    is the answer (multi-line mode); required when ``method`` is regex."""
    rel_tol: NonNegativeFloat = 1e-4
    """Numeric answers: relative tolerance of a non-integer match."""
    abs_tol: NonNegativeFloat = 1e-9
    """Numeric answers: absolute tolerance of a non-integer match."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, pattern: str | None) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern, re.M)
            except re.error as exc:
                raise ValueError(f"not a valid regular expression ({exc})") from None
        return pattern

    @model_validator(mode="after")
    def _regex_needs_pattern(self) -> GradingSettings:
        if self.method == "regex" and not self.pattern:
            raise ValueError(".pattern: the regex grader needs a pattern")
        return self
