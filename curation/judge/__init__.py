"""The LLM judge: a structured verdict on every gap-filling candidate (SPEC §5).

For each candidate the judge first solves the question without seeing its
reference answer, then — shown the reference and the parent — states whether the
answer is correct, the question well-posed and the parent's format kept, with a
reason. Correctness is decided by :mod:`curation.grading` comparing the judge's own
answer with the reference; without an own answer on a gradable item nothing is decided,
and a verdict that decided nothing never passes. Replies are JSON validated against
``schemas/judge_solution`` / ``schemas/judge_verdict``, read tolerantly (prose, fences,
think tags), with one repair request, then a null verdict "unparseable judge output:
<problem>". Every call goes through
:mod:`curation.llm` (cache, retries, accounting). Offline (``collect.backend:
simulate``, or ``judge.backend: simulate``) a seeded simulated judge answers and
says so: model ``simulated``, reasons starting ``[simulated]``.

BenchFill uses it as its validity hook with ``fill.judge: "curation.judge:fill_judge"``.
Typical use (the ``judge`` stage does the same in bulk with ``assess_many``)::

    judge = build_judge(params)          # params: the ParamsFile; None when judge.enabled is false
    async with judge:
        verdict = await judge.judge(candidate, parent)
        if not verdict.passed: ...
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.candidates import Judge, Verdict
    from curation.judge._judge import (
        SOLUTION_SCHEMA,
        VERDICT_SCHEMA,
        LLMJudge,
        build_judge,
        fill_judge,
    )
    from curation.judge._prompts import Prompts, load_prompts
    from curation.judge._settings import (
        JUDGE_MODEL_DEFAULTS,
        RESPONSE_FORMATS,
        JudgeSettings,
        JudgeSimulationSettings,
        ResponseFormat,
    )
    from curation.judge._simulate import SimulatedJudgeBackend
    from curation.judge._types import (
        JUDGED_STATUSES,
        NO_OWN_ANSWER,
        UNDECIDED_CATEGORIES,
        UNPARSEABLE,
        Assessment,
        categorize,
    )

_EXPORTS = {
    "JudgeSimulationSettings": "_settings",
    "JUDGED_STATUSES": "_types",
    "JUDGE_MODEL_DEFAULTS": "_settings",
    "NO_OWN_ANSWER": "_types",
    "RESPONSE_FORMATS": "_settings",
    "ResponseFormat": "_settings",
    "SOLUTION_SCHEMA": "_judge",
    "UNDECIDED_CATEGORIES": "_types",
    "UNPARSEABLE": "_types",
    "VERDICT_SCHEMA": "_judge",
    "Assessment": "_types",
    "Judge": "curation.candidates",
    "JudgeSettings": "_settings",
    "LLMJudge": "_judge",
    "Prompts": "_prompts",
    "SimulatedJudgeBackend": "_simulate",
    "Verdict": "curation.candidates",
    "build_judge": "_judge",
    "categorize": "_types",
    "fill_judge": "_judge",
    "load_prompts": "_prompts",
}

__all__ = [
    "JudgeSimulationSettings",
    "JUDGED_STATUSES",
    "JUDGE_MODEL_DEFAULTS",
    "NO_OWN_ANSWER",
    "RESPONSE_FORMATS",
    "ResponseFormat",
    "SOLUTION_SCHEMA",
    "UNDECIDED_CATEGORIES",
    "UNPARSEABLE",
    "VERDICT_SCHEMA",
    "Assessment",
    "Judge",
    "JudgeSettings",
    "LLMJudge",
    "Prompts",
    "SimulatedJudgeBackend",
    "Verdict",
    "build_judge",
    "categorize",
    "fill_judge",
    "load_prompts",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
