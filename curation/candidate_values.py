"""The values of the candidate record's enumerated fields, one ``Literal`` and one constant each.

Kept apart from :mod:`curation.candidates` (which re-exports every name here) so that a
params section can name them (``review.seed_statuses``) without loading polars.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

CandidateStatus = Literal["invalid", "duplicate", "judge-rejected", "calibrated", "inserted"]
"""Where a candidate stopped: failed validity, near-duplicate, rejected by the LLM judge,
calibrated (valid, has z), or inserted (chosen closest to its target)."""
INVALID: Final = "invalid"
DUPLICATE: Final = "duplicate"
JUDGE_REJECTED: Final = "judge-rejected"
CALIBRATED: Final = "calibrated"
INSERTED: Final = "inserted"
CANDIDATE_STATUSES: tuple[CandidateStatus, ...] = get_args(CandidateStatus)

Method = Literal["benchfill", "baseline", "oracle"]
"""benchfill = targeted rewriting; baseline = uniform-parent best-of-N with the same
budget; oracle = a point placed exactly at the target (a reference, never an item)."""
BENCHFILL: Final = "benchfill"
BASELINE: Final = "baseline"
ORACLE: Final = "oracle"
METHODS: tuple[Method, ...] = get_args(Method)

Source = Literal["collected", "simulated"]
"""collected = made and answered by real endpoints; simulated = the seeded simulation
(never published)."""
COLLECTED: Final = "collected"
SIMULATED: Final = "simulated"
SOURCES: tuple[Source, ...] = get_args(Source)
