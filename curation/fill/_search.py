"""The search: BenchFill, the uniform-parent baseline and the oracle, per benchmark.

For each target (SPEC §4), BenchFill runs rounds: the ``parents`` memory entries
closest to z* are each rewritten ``children`` times with the reference list, each
asked for the difficulty that lands on z* given what the run's children so far say of
the rewriter's offset and scale (:mod:`curation.fill._correction`); every
child is parsed, checked (gradable, not a near-duplicate, judge), annotated by the
panel with adaptive trials (screening) and calibrated online; the round's finalists
are then re-measured with fresh trials until the best is known to be within the
tolerance (:func:`refine`, ``fill.refine``); calibrated children join the memory (and
so become parents and references of the next round). The search for a target stops at
the first round with a child on target, or within the tolerance with its whole trial
budget spent, or after ``rounds``; the child with the smallest expected squared
deviation from z* is inserted after a confirmation with fresh trials.

The baseline gets, per insertion, exactly as many rewriter calls as BenchFill spent
on its insertion of the same rank: parents drawn uniformly from the benchmark, no
references, no memory; every child is annotated by the same adaptive rule and the
closest is inserted (best-of-N). The oracle places a point exactly at each target.
Each method keeps its own difficulties, so its targets follow its own insertions.

Every round and insertion is journaled (:mod:`curation.fill._journal`) before the
search moves on; a rerun replays them and redoes only the unfinished round, whose
LLM calls come from the completion cache.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from curation.calibrate import (
    BUDGET,
    MEASURED,
    OFF_TARGET,
    ON_TARGET,
    Z90,
    AdaptiveSettings,
    Annotation,
    CalibrateSettings,
    Child,
    Panel,
    SimulatedWorld,
    annotate,
    annotation_lineage,
    b_of_z,
    calibrate_annotations,
    decide,
    gradable_problem,
    latent_of,
    record_measurement,
    simulation_lineage,
    strip_simulated_header,
)
from curation.candidates import (
    CALIBRATED,
    COLLECTED,
    DUPLICATE,
    INSERTED,
    INVALID,
    JUDGE_REJECTED,
    ORACLE,
    SIMULATED,
    Candidate,
    Judge,
    Method,
    Source,
    passed,
)
from curation.fill._correction import RewriterFit, fit_rewriter, steps_of, unclipped_z
from curation.fill._journal import Journal
from curation.fill._memory import Memory, MemoryEntry, entry_from_candidate
from curation.fill._parse import ParseFailure, parse_rewrite
from curation.fill._prompts import Prompts, prompt_hash, rewrite_messages
from curation.fill._settings import FillSettings
from curation.fill._simulate import SIMULATED_REWRITER, Brief, SimulatedRewriter
from curation.fill._targets import Target, n_targets, next_target
from curation.fill._validity import DuplicateIndex, unsaid_answer_change
from curation.grading import GradingSettings
from curation.irt import Calibration
from curation.llm import (
    Backend,
    CallResult,
    ChatRequest,
    CompletionCache,
    LLMSettings,
    PanelModel,
    Sampling,
    cached_complete,
)

_SELECTABLE = (ON_TARGET, MEASURED, BUDGET)
_RAW_KEEP = 2000


@dataclass
class Context:
    """Everything one benchmark's search needs (built by the stage)."""

    benchmark: str
    settings: FillSettings
    calibrate: CalibrateSettings
    """How the children are measured (params.yaml ``calibrate``)."""
    panel: Panel
    rewriter: Backend
    rewriter_model: PanelModel
    cache: CompletionCache
    journal: Journal
    prompts: Prompts
    llm: LLMSettings
    calibration_file: str
    judge: Judge | None = None
    grading: GradingSettings | None = None
    log: Callable[[str], None] | None = None
    world: SimulatedWorld | None = None
    """Simulation: the world's truth (the panel answers from it; true z is scored on it)."""
    requests: int = 0
    """LLM calls made in this run (not served from the cache)."""
    cache_hits: int = 0

    @property
    def simulated(self) -> bool:
        return isinstance(self.rewriter, SimulatedRewriter)

    @property
    def source(self) -> Source:
        return SIMULATED if self.simulated or self.panel.source == SIMULATED else COLLECTED

    @property
    def rewriter_label(self) -> str:
        return SIMULATED_REWRITER if self.simulated else self.rewriter_model.name

    def count(self, result: CallResult) -> None:
        if result.cached:
            self.cache_hits += 1
        else:
            self.requests += 1

    def say(self, text: str) -> None:
        if self.log is not None:
            self.log(text)


@dataclass
class Track:
    """One method's state: its memory, its difficulties, what it inserted."""

    method: Method
    memory: Memory
    dups: DuplicateIndex
    z_start: np.ndarray
    z_now: list[float]
    candidates: list[Candidate] = field(default_factory=list)
    inserted: list[Candidate] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    """Rewriter calls per insertion."""
    rounds: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Job:
    """One rewrite to ask for."""

    slot: int
    parent: MemoryEntry
    sample: int
    kind: str
    references: tuple[MemoryEntry, ...] = ()
    request_z: float | None = None
    """The z asked for (BenchFill: the target corrected by :attr:`fit`); None = the target."""
    fit: RewriterFit | None = None
    """What was known of the rewriter when the request was made."""

    def asked_z(self, target: Target) -> float:
        """The z the prompt asks for."""
        return target.z if self.request_z is None else self.request_z


def seed_index(seed: Sequence[MemoryEntry], threshold: float) -> DuplicateIndex:
    """The near-duplicate index of the benchmark's own items (built once per run)."""
    dups = DuplicateIndex(threshold)
    for e in seed:
        dups.add(e.item, e.question, e.answer, e.answer_type, e.choices)
    return dups


def new_track(
    method: Method,
    seed: Sequence[MemoryEntry],
    threshold: float,
    index: DuplicateIndex | None = None,
) -> Track:
    """A method's fresh state; ``index`` (from :func:`seed_index`) is copied, not shared."""
    memory = Memory(seed)
    dups = index.copy() if index is not None else seed_index(seed, threshold)
    z = np.array([e.z for e in seed], dtype=np.float64)
    return Track(method, memory, dups, z, list(z))


# ---- one round ---------------------------------------------------------------------------


def _candidate_id(method: str, insertion: int, round_: int, slot: int) -> str:
    return f"{method}-{insertion + 1}-r{round_}-{slot:02d}"


def _cost(rewrite: CallResult | None, note: Annotation | None) -> dict[str, int]:
    c = rewrite.completion if rewrite is not None else None
    rp = (c.prompt_tokens or 0) if c else 0
    rc = (c.completion_tokens or 0) if c else 0
    panel = note.cost() if note else Annotation("").cost()
    return {
        "rewriter_calls": 1 if rewrite is not None else 0,
        "rewriter_prompt_tokens": rp,
        "rewriter_completion_tokens": rc,
        **panel,
        "tokens": rp + rc + panel["panel_prompt_tokens"] + panel["panel_completion_tokens"],
    }


def _with_panel_cost(spent: dict[str, int] | None, cost: dict[str, int]) -> dict[str, int]:
    """A child's cost so far plus the panel trials of a later phase (refinement,
    confirmation): every counter summed, and their tokens added to the total."""
    out = dict(spent or {})
    for k, v in cost.items():
        out[k] = int(out.get(k, 0)) + v
    out["tokens"] = int(out.get("tokens", 0)) + (
        cost["panel_prompt_tokens"] + cost["panel_completion_tokens"]
    )
    return out


def _request(ctx: Context, job: Job, target: Target) -> ChatRequest:
    rw = ctx.rewriter_model
    messages = rewrite_messages(
        ctx.prompts,
        kind=job.kind,
        parent=job.parent,
        parent_question=strip_simulated_header(job.parent.question),
        target_z=job.asked_z(target),
        references=job.references,
        reference_chars=ctx.settings.reference_chars,
    )
    seed = ctx.settings.seed + job.sample if ctx.llm.send_seed else None
    return ChatRequest(
        model=rw.name,
        model_id=rw.model_id,
        messages=messages,
        sampling=Sampling(rw.temperature, rw.max_tokens, rw.top_p, seed),
        sample=job.sample,
        stream=rw.stream,
        stage="fill",
        item=job.parent.item,
    )


async def run_round(
    ctx: Context,
    track: Track,
    target: Target,
    insertion: int,
    round_: int,
    jobs: Sequence[Job],
    *,
    stop_on_target: bool,
) -> list[Candidate]:
    """Rewrite, check, judge, annotate: the candidate records of one round."""
    s = ctx.settings
    cal = ctx.panel.calibration
    target_b = b_of_z(cal, target.z)
    requests = [_request(ctx, job, target) for job in jobs]
    if isinstance(ctx.rewriter, SimulatedRewriter):
        for job, req in zip(jobs, requests, strict=True):
            p = job.parent
            ctx.rewriter.expect(
                req,
                Brief(
                    parent=p.item,
                    parent_body=strip_simulated_header(p.question),
                    answer=p.answer,
                    answer_type=p.answer_type,
                    choices=p.choices,
                    parent_b=p.latent_b if p.latent_b is not None else p.b,
                    target_b=b_of_z(cal, job.asked_z(target)),
                    steered=job.kind == "benchfill",
                ),
            )
    rewrites = await asyncio.gather(
        *(cached_complete(ctx.rewriter, ctx.cache, req) for req in requests)
    )
    siblings = DuplicateIndex(s.duplicate_similarity)
    records: list[Candidate] = []
    lineages: list[dict[str, Any]] = []
    children: list[tuple[int, Child]] = []
    for job, req, result in zip(jobs, requests, rewrites, strict=True):
        ctx.count(result)
        parent = job.parent
        lineage: dict[str, Any] = {
            "insertion": insertion,
            "target_b": target_b,
            "gap": [target.gap.z_left, target.gap.z_right] if target.gap else None,
            "parents": parent.chain,
            "prompt": {
                "template": job.kind,
                "template_sha256": ctx.prompts.sha(job.kind),
                "system_sha256": ctx.prompts.sha("system"),
            },
            "references": [e.item for e in job.references],
            **_request_lineage(job, cal),
            "seed": s.seed,
            "sample": job.sample,
            "rewrite": {
                "finish_reason": result.completion.finish_reason,
                "served_model": result.completion.served_model,
            },
        }
        rec = Candidate(
            benchmark=ctx.benchmark,
            candidate=_candidate_id(track.method, insertion, round_, job.slot),
            method=track.method,
            parent=parent.item,
            round=round_,
            target_z=target.z,
            question="",
            answer=None,
            answer_type=parent.answer_type,
            status=INVALID,
            source=SIMULATED if ctx.simulated else COLLECTED,
            rewriter_model=ctx.rewriter_label,
            prompt_hash=prompt_hash(req.messages),
            calibration=ctx.calibration_file,
        )
        parsed = parse_rewrite(
            result.completion.text,
            answer_type=parent.answer_type,
            finish_reason=result.completion.finish_reason,
        )
        if isinstance(parsed, ParseFailure):
            rec = rec.replace(
                question=parsed.question, status_reason=f"unparseable rewrite: {parsed.reason}"
            )
            lineage["raw_output"] = result.completion.text[:_RAW_KEEP]
        else:
            rec = rec.replace(
                question=parsed.question,
                answer=parsed.answer,
                answer_type=parsed.answer_type,
                change=parsed.change,
            )
            choices = parsed.choices
            if choices is None and parsed.answer_type == "choice" and parent.choices:
                choices = parent.choices  # options not restated: the parent's are kept
                lineage["choices_from_parent"] = True
            if choices:
                lineage["choices"] = list(choices)
            problem = gradable_problem(parsed.answer, parsed.answer_type, choices, ctx.grading)
            dup = None
            if problem is None:
                dup = track.dups.find(
                    parsed.question, parsed.answer, parsed.answer_type, choices
                ) or siblings.find(parsed.question, parsed.answer, parsed.answer_type, choices)
            unsaid = None
            if problem is None and dup is None:
                unsaid = unsaid_answer_change(
                    parent.question, parent.answer, parsed.question, parsed.answer,
                    parsed.answer_type, parsed.change, choices, ctx.grading,
                )  # fmt: skip
            if problem is not None:
                rec = rec.replace(status_reason=f"not gradable: {problem}")
            elif dup is not None:
                rec = rec.replace(status=DUPLICATE, status_reason=dup.reason())
            elif unsaid is not None:
                rec = rec.replace(status_reason=unsaid)
            else:
                siblings.add(
                    rec.candidate, parsed.question, parsed.answer, parsed.answer_type, choices
                )
                children.append(
                    (
                        len(records),
                        Child(
                            rec.candidate,
                            parsed.question,
                            parsed.answer,
                            parsed.answer_type,
                            choices,
                        ),
                    )
                )
        records.append(rec)
        lineages.append(lineage)

    # judge (optional), concurrently
    if ctx.judge is not None and children:
        verdicts = await asyncio.gather(
            *(
                ctx.judge.judge(
                    records[i].judge_view(choices=lineages[i].get("choices"), lineage=lineages[i]),
                    jobs[i].parent.to_parent(),
                )
                for i, _ in children
            )
        )
        kept = []
        for (i, child), verdict in zip(children, verdicts, strict=True):
            records[i] = records[i].with_verdict(verdict)
            if passed(verdict):
                kept.append((i, child))
            else:
                records[i] = records[i].replace(
                    status=JUDGE_REJECTED, status_reason=f"judge: {verdict.reason}"
                )
        children = kept

    # annotate (adaptive), all children of the round in lock-step
    notes = await annotate(
        [c for _, c in children],
        ctx.panel,
        target_z=target.z,
        tolerance=ctx.calibrate.tolerance,
        rule=s.screening(ctx.calibrate.adaptive),
        stop_on_target=stop_on_target,
        on_result=ctx.count,
    )
    annotated: dict[int, Annotation] = {}
    for i, child in children:
        a = annotated[i] = notes[child.item]
        lineages[i].update(annotation_lineage(a))
        records[i] = record_measurement(
            records[i].replace(source=ctx.source),
            a,
            target_z=target.z,
            tolerance=ctx.calibrate.tolerance,
        )
    out = []
    for i, (job, rec, rewrite) in enumerate(zip(jobs, records, rewrites, strict=True)):
        lineage = lineages[i]
        lineage["cost"] = _cost(rewrite, annotated.get(i))
        if ctx.simulated and rec.status in (CALIBRATED, JUDGE_REJECTED):
            parent_b = job.parent.latent_b if job.parent.latent_b is not None else job.parent.b
            latent = latent_of(rec.question)
            extra: dict[str, Any] = {"parent_latent_b": parent_b}
            if ctx.world is not None and latent is not None:
                extra["true_z"] = ctx.world.true_z(rec.candidate, latent)
                extra["true_target_z"] = ctx.world.axis_z(target_b)
            lineage["simulation"] = simulation_lineage(cal, latent, **extra)
        out.append(rec.replace(lineage=json.dumps(lineage, sort_keys=True, ensure_ascii=False)))
    if s.refine.enabled:
        out = await refine(ctx, out, target)
    return out


def _request_lineage(job: Job, cal: Calibration) -> dict[str, Any]:
    """``request``: what a corrected request asked for, from which parent b, with which
    fit of the rewriter (what :func:`curation.fill._correction.step_of` reads back)."""
    if job.request_z is None or job.fit is None:
        return {}
    return {
        "request": {
            "z": job.request_z,
            "b": b_of_z(cal, job.request_z),
            "parent_b": job.parent.b,
            "parent_se": job.parent.se,
            "fit": job.fit.describe(),
        }
    }


def corrected_request(
    fit: RewriterFit, parent: MemoryEntry, target: Target, cal: Calibration, s: FillSettings
) -> float:
    """The z to ask for so that a child of ``parent`` lands on ``target``.

    On a linear map (``panel``, ``items``) it may lie outside [0, 1]: a target just
    above z = 0 from a rewriter that makes children harder than asked needs a request
    below the weakest model, which the prompt's scale can state and a clipped z cannot.
    """
    if not s.correction.enabled:
        return target.z
    b = fit.request(parent.b, b_of_z(cal, target.z), s.correction)
    return unclipped_z(cal, b)


# ---- refinement ---------------------------------------------------------------------------


def _child_of(rec: Candidate) -> Child:
    choices = rec.lineage_dict().get("choices")
    return Child(
        rec.candidate,
        rec.question,
        rec.answer or "",
        rec.answer_type,
        tuple(choices) if choices else None,
    )


def _counts(rec: Candidate) -> dict[str, list[int]]:
    return {m: [int(k), int(n)] for m, (k, n) in json.loads(rec.panel or "{}").items()}


async def refine(ctx: Context, records: Sequence[Candidate], target: Target) -> list[Candidate]:
    """Re-measure the round's finalists until the leader is known to be close (``fill.refine``).

    Each step ranks the round's calibrated children (all but the clearly off-target
    ones) by their expected squared deviation from z* (:func:`expected_sq_dev`, shrunk
    towards the round's spread), stops when the leader's is at most (tolerance/2)²,
    else gives ``batch`` fresh trials per model to each of the ``finalists`` best that
    still have budget. A child's extra trials use sample indices from
    ``adaptive.max_trials`` on (never the screening's), so a rerun is served from the
    cache; its record then carries the pooled counts and estimate.
    """
    s = ctx.settings
    rule, cal = s.refine, ctx.panel.calibration
    out = list(records)
    open_ = [
        i
        for i, r in enumerate(out)
        if r.status == CALIBRATED and r.z is not None and _outcome(r) != OFF_TARGET
    ]
    if not open_:
        return out
    counts = {i: _counts(out[i]) for i in open_}
    est = {i: (float(out[i].z), _se_z(out[i])) for i in open_}  # type: ignore[arg-type]
    extra = dict.fromkeys(open_, 0)
    cost = {i: Annotation("").cost() for i in open_}
    notes: dict[int, Annotation] = {}
    good_enough = (ctx.calibrate.tolerance / 2) ** 2  # the documented rule: root ESD <= tolerance/2
    while True:
        prior = _prior_of([est[i] for i in open_])
        score = {i: _esd(*est[i], target.z, prior) for i in open_}
        ranked = sorted(open_, key=lambda i: (score[i], out[i].candidate))
        if score[ranked[0]] <= good_enough:
            break
        lead = score[ranked[0]]
        chosen = [
            i
            for i in ranked[: rule.finalists]
            if extra[i] < rule.max_trials
            and (i == ranked[0] or _could_lead(est[i], target.z, lead))
        ]
        if not chosen:
            break
        groups: dict[int, list[int]] = {}
        for i in chosen:
            groups.setdefault(extra[i], []).append(i)
        batch_rule = AdaptiveSettings(
            enabled=False, first_batch=rule.batch, batch=rule.batch, max_trials=rule.batch
        )
        results = await asyncio.gather(
            *(
                annotate(
                    [_child_of(out[i]) for i in idx],
                    ctx.panel,
                    target_z=target.z,
                    tolerance=ctx.calibrate.tolerance,
                    rule=batch_rule,
                    stop_on_target=False,
                    on_result=ctx.count,
                    first_sample=ctx.calibrate.adaptive.max_trials + done,
                )
                for done, idx in groups.items()
            )
        )
        for idx, got in zip(groups.values(), results, strict=True):
            for i in idx:
                a = got[out[i].candidate]
                for m, (k, n) in a.counts.items():
                    cell = counts[i].setdefault(m, [0, 0])
                    cell[0] += k
                    cell[1] += n
                c = a.cost()
                cost[i] = {k: cost[i][k] + c[k] for k in c}
                extra[i] += rule.batch
                pooled = Annotation(out[i].candidate, {m: list(v) for m, v in counts[i].items()})
                calibrate_annotations([pooled], cal)
                if pooled.z is not None and pooled.se_z is not None:
                    notes[i] = pooled
                    est[i] = (pooled.z, pooled.se_z)
    for i, a in notes.items():
        out[i] = _refined(ctx, out[i], a, target, extra[i], cost[i])
    return out


def _could_lead(estimate: tuple[float, float], target_z: float, lead: float) -> bool:
    """Whether more trials could make this child the leader: its deviation at the near
    end of its 90% interval is below the leader's root expected squared deviation."""
    z, se = estimate
    return max(abs(z - target_z) - Z90 * se, 0.0) ** 2 < lead


def _refined(
    ctx: Context, rec: Candidate, a: Annotation, target: Target, extra: int, cost: dict[str, int]
) -> Candidate:
    """``rec`` with its pooled (screening + refinement) measurement and outcome."""
    adaptive, tolerance = ctx.calibrate.adaptive, ctx.calibrate.tolerance
    lineage = rec.lineage_dict()
    a.trials_per_model = int(lineage.get("trials_per_model") or 0) + extra
    lo, hi = ctx.panel.calibration.to_z(
        np.array([a.b - adaptive.reject_k * a.se, a.b + adaptive.reject_k * a.se])  # type: ignore[operator]
    )
    a.outcome = decide(
        z=float(a.z),  # type: ignore[arg-type]
        se_z=float(a.se_z),  # type: ignore[arg-type]
        lo=0.0 if a.bound == "all-solved" else float(lo),
        hi=1.0 if a.bound == "none-solved" else float(hi),
        bound=a.bound,
        target_z=target.z,
        tolerance=tolerance,
        rule=adaptive,
        trials_per_model=max(a.trials_per_model, adaptive.max_trials),
    )
    lineage["refinement"] = {
        "trials_per_model": extra,
        "first_sample": adaptive.max_trials,
        "screening": {
            "decision": lineage.get("decision"),
            "se_z": lineage.get("se_z"),
            "z": rec.z,
        },
    }
    lineage.update(annotation_lineage(a))
    lineage["cost"] = _with_panel_cost(lineage.get("cost"), cost)
    out = record_measurement(
        rec, a, target_z=target.z, tolerance=tolerance, reason_prefix="refined: "
    )
    return out.replace(lineage=json.dumps(lineage, sort_keys=True, ensure_ascii=False))


# ---- one insertion -----------------------------------------------------------------------


def _outcome(rec: Candidate) -> str | None:
    """The calibration outcome recorded in the lineage (``decision``), if any."""
    return rec.lineage_dict().get("decision")


def _absorb(track: Track, candidates: Sequence[Candidate]) -> None:
    """Calibrated children join the track's memory and duplicate index."""
    for rec in candidates:
        track.candidates.append(rec)
        if rec.status == CALIBRATED and rec.z is not None:
            entry = entry_from_candidate(rec)
            track.memory.add(entry)
            track.dups.add(
                entry.item, entry.question, entry.answer, entry.answer_type, entry.choices
            )


def _se_z(c: Candidate) -> float:
    se = c.lineage_dict().get("se_z")
    return float(se) if se is not None else float("inf")


def expected_sq_dev(
    c: Candidate, target_z: float, prior: tuple[float, float] | None = None
) -> float:
    """E[(z_true − z*)²] given the estimate ẑ ± SE(z): (posterior mean − z*)² + posterior var.

    With ``prior`` = (μ, τ²), the spread of the true z among the target's children
    (empirical Bayes), the posterior shrinks ẑ towards μ by τ²/(τ² + SE²); without it,
    (ẑ − z*)² + SE². Choosing by the estimate alone favours the children whose error
    happened to land them on z* (a winner's curse); this criterion prefers a child
    known to be close over one that only looks closest.
    """
    return _esd(float(c.z), _se_z(c), target_z, prior)  # type: ignore[arg-type]


def _esd(z: float, se: float, target_z: float, prior: tuple[float, float] | None) -> float:
    """:func:`expected_sq_dev` of an estimate ``z`` ± ``se``."""
    if prior is None or not np.isfinite(se):
        return (z - target_z) ** 2 + se**2
    mu, tau2 = prior
    w = tau2 / (tau2 + se**2)
    post = mu + w * (z - mu)
    return (post - target_z) ** 2 + w * se**2


def _prior(pool: Sequence[Candidate]) -> tuple[float, float] | None:
    """(μ, τ²) of the children's true z: mean and variance of the estimates less the
    mean sampling variance (method of moments); None with fewer than 4 children."""
    return _prior_of([(float(c.z), _se_z(c)) for c in pool])  # type: ignore[arg-type]


def _prior_of(estimates: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """:func:`_prior` of (z, SE) pairs."""
    z = np.array([e[0] for e in estimates], dtype=np.float64)
    se = np.array([e[1] for e in estimates], dtype=np.float64)
    ok = np.isfinite(se)
    if ok.sum() < 4:
        return None
    z, se = z[ok], se[ok]
    tau2 = max(float(z.var(ddof=1) - np.mean(se**2)), float(np.mean(se**2)) / 4, 1e-8)
    return float(z.mean()), tau2


def select(candidates: Sequence[Candidate], target_z: float) -> Candidate | None:
    """The calibrated candidate with the smallest expected squared deviation from
    ``target_z`` (:func:`expected_sq_dev`; ties: id); on-target children first.

    Children whose collection ended without a decision on precision ("stopped" by a
    sibling on target, or "off-target" after a batch or two) are considered only if no
    other child was calibrated: their z is too uncertain to compete.
    """
    calibrated = [c for c in candidates if c.status == CALIBRATED and c.z is not None]
    pool = (
        [c for c in calibrated if _outcome(c) == ON_TARGET]
        or [c for c in calibrated if _outcome(c) in _SELECTABLE]
        or calibrated
    )
    if not pool:
        return None
    prior = _prior(calibrated)
    return min(pool, key=lambda c: (expected_sq_dev(c, target_z, prior), c.candidate))


def _settled(c: Candidate, target_z: float, tolerance: float, max_trials: int) -> bool:
    """On target, or within tolerance with the whole trial budget spent (at least
    ``max_trials`` per model: a child only screened, not refined, has not): another
    round cannot measure a child more precisely, so it would only add noisy look-alikes."""
    outcome = _outcome(c)
    if outcome == ON_TARGET:
        return True
    lineage = c.lineage_dict()
    return (
        outcome == BUDGET
        and int(lineage.get("trials_per_model") or 0) >= max_trials
        and lineage.get("bound") is None
        and c.z is not None
        and abs(c.z - target_z) <= tolerance
    )


async def _search_target(
    ctx: Context,
    track: Track,
    insertion: int,
    target: Target,
    *,
    plan: Callable[[int, int], list[Job]],
    more: Callable[[int, int], bool],
    stop_on_target: bool,
) -> None:
    """Rounds for one target, then the insertion (each journaled, or replayed)."""
    method = track.method
    here: list[Candidate] = []
    round_ = 0
    while more(round_ + 1, len(here)):
        round_ += 1
        rec = ctx.journal.round(method, insertion, round_)
        if rec is not None:
            cands = [Candidate.from_row(c) for c in rec["candidates"]]
        else:
            jobs = plan(round_, len(here))
            cands = await run_round(
                ctx, track, target, insertion, round_, jobs, stop_on_target=stop_on_target
            )
            ctx.journal.record_round(
                method, insertion, round_, target_z=target.z, candidates=[c.to_row() for c in cands]
            )
        _absorb(track, cands)
        here.extend(cands)
        best_now = select(cands, target.z)
        ctx.say(
            f"{ctx.benchmark} {method} #{insertion + 1} round {round_}: target z* {target.z:.4f}, "
            f"{sum(c.status == CALIBRATED for c in cands)}/{len(cands)} calibrated"
            + (f", best z {best_now.z:.4f}" if best_now else "")
            + (" (journal)" if rec is not None else "")
        )
        m = ctx.calibrate
        if stop_on_target and any(
            _settled(c, target.z, m.tolerance, m.adaptive.max_trials) for c in here
        ):
            break
    best = select(here, target.z)
    done = ctx.journal.insertion(method, insertion)
    if best is not None and best.method != ORACLE and ctx.settings.confirm_trials > 0:
        if done is not None and done.get("confirmed") is not None:  # replayed
            best = Candidate.from_row(done["confirmed"])
        else:
            best = await confirm(ctx, best, target)
    if done is None:
        ctx.journal.record_insertion(
            method,
            insertion,
            target_z=target.z,
            selected=best.candidate if best else None,
            rounds=round_,
            confirmed=best.to_row() if best is not None and ctx.settings.confirm_trials else None,
        )
    track.calls.append(len(here))
    track.rounds.append(round_)
    track.targets.append(target)
    if best is not None:
        chosen = best.replace(
            status=INSERTED,
            selected=True,
            status_reason=f"inserted for target {target.z:.4f}; {best.status_reason}",
        )
        at = next(i for i, c in enumerate(track.candidates) if c.candidate == best.candidate)
        track.candidates[at] = chosen
        track.inserted.append(chosen)
        track.z_now.append(search_z(chosen))


def search_z(c: Candidate) -> float:
    """The z the search plans its next target with: search and confirmation trials pooled.

    The confirmation alone is what is *reported* (independent of the selection), but
    with a few fresh trials it is noisy, and a noisy z for a filled gap makes the next
    target fall in the same gap again. Pooling all trials is the most precise estimate;
    its small selection bias only steers the search, never a reported figure.
    """
    pooled = (c.lineage_dict().get("pooled") or {}).get("z")
    return float(pooled if pooled is not None else c.z)  # type: ignore[arg-type]


async def confirm(ctx: Context, best: Candidate, target: Target) -> Candidate:
    """Re-measure the selected child with ``confirm_trials`` fresh trials per model.

    The search picks the child whose estimate looks closest to z*, so that estimate is
    biased towards z* (a winner's curse). The confirmation asks for sample indices the
    search never used (from ``adaptive.max_trials + refine.max_trials`` on: past the
    screening's and the refinement's), so its estimate is independent
    of the selection; it becomes the record's b, SE, z and counts (what every later
    stage reads), and the selection's measurement moves to ``lineage.selection``.
    """
    s = ctx.settings
    lineage = best.lineage_dict()
    choices = lineage.get("choices")
    child = Child(
        best.candidate,
        best.question,
        best.answer or "",
        best.answer_type,
        tuple(choices) if choices else None,
    )
    rule = AdaptiveSettings(
        enabled=False,
        first_batch=s.confirm_trials,
        batch=s.confirm_trials,
        max_trials=s.confirm_trials,
    )
    notes = await annotate(
        [child],
        ctx.panel,
        target_z=target.z,
        tolerance=ctx.calibrate.tolerance,
        rule=rule,
        stop_on_target=False,
        on_result=ctx.count,
        first_sample=s.confirm_first_sample(ctx.calibrate.adaptive),
    )
    a = notes[child.item]
    if a.z is None:  # no graded answer: keep the selection's measurement
        return best
    cost = a.cost()
    lineage["selection"] = {
        "b": best.b,
        "se": best.se,
        "z": best.z,
        "z_low": best.z_low,
        "z_high": best.z_high,
        "se_z": lineage.get("se_z"),
        "decision": lineage.get("decision"),
        "n_trials": best.n_trials,
        "n_correct": best.n_correct,
        "panel": best.panel,
        "status_reason": best.status_reason,
    }
    pooled = Annotation(
        child.item,
        {
            m: [k + a.counts[m][0], n + a.counts[m][1]]
            for m, (k, n) in json.loads(best.panel or "{}").items()
            if m in a.counts
        },
    )
    calibrate_annotations([pooled], ctx.panel.calibration)
    lineage["pooled"] = {"b": pooled.b, "se": pooled.se, "z": pooled.z, "se_z": pooled.se_z}
    lineage["confirmation"] = {
        "trials_per_model": s.confirm_trials,
        "first_sample": s.confirm_first_sample(ctx.calibrate.adaptive),
        "se_z": a.se_z,
        "bound": a.bound,
        "cost": cost,
    }
    lineage["se_z"], lineage["bound"] = a.se_z, a.bound
    lineage["cost"] = _with_panel_cost(lineage.get("cost"), cost)
    confirmed = record_measurement(
        best,
        a,
        target_z=target.z,
        tolerance=ctx.calibrate.tolerance,
        reason_prefix="confirmed with fresh trials: ",
    )
    return confirmed.replace(lineage=json.dumps(lineage, sort_keys=True, ensure_ascii=False))


def _sample(s: FillSettings, insertion: int, k: int) -> int:
    """The rewrite's sample index: ``k`` within its insertion, insertions apart by the
    most rewrites one can ask for, so a target searched again (the last item did not
    split its gap) gets new rewrites, not the cached ones of the same prompt."""
    return insertion * s.rounds * s.children_per_round + k


async def run_benchfill(ctx: Context, track: Track) -> None:
    """BenchFill's targets, each searched from the memory with corrected requests."""
    s = ctx.settings
    cal = ctx.panel.calibration
    for i in range(n_targets(s.targets, s.insertions)):
        target = next_target(
            track.z_now, i, mode=s.targets, z_start=track.z_start, insertions=s.insertions
        )

        def plan(round_: int, _used: int, target: Target = target, i: int = i) -> list[Job]:
            parents = track.memory.closest(target.z, s.parents)
            fit = fit_rewriter(steps_of(track.candidates), s.correction)
            jobs = []
            for p_idx, parent in enumerate(parents):
                asked = corrected_request(fit, parent, target, cal, s)
                refs = tuple(track.memory.references(asked, s.references, exclude={parent.item}))
                for k in range(s.children):
                    jobs.append(
                        Job(
                            slot=p_idx * s.children + k,
                            parent=parent,
                            sample=_sample(s, i, (round_ - 1) * s.children + k),
                            kind="benchfill",
                            references=refs,
                            request_z=asked,
                            fit=fit,
                        )
                    )
            return jobs

        await _search_target(
            ctx,
            track,
            i,
            target,
            plan=plan,
            more=lambda r, _used: r <= s.rounds,
            stop_on_target=True,
        )


async def run_baseline(ctx: Context, track: Track, budgets: Sequence[int]) -> None:
    """Uniform-parent best-of-N with ``budgets[i]`` rewriter calls for insertion i."""
    s = ctx.settings
    originals = [e for e in track.memory if e.origin == "benchmark"]
    per_round = s.children_per_round
    for i, budget in enumerate(budgets):
        target = next_target(
            track.z_now, i, mode=s.targets, z_start=track.z_start, insertions=s.insertions
        )

        def plan(round_: int, used: int, budget: int = budget, i: int = i) -> list[Job]:
            n = min(per_round, budget - used)
            rng = np.random.default_rng([s.seed, 1, i, round_])
            picks = rng.integers(0, len(originals), size=n)
            return [
                Job(
                    slot=j,
                    parent=originals[int(p)],
                    sample=_sample(s, i, (round_ - 1) * per_round + j),
                    kind="baseline",
                )
                for j, p in enumerate(picks)
            ]

        await _search_target(
            ctx,
            track,
            i,
            target,
            plan=plan,
            more=lambda _r, used, budget=budget: used < budget,  # type: ignore[misc]
            stop_on_target=False,
        )


def run_oracle(ctx: Context, track: Track, answer_type: str) -> None:
    """A point placed exactly at each target (a reference, never an item)."""
    s = ctx.settings
    cal = ctx.panel.calibration
    for i in range(n_targets(s.targets, s.insertions)):
        target = next_target(
            track.z_now, i, mode=s.targets, z_start=track.z_start, insertions=s.insertions
        )
        b = b_of_z(cal, target.z)
        rec = Candidate(
            benchmark=ctx.benchmark,
            candidate=f"oracle-{i + 1}",
            method=ORACLE,
            parent=None,
            round=0,
            target_z=target.z,
            question=f"[oracle] a reference point exactly at z* = {target.z:.6f}; not an item",
            answer=None,
            answer_type=answer_type,
            status=INSERTED,
            status_reason="oracle: placed exactly at the target",
            source=SIMULATED,
            rewriter_model=None,
            prompt_hash=None,
            b=b,
            se=0.0,
            z=target.z,
            z_low=target.z,
            z_high=target.z,
            calibration=ctx.calibration_file,
            selected=True,
            lineage=json.dumps(
                {
                    "kind": "oracle",
                    "simulation": {"true_z": t_true, "true_target_z": t_true}
                    if (t_true := ctx.world.axis_z(b) if ctx.world is not None else None)
                    is not None
                    else None,
                    "insertion": i,
                    "gap": [target.gap.z_left, target.gap.z_right] if target.gap else None,
                    "cost": _cost(None, None),
                },
                sort_keys=True,
            ),
        )
        track.candidates.append(rec)
        track.inserted.append(rec)
        track.targets.append(target)
        track.calls.append(0)
        track.rounds.append(0)
        track.z_now.append(target.z)
