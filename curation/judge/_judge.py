"""The LLM judge: solve independently, then compare; two structured calls per candidate.

1. **Solve.** The judge sees the candidate's question (not its reference answer)
   and returns its working and its own final answer (``schemas/judge_solution``).
2. **Verdict.** In the same conversation it is shown the reference answer and the
   parent, and returns answer_correct / well_posed / format_kept / reason
   (``schemas/judge_verdict``).

Correctness is then decided by :mod:`curation.grading`, comparing the judge's own
answer with the reference exactly as a panel answer is graded; the judge's stated
comparison decides only where the grader cannot by design (code without a sandbox,
free-form), and a disagreement is written into the reason for the reviewer. When the
judge gives no answer of its own on a gradable item, its bare claim decides nothing
(a weak judge rubber-stamps references): correctness stays null, reason
``not judged: the judge gave no answer of its own``. Hiding the reference in step 1 is
the point: a judge that sees it first tends to agree with it.

Each reply is read tolerantly (prose, fences, think tags: :mod:`._parse`) and validated
against its JSON Schema; an invalid reply gets one repair request naming the problem,
and if that fails too the verdict is all-null with the reason ``unparseable judge
output: <problem>``. A verdict that decided nothing never passes
(:func:`curation.candidates.passed`). Every call goes through the LLM layer
(``cached_complete``: cache, retries, accounting), so a rerun asks nothing twice.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from curation.candidates import Verdict
from curation.errors import ConfigError
from curation.grading import GradingSettings, answers_agree, method_for
from curation.judge._parse import parse_reply, response_schema, schema_keys
from curation.judge._prompts import ANSWER_FORMS, Prompts, load_prompts
from curation.judge._request import StructuredRequest, format_json
from curation.judge._settings import JudgeSettings
from curation.judge._simulate import SimCase, SimulatedJudgeBackend, hint
from curation.judge._types import NO_OWN_ANSWER, UNPARSEABLE, Assessment, categorize
from curation.llm import (
    SIMULATED_PREFIX,
    Accounting,
    Backend,
    CallResult,
    CompletionCache,
    LLMCallError,
    LLMSettings,
    Message,
    Sampling,
    backend_for,
    cached_complete,
)

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings
    from curation.params_model import ParamsFile

SOLUTION_SCHEMA = "judge_solution"
VERDICT_SCHEMA = "judge_verdict"
STAGE = "judge"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).strip()
    return text or None


@dataclass(frozen=True)
class _Item:
    """One candidate and its parent, as the prompts and the grader need them."""

    benchmark: str
    question: str
    answer: str | None
    answer_type: str
    change: str | None
    parent_question: str | None
    parent_answer: str | None
    parent_answer_type: str | None
    choices: tuple[str, ...] | None

    @classmethod
    def of(cls, candidate: Mapping[str, Any], parent: Mapping[str, Any]) -> _Item:
        choices = parent.get("choices") if parent else None
        if choices is None:
            choices = candidate.get("choices")
        has_parent = bool(parent) and parent.get("question") is not None
        return cls(
            benchmark=str(candidate.get("benchmark") or ""),
            question=str(candidate.get("question") or ""),
            answer=_text(candidate.get("answer")),
            answer_type=str(candidate.get("answer_type") or "exact"),
            change=_text(candidate.get("change")),
            parent_question=str(parent["question"]) if has_parent else None,
            parent_answer=_text(parent.get("answer")) if has_parent else None,
            parent_answer_type=(str(parent.get("answer_type") or "") or None)
            if has_parent
            else None,
            choices=tuple(str(c) for c in choices) if choices else None,
        )

    @property
    def key(self) -> str:
        blob = json.dumps(
            [
                self.question,
                self.answer,
                self.answer_type,
                self.change,
                self.parent_question,
                self.parent_answer,
                self.parent_answer_type,
                self.choices,
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


class LLMJudge:
    """Judges candidates through the LLM layer (or the simulated judge, offline).

    Use it as an async context manager (or call :meth:`aclose`): it owns its backend
    and, unless one is passed in, its completion cache. The backend is created on
    first use, inside the running event loop. ``settings`` must be resolved
    (:meth:`JudgeSettings.resolved`; :func:`build_judge` does it).
    """

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        llm: LLMSettings,
        cache: CompletionCache | None = None,
        accounting: Accounting | None = None,
        grading: Callable[[str], GradingSettings] | None = None,
        prompts: Prompts | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.settings = settings
        self.llm = llm
        self.prompts = prompts or load_prompts(settings.prompts)
        price = settings.price()
        self.accounting = accounting or Accounting(
            {settings.model.name: price} if price is not None else None
        )
        self._grading = grading or (lambda _benchmark: GradingSettings())
        self._environ = os.environ if environ is None else environ
        self._cache = cache
        self._owns_cache = cache is None
        self._backend: Backend | None = None
        self._format_refused = False
        self.requests = 0
        """Calls made (not served from the cache) by this judge."""
        self.cache_hits = 0
        if not settings.simulated:
            m = settings.model
            needs = (
                (m.base_url_env, "base URL, e.g. http://localhost:8000/v1"),
                (m.api_key_env, "API key (any text, e.g. EMPTY, for a key-less server)"),
            )
            for env, what in needs:
                if not self._environ.get(env):
                    raise ConfigError(
                        f"judge model {m.name!r}: environment variable {env} is not set; "
                        f"export the judge endpoint's {what}, or set judge.backend: simulate"
                    )

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def model(self) -> str:
        """What verdicts record as the judge model (``simulated`` offline)."""
        return self.settings.model_label

    def backend(self) -> Backend:
        if self._backend is None:
            s = self.settings
            self._backend = backend_for(
                s.backend_name,
                [s.model],
                self.llm,
                simulate=lambda: SimulatedJudgeBackend(
                    seed=s.seed, false_reject_rate=s.simulation.false_reject_rate
                ),
                environ=self._environ,
            )
        return self._backend

    def cache(self) -> CompletionCache:
        if self._cache is None:
            self._cache = CompletionCache(self.llm.cache_path)
        return self._cache

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
            self._backend = None
        if self._owns_cache and self._cache is not None:
            self._cache.close()
            self._cache = None

    async def __aenter__(self) -> LLMJudge:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ---- the Judge interface ---------------------------------------------------------------

    async def judge(self, candidate: Mapping[str, Any], parent: Mapping[str, Any]) -> Verdict:
        """The verdict on ``candidate`` (a candidate record) rewritten from ``parent``.

        ``parent`` is an item or candidate record (question, answer, answer_type, and
        for choice items its choices); an empty mapping means no parent (format_kept
        is then null). Raises :class:`~curation.llm.LLMCallError` if the endpoint
        fails for good; a rerun resumes from the cache.
        """
        return (await self.assess(candidate, parent)).verdict

    async def assess(self, candidate: Mapping[str, Any], parent: Mapping[str, Any]) -> Assessment:
        """:meth:`judge`, with the own answer, grader result and stated comparison kept."""
        item = _Item.of(candidate, parent)
        backend = self.backend()
        if isinstance(backend, SimulatedJudgeBackend):
            backend.register(
                SimCase(
                    key=item.key,
                    question=item.question,
                    answer=item.answer,
                    answer_type=item.answer_type,
                    parent_answer=item.parent_answer,
                    parent_answer_type=item.parent_answer_type,
                    choices=item.choices,
                )
            )
        conversation = [
            Message("system", self.prompts.render("system", {})),
            Message("user", self._solve_prompt(item)),
        ]
        solution, repairs, tolerant, problem = await self._structured(
            conversation, SOLUTION_SCHEMA, hint("solve", item.key)
        )
        if solution is None:
            return self._unparseable(repairs, tolerant, problem=f"solve step: {problem}")
        own = _text(solution.get("answer"))
        conversation += [
            Message("assistant", json.dumps(solution, ensure_ascii=False)),
            Message("user", self._verdict_prompt(item)),
        ]
        verdict, more, more_tolerant, problem = await self._structured(
            conversation, VERDICT_SCHEMA, hint("verdict", item.key)
        )
        repairs += more
        tolerant += more_tolerant
        if verdict is None:
            return self._unparseable(
                repairs, tolerant, own_answer=own, problem=f"verdict step: {problem}"
            )
        return self._decide(item, own, verdict, repairs, tolerant)

    async def assess_many(
        self, pairs: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> list[Assessment]:
        """Assess (candidate, parent) pairs concurrently (bounded by the endpoint limits)."""
        pairs = list(pairs)
        gate = asyncio.Semaphore(max(1, self.backend().max_in_flight()))

        async def one(pair: tuple[Mapping[str, Any], Mapping[str, Any]]) -> Assessment:
            async with gate:
                return await self.assess(*pair)

        return list(await asyncio.gather(*(one(p) for p in pairs)))

    # ---- prompts ---------------------------------------------------------------------------

    def _solve_prompt(self, item: _Item) -> str:
        choices = ""
        if item.choices:
            choices = "Options:\n" + "\n".join(
                f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(item.choices)
            )
        return self.prompts.render(
            "solve",
            {
                "question": item.question,
                "choices": choices,
                "answer_type": item.answer_type,
                "answer_form": ANSWER_FORMS.get(item.answer_type, ANSWER_FORMS["free"]),
            },
        )

    def _verdict_prompt(self, item: _Item) -> str:
        none = "(none)"
        return self.prompts.render(
            "verdict",
            {
                "answer": item.answer if item.answer is not None else "(none: graded by tests)",
                "parent_question": item.parent_question or none,
                "parent_answer": item.parent_answer or none,
                "parent_answer_type": item.parent_answer_type or none,
                "change": item.change or "(not given)",
                "format_note": ""
                if item.parent_question is not None
                else "There is no parent item here: give null.",
            },
        )

    # ---- calls -----------------------------------------------------------------------------

    def _response_format(self, schema: str) -> str | None:
        mode = self.settings.response_format
        if self.settings.simulated or self._format_refused or mode == "none":
            return None
        if mode == "json_schema":
            return format_json(response_schema(schema))
        return format_json({"type": "json_object"})

    async def _call(self, messages: list[Message], schema: str, item_hint: str) -> CallResult:
        m = self.settings.model
        sampling = Sampling(
            temperature=m.temperature,
            max_tokens=m.max_tokens,
            top_p=m.top_p,
            seed=self.settings.seed if self.llm.send_seed else None,
        )
        fmt = self._response_format(schema)
        while True:
            request = StructuredRequest(
                model=m.name,
                model_id=m.model_id,
                messages=tuple(messages),
                sampling=sampling,
                stream=m.stream,
                stage=STAGE,
                item=item_hint,
                response_format=fmt,
                hint_in_key=isinstance(self.backend(), SimulatedJudgeBackend),
            )
            try:
                result = await cached_complete(self.backend(), self.cache(), request)
            except LLMCallError as exc:
                # an endpoint without structured output refuses the field: ask without it
                if fmt is not None and ("HTTP 400" in str(exc) or "HTTP 422" in str(exc)):
                    self._format_refused = True
                    fmt = None
                    continue
                raise
            break
        self.accounting.record(result)
        if result.cached:
            self.cache_hits += 1
        else:
            self.requests += 1
        return result

    async def _structured(
        self, messages: list[Message], schema: str, item_hint: str
    ) -> tuple[dict[str, Any] | None, int, int, str | None]:
        """A schema-valid reply, with one repair request if the first is not.

        Returns (object or None, repair requests, tolerant reads, last problem)."""
        first = await self._call(messages, schema, item_hint)
        parsed = parse_reply(
            first.completion.text, schema, finish_reason=first.completion.finish_reason
        )
        if parsed.value is not None:
            return parsed.value, 0, int(parsed.tolerant), None
        repair = self.prompts.render(
            "repair",
            {
                "problem": parsed.problem or "it is not valid",
                "keys": ", ".join(schema_keys(schema)),
            },
        )
        again = await self._call(
            [*messages, Message("assistant", first.completion.text), Message("user", repair)],
            schema,
            item_hint,
        )
        reparsed = parse_reply(
            again.completion.text, schema, finish_reason=again.completion.finish_reason
        )
        return reparsed.value, 1, int(reparsed.tolerant), reparsed.problem

    # ---- deciding --------------------------------------------------------------------------

    def _compare(self, item: _Item, own: str | None) -> bool | None:
        """curation.grading on the judge's own answer vs the reference (None = not gradable)."""
        return answers_agree(
            own,
            item.answer,
            item.answer_type,
            choices=item.choices,
            settings=self._grading(item.benchmark),
        )

    def _label(self, reason: str) -> str:
        reason = " ".join(reason.split())
        if self.settings.simulated and not reason.startswith(SIMULATED_PREFIX):
            reason = f"{SIMULATED_PREFIX} {reason}"
        return reason

    def _unparseable(
        self,
        repairs: int,
        tolerant: int,
        *,
        problem: str | None,
        own_answer: str | None = None,
    ) -> Assessment:
        """The all-null verdict of a judge whose reply stayed unusable: never a pass."""
        reason = UNPARSEABLE if problem is None else f"{UNPARSEABLE}: {problem}"
        verdict = Verdict(None, None, None, self._label(reason), self.model)
        return Assessment(
            verdict=verdict,
            own_answer=own_answer,
            grader_match=None,
            stated_correct=None,
            category=categorize(verdict),
            repaired=repairs,
            tolerant=tolerant,
        )

    def _gradable(self, item: _Item) -> bool:
        """Could the grader compare an own answer with this item's reference at all?"""
        method = method_for(item.answer_type, self._grading(item.benchmark))
        return item.answer is not None and method not in ("code", "skip")

    def _decide(
        self, item: _Item, own: str | None, reply: Mapping[str, Any], repairs: int, tolerant: int
    ) -> Assessment:
        stated = reply.get("answer_correct")
        grader = self._compare(item, own)
        correct = grader if grader is not None else stated
        shown = "none" if own is None else json.dumps(own, ensure_ascii=False)
        if own is None and self._gradable(item):
            # no own answer on a gradable item: the bare claim is not evidence
            correct, grader = None, None
            said = "null" if stated is None else str(stated).lower()
            note = f"its stated answer_correct={said} does not decide; a reviewer must check"
            reason = f"{NO_OWN_ANSWER}; {note}. Judge: {reply['reason'].strip()}"
        else:
            if grader is None:
                note = f"judge's own answer: {shown}; not gradable, the judge's comparison decides"
            else:
                note = f"judge's own answer: {shown}; grader: "
                note += f"{'matches' if grader else 'differs from'} the reference"
                if stated is not None and stated != grader:
                    said = str(stated).lower()
                    note += f" (the judge stated answer_correct={said}; the grader decides)"
            reason = f"{reply['reason'].strip()} [{note}]"
        verdict = Verdict(
            correct=correct,
            well_posed=reply.get("well_posed"),
            format_kept=reply.get("format_kept") if item.parent_question is not None else None,
            reason=self._label(reason),
            model=self.model,
        )
        return Assessment(
            verdict=verdict,
            own_answer=own,
            grader_match=grader,
            stated_correct=stated,
            category=categorize(verdict),
            repaired=repairs,
            tolerant=tolerant,
        )


def _grading_lookup(
    benchmarks: Mapping[str, BenchmarkSettings],
) -> Callable[[str], GradingSettings]:
    """Per-benchmark grading options (``benchmarks.<b>.grading``), the defaults otherwise."""
    default = GradingSettings()

    def lookup(benchmark: str) -> GradingSettings:
        entry = benchmarks.get(benchmark)
        return entry.grading if entry is not None else default

    return lookup


def build_judge(
    params: ParamsFile,
    *,
    cache: CompletionCache | None = None,
    accounting: Accounting | None = None,
    environ: Mapping[str, str] | None = None,
) -> LLMJudge | None:
    """The judge ``params`` configure, or None when ``judge.enabled`` is false.

    ``judge.backend: null`` follows ``collect.backend`` here, the one place the two
    sections meet. Pass ``cache`` / ``accounting`` to share the caller's (BenchFill
    does); otherwise the judge opens ``llm.cache`` itself and keeps its own accounting
    (stage ``judge``).
    """
    if not params.judge.enabled:
        return None
    return LLMJudge(
        params.judge.resolved(params.collect.backend),
        llm=params.llm,
        cache=cache,
        accounting=accounting,
        grading=_grading_lookup(params.benchmarks),
        environ=environ,
    )


# params_file and benchmark: the call signature of fill.JudgeFactory (pipelines/fill.py)
def fill_judge(
    params: ParamsFile,
    *,
    params_file: str = "params.yaml",  # noqa: ARG001
    benchmark: str | None = None,  # noqa: ARG001
) -> LLMJudge | None:
    """BenchFill's judge factory: ``fill.judge: "curation.judge:fill_judge"`` in params.

    The same judge as :func:`build_judge` (``params_file`` and ``benchmark`` are part of
    the factory signature; the params are validated already, and grading options are
    looked up per candidate's benchmark anyway). BenchFill closes it with ``aclose``.
    """
    return build_judge(params)
