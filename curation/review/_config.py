"""The ``review:`` section of params.yaml: where the queue lives and what it exports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.candidates import (
    BASELINE,
    BENCHFILL,
    CALIBRATED,
    CANDIDATE_STATUSES,
    INSERTED,
    JUDGE_REJECTED,
    METHODS,
    CandidateStatus,
    Method,
)
from curation.errors import ConfigError
from curation.paths import (
    ITEMS_TEMPLATE,
    JUDGED_TEMPLATE,
    REVIEW_ACCEPTED_TEMPLATE,
    REVIEW_DB,
    REVIEW_DECISIONS,
    REVIEW_EDITED_TEMPLATE,
    REVIEW_RECALIBRATED_TEMPLATE,
)

DEFAULT_GUIDELINES = Path(__file__).resolve().parent / "guidelines.md"
TOKEN_ENV = "CURATE_REVIEW_TOKEN"
"""Environment variable holding the review server's access token."""


@dataclass(frozen=True)
class ReviewConfig:
    """Paths and seeding rules of the human review queue (params.yaml ``review:``)."""

    db: Path = REVIEW_DB
    """The SQLite queue (WAL). Local working state; the exported files are the record."""
    candidates: tuple[Path, ...] = (
        Path(JUDGED_TEMPLATE),
        Path(REVIEW_RECALIBRATED_TEMPLATE),
    )
    """Candidate tables (candidate schema) that ``curate review seed`` reads by default;
    ``{benchmark}`` expands over params' benchmarks and missing files are skipped. The
    recalibrated edits come last, so an edited item returns as a pending version."""
    items: str = ITEMS_TEMPLATE
    """Where the parents (original items) of a benchmark are, for the side-by-side view."""
    seed_statuses: tuple[CandidateStatus, ...] = (INSERTED, CALIBRATED, JUDGE_REJECTED)
    """Candidate ``status`` values that enter the queue (invalid and duplicate never do)."""
    seed_methods: tuple[Method, ...] = (BENCHFILL, BASELINE)
    """Candidate ``method`` values that enter the queue (oracle items are never published)."""
    decisions: Path = REVIEW_DECISIONS
    """Exported decision log (schema ``decision``); a dependency of the build stage."""
    accepted: str = REVIEW_ACCEPTED_TEMPLATE
    """Exported reviewed items with z (schema ``accepted_item``) that the build reads."""
    edited: str = REVIEW_EDITED_TEMPLATE
    """Exported edited items waiting for calibration (schema ``item``, origin edited)."""
    recalibrated: str = REVIEW_RECALIBRATED_TEMPLATE
    """Edited items measured again by ``curate review recalibrate`` (schema ``candidate``)."""
    host: str = "127.0.0.1"
    port: int = 8765
    required_reviews: int | dict[str, int] = 1
    """Distinct reviewers who must agree before an item is decided: one number, or
    benchmark -> number (key ``"*"``: the rest). Disagreement puts the item in conflict
    for an adjudicator."""
    users: Path | None = None
    """Reviewer accounts (name, role, sha256 of the token); see ``curate review add-reviewer``."""
    guidelines: Path = DEFAULT_GUIDELINES
    """Markdown shown on every item page and linked from the queue."""

    def accepted_path(self, benchmark: str) -> Path:
        return Path(self.accepted.format(benchmark=benchmark))

    def edited_path(self, benchmark: str) -> Path:
        return Path(self.edited.format(benchmark=benchmark))

    def recalibrated_path(self, benchmark: str) -> Path:
        return Path(self.recalibrated.format(benchmark=benchmark))

    def items_path(self, benchmark: str) -> Path:
        return Path(self.items.format(benchmark=benchmark))


def _paths(value: Any, where: str) -> tuple[Path, ...]:
    if isinstance(value, str):
        return (Path(value),)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(Path(v) for v in value)
    raise ConfigError(f"{where}: expected a path or a non-empty list of paths")


def _choices(value: Any, where: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of {', '.join(allowed)}")
    bad = [v for v in value if v not in allowed]
    if bad:
        raise ConfigError(
            f"{where}: unknown value {bad[0]!r}; expected one of {', '.join(allowed)}"
        )
    return tuple(value)


def review_config(params: dict[str, Any], *, params_file: str = "params.yaml") -> ReviewConfig:
    """Parse ``params['review']`` (every key optional; defaults as in :class:`ReviewConfig`)."""
    section = params.get("review") or {}
    where = f"{params_file}: review"
    if not isinstance(section, dict):
        raise ConfigError(f"{where}: expected a mapping")
    known = {
        "db",
        "candidates",
        "items",
        "seed_statuses",
        "seed_methods",
        "decisions",
        "accepted",
        "edited",
        "recalibrated",
        "host",
        "port",
        "required_reviews",
        "users",
        "guidelines",
    }
    unknown = sorted(set(section) - known)
    if unknown:
        raise ConfigError(
            f"{where}.{unknown[0]}: unknown setting; known: {', '.join(sorted(known))}"
        )
    base = ReviewConfig()
    kw: dict[str, Any] = {}
    for key in ("db", "decisions", "users", "guidelines"):
        if section.get(key) is not None:
            if not isinstance(section[key], str):
                raise ConfigError(f"{where}.{key}: expected a path")
            kw[key] = Path(section[key])
    for key in ("items", "accepted", "edited", "recalibrated"):
        if section.get(key) is not None:
            value = section[key]
            if not isinstance(value, str) or (key != "items" and "{benchmark}" not in value):
                raise ConfigError(f"{where}.{key}: expected a path containing {{benchmark}}")
            kw[key] = value
    if section.get("candidates") is not None:
        kw["candidates"] = _paths(section["candidates"], f"{where}.candidates")
    if section.get("seed_statuses") is not None:
        kw["seed_statuses"] = _choices(
            section["seed_statuses"], f"{where}.seed_statuses", CANDIDATE_STATUSES
        )
    if section.get("seed_methods") is not None:
        kw["seed_methods"] = _choices(section["seed_methods"], f"{where}.seed_methods", METHODS)
    if section.get("host") is not None:
        if not isinstance(section["host"], str):
            raise ConfigError(f"{where}.host: expected an address")
        kw["host"] = section["host"]
    if section.get("port") is not None:
        port = section["port"]
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise ConfigError(f"{where}.port: expected a port number (0-65535)")
        kw["port"] = port
    if section.get("required_reviews") is not None:
        kw["required_reviews"] = _required(section["required_reviews"], f"{where}.required_reviews")
    return ReviewConfig(**{**base.__dict__, **kw})


def _required(value: Any, where: str) -> int | dict[str, int]:
    def one(v: Any, at: str) -> int:
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 20:
            raise ConfigError(f"{at}: expected a number of reviewers from 1 to 20")
        return v

    if isinstance(value, dict):
        return {str(k): one(v, f"{where}.{k}") for k, v in value.items()}
    return one(value, where)


def benchmark_meta(params: dict[str, Any], benchmark: str) -> tuple[str | None, str | None]:
    """(domain, license) of a benchmark from params.yaml, if it is configured there."""
    entry = (params.get("benchmarks") or {}).get(benchmark)
    if not isinstance(entry, dict):
        return None, None
    domain, lic = entry.get("domain"), entry.get("license")
    return (str(domain) if domain else None, str(lic) if lic else None)
