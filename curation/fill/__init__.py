"""BenchFill: fill the gaps of a benchmark's difficulty axis with new, calibrated items.

An evolutionary, difficulty-targeted rewrite search (SPEC §4): for a target z* (the
midpoint of the current largest gap by default) the memory items closest to z* are
rewritten with a reference list of real items around z*; valid children are
annotated by the panel with **adaptive trials** and calibrated online on the
benchmark's own calibration; calibrated children join the memory; the child closest
to z* is inserted and the next target chosen. A uniform-parent best-of-N baseline
with the same rewriter calls and the oracle (a point exactly at each target) run
beside it for comparison. A journal under ``data/fill/<benchmark>/`` lets a killed
run resume where it stopped.

* :func:`fill_settings` / :class:`FillSettings` — params.yaml ``fill``;
  :class:`AdaptiveRule` (the stopping rule of trial allocation) and
  :class:`RewriteSimulation` (the offline rewriter's documented model).
* :func:`select_panel`, :func:`afill` → :class:`FillResult` — one benchmark's run.
* :class:`Judge`, :class:`Verdict` — the validity hook an LLM judge implements;
  :func:`load_judge_factory` — ``fill.judge: "module:factory"``.
* :func:`next_target`, :func:`oracle_insertions`, :func:`top_k_reduction` — targets
  and what insertions do to the Top-k Sum.

Every LLM call goes through :mod:`curation.llm` (cache, retries, accounting).
"""

from curation.fill._config import AdaptiveRule, FillSettings, RewriteSimulation, fill_settings
from curation.fill._hooks import Judge, Verdict, load_judge_factory
from curation.fill._run import FillResult, afill, select_panel
from curation.fill._targets import Target, next_target, oracle_insertions, top_k_reduction

__all__ = [
    "AdaptiveRule",
    "FillResult",
    "FillSettings",
    "Judge",
    "RewriteSimulation",
    "Target",
    "Verdict",
    "afill",
    "fill_settings",
    "load_judge_factory",
    "next_target",
    "oracle_insertions",
    "select_panel",
    "top_k_reduction",
]
