"""BenchFill: fill the gaps of a benchmark's difficulty axis with new, calibrated items.

An evolutionary, difficulty-targeted rewrite search (SPEC §4): for a target z* (the
midpoint of the current largest gap by default) the memory items closest to z* are
rewritten with a reference list of real items around the request (z* corrected by
the offset and scale the search has learnt of its rewriter); valid children are
measured by :mod:`curation.calibrate` (the panel answers with **adaptive trials**, and
each child is calibrated online on the benchmark's own calibration); calibrated
children join the memory; the child closest to z* is inserted and the next target
chosen. A uniform-parent best-of-N baseline with the same rewriter calls and the
oracle (a point exactly at each target) run beside it for comparison. A journal under
``.curate-state/fill/<benchmark>/`` (outside the outputs) lets a killed run resume where
it stopped. Every candidate
is a :class:`curation.candidates.Candidate`.

* :class:`FillSettings` — params.yaml ``fill`` (how children are measured is
  ``calibrate``, :class:`curation.calibrate.CalibrateSettings`);
  :class:`RewriteSimulationSettings` (the offline rewriter's documented model, with the
  :data:`SKILLS` presets), :class:`RefineSettings`, :class:`CorrectionSettings` (what
  the search learns of its rewriter: offset and scale, refitted every round, and the
  corrected request), :class:`FillIntervalSettings` (intervals that include the panel's
  ability error, estimated from the children's counts).
* :func:`afill` → :class:`FillResult` — one benchmark's run.
* :func:`load_judge_factory` — ``fill.judge: "module:factory"``, a factory of a
  :class:`curation.candidates.Judge`.
* :func:`next_target`, :func:`oracle_insertions`, :func:`top_k_reduction` — targets
  and what insertions do to the Top-k Sum.

Every LLM call goes through :mod:`curation.llm` (cache, retries, accounting).
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.fill._hooks import JudgeFactory, load_judge_factory
    from curation.fill._run import FillResult, afill
    from curation.fill._settings import (
        SKILLS,
        CorrectionSettings,
        FillIntervalSettings,
        FillSettings,
        RefineSettings,
        RewriteSimulationSettings,
    )
    from curation.fill._targets import Target, next_target, oracle_insertions, top_k_reduction

_EXPORTS = {
    "SKILLS": "_settings",
    "CorrectionSettings": "_settings",
    "FillIntervalSettings": "_settings",
    "FillResult": "_run",
    "FillSettings": "_settings",
    "JudgeFactory": "_hooks",
    "RefineSettings": "_settings",
    "RewriteSimulationSettings": "_settings",
    "Target": "_targets",
    "afill": "_run",
    "load_judge_factory": "_hooks",
    "next_target": "_targets",
    "oracle_insertions": "_targets",
    "top_k_reduction": "_targets",
}

__all__ = [
    "SKILLS",
    "CorrectionSettings",
    "FillResult",
    "FillSettings",
    "FillIntervalSettings",
    "JudgeFactory",
    "RefineSettings",
    "RewriteSimulationSettings",
    "Target",
    "afill",
    "load_judge_factory",
    "next_target",
    "oracle_insertions",
    "top_k_reduction",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
