"""``benchmarks.<b>.grading`` in params.yaml, parsed once into :class:`GradingSettings`.

Collection, BenchFill, the judge and review all grade with the same settings, so the
parser lives beside the graders rather than in one of those stages.
"""

from __future__ import annotations

from typing import Any

from curation.errors import ConfigError
from curation.grading._grade import METHODS, GradingSettings


def grading_settings(raw: Any, *, where: str) -> GradingSettings:
    """Parse ``benchmarks.<b>.grading`` (method override, regex pattern, tolerances)."""
    if raw is None:
        return GradingSettings()
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    unknown = set(raw) - {"method", "pattern", "rel_tol", "abs_tol"}
    if unknown:
        raise ConfigError(f"{where}.{sorted(unknown)[0]}: unknown setting")
    method = raw.get("method")
    if method is not None and method not in METHODS:
        raise ConfigError(f"{where}.method: {method!r} is not one of {', '.join(METHODS)}")
    if method == "regex" and not raw.get("pattern"):
        raise ConfigError(f"{where}.pattern: the regex grader needs a pattern")
    return GradingSettings(
        method=method,
        pattern=raw.get("pattern"),
        rel_tol=float(raw.get("rel_tol", 1e-4)),
        abs_tol=float(raw.get("abs_tol", 1e-9)),
    )
