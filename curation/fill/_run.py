"""One benchmark's fill run: backends, panel, journal, the three methods, metrics.

The panel that calibrates children and its backend come from :mod:`curation.calibrate`
(:func:`~curation.calibrate.panel_setup`, :func:`~curation.calibrate.open_panel`);
the rewriter is the seeded :class:`~curation.fill._simulate.SimulatedRewriter`
offline, and otherwise ``fill.rewriter`` on the panel's own OpenAI-compatible backend.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from curation.calibrate import CalibrateSettings, PanelSetup, SimulatedWorld, open_panel
from curation.candidates import BASELINE, BENCHFILL, ORACLE, Candidate, Judge, candidates_frame
from curation.errors import ConfigError
from curation.fill._journal import Journal
from curation.fill._memory import Memory, seed_entries
from curation.fill._metrics import method_metrics, ratio
from curation.fill._prompts import load_prompts
from curation.fill._search import (
    Context,
    Track,
    new_track,
    run_baseline,
    run_benchfill,
    run_oracle,
    seed_index,
)
from curation.fill._settings import PROMPT_NAMES, FillSettings
from curation.fill._simulate import SimulatedRewriter
from curation.fill._targets import n_targets
from curation.fill._uncertainty import (
    AbilityDraws,
    AbilityError,
    calibrated,
    estimate_ability_error,
    panel_counts,
    reduction_interval,
    widen,
)
from curation.grading import GradingSettings
from curation.irt import Calibration
from curation.llm import (
    Backend,
    CollectSettings,
    CompletionCache,
    LLMSettings,
    PanelModel,
)
from curation.measure import max_gap, top_k_sum
from curation.settings import BackendName

JOURNAL = "journal.jsonl"


@dataclass
class RunLog:
    """What one run did (calls made, replayed, resumed): printed, never in the metrics.

    The committed ``metrics/fill/<b>.json`` must be the same whether a run was fresh or
    resumed from the journal, so this bookkeeping lives beside it, not in it.
    """

    requests: int = 0
    """LLM calls made by this run (rewriter, panel; the stage adds the judge's)."""
    cache_hits: int = 0
    judge_requests: int = 0
    resumed: bool = False
    """Finished rounds were replayed from the journal."""
    restarted: bool = False
    """A journal whose params or inputs differed was set aside."""


@dataclass
class FillResult:
    """What a fill run produced for one benchmark."""

    candidates: pl.DataFrame
    """Every candidate of every method (schema ``candidate``)."""
    memory: pl.DataFrame
    """BenchFill's and the baseline's memory (schema ``fill_memory``)."""
    metrics: dict[str, Any]
    """``metrics/fill/<benchmark>.json`` (schema ``fill_metrics``)."""
    z_before: np.ndarray
    z_after: dict[str, np.ndarray] = field(default_factory=dict)
    """Per method: the benchmark's z plus the inserted ones."""
    inserted: dict[str, list[Candidate]] = field(default_factory=dict)
    run: RunLog = field(default_factory=RunLog)
    """This run's bookkeeping (not part of :attr:`metrics`)."""

    def inserted_rows(self) -> dict[str, list[dict[str, Any]]]:
        """Per method, the inserted candidates as records (what the plot reads)."""
        return {m: [c.to_row() for c in cs] for m, cs in self.inserted.items()}


def _frame_hash(df: pl.DataFrame, columns: Sequence[str]) -> str:
    cols = [c for c in columns if c in df.columns]
    blob = df.select(cols).sort(cols[0]).write_csv()
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def fingerprint(
    *,
    benchmark: str,
    settings: FillSettings,
    calibrate: CalibrateSettings,
    backend: BackendName,
    panel: Sequence[PanelModel],
    calibration: Calibration,
    items: pl.DataFrame,
    difficulty: pl.DataFrame,
    collect: CollectSettings,
    llm: LLMSettings,
    grading: GradingSettings | None = None,
) -> str:
    """Hash of everything that determines the search (the journal's key)."""
    cal = {k: v for k, v in calibration.to_dict().items() if k != "created_by"}
    prompts = load_prompts(settings.prompts)
    payload = {
        "benchmark": benchmark,
        "settings": settings.fingerprint_dict(calibrate, backend=backend),
        "panel": [
            [
                m.name,
                m.model_id,
                m.temperature,
                m.max_tokens,
                m.top_p,
                m.system_prompt,
                sorted(m.prompt_templates.items()),
            ]
            for m in panel
        ],
        "calibration": cal,
        "items": _frame_hash(items, ["item", "question", "answer", "answer_type"]),
        "difficulty": _frame_hash(difficulty, ["item", "b", "se", "z", "z_low", "z_high"]),
        "templates": sorted(collect.templates.items()),
        "template_for": sorted(collect.template_for.items()),
        "send_seed": llm.send_seed,
        "grading": grading.model_dump() if grading is not None else None,
        "prompts": {n: prompts.sha(n) for n in PROMPT_NAMES},
    }
    blob = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _true_summary(
    methods: Mapping[str, Any], world: SimulatedWorld | None, z_world: np.ndarray | None
) -> dict[str, Any] | None:
    """Simulation only: the headline figures on the world's true z (None for a real run)."""
    if world is None or z_world is None:
        return None
    bf = methods[BENCHFILL].get("true_top_3_reduction_pct")
    return {
        "world": world.describe(),
        "world_top_3_before": round(top_k_sum(z_world, 3), 6),
        "benchfill_vs_oracle": ratio(bf, methods.get(ORACLE, {}).get("true_top_3_reduction_pct")),
        "benchfill_vs_baseline": ratio(
            bf, methods.get(BASELINE, {}).get("true_top_3_reduction_pct")
        ),
    }


async def afill(
    *,
    benchmark: str,
    items: pl.DataFrame,
    difficulty: pl.DataFrame,
    setup: PanelSetup,
    settings: FillSettings,
    cache: CompletionCache,
    workdir: str | os.PathLike[str],
    judge: Judge | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
    direct_panel: bool = False,
) -> FillResult:
    """Run BenchFill, the baseline and the oracle on one benchmark; resume from ``workdir``.

    ``setup`` comes from :func:`curation.calibrate.panel_setup` (params.yaml
    ``calibrate``: backend, seed, panel, adaptive, tolerance). Call inside the event
    loop that runs it (the real backend's connection pools belong to one loop).

    Offline, the panel answers from a :class:`~curation.calibrate.SimulatedWorld`
    drawn around the calibration (``fill.world``), and the figures are given twice: on
    the estimated z (what a real run can know) and on the world's true z.
    ``direct_panel`` draws the simulated panel's answers without calls (the stage and
    the benchmarks: identical counts, no made-up answers in the cache, no token counts).
    """
    panel, calibration = setup.panel, setup.calibration
    calibration_file = str(setup.calibration_file)
    seed = seed_entries(items, difficulty)
    if not seed:
        raise ConfigError(f"{benchmark}: no item has a difficulty; run annotate first")
    z_before = np.array([e.z for e in seed], dtype=np.float64)
    simulated = setup.simulated
    world = (
        SimulatedWorld(
            calibration,
            {e.item: e.b for e in seed},
            settings=settings.world,
            seed=settings.seed,
            models=[m.name for m in panel],
        )
        if simulated
        else None
    )
    z_world = z_axis = None
    if world is not None:  # a rewrite starts from the original's true b, not its fit
        seed = [dataclasses.replace(e, latent_b=world.true_b(e.item, e.b)) for e in seed]
        z_world = calibration.to_z(np.array([float(e.latent_b) for e in seed]))  # type: ignore[arg-type]
        z_axis = calibration.to_z(np.array([world.translated[e.item] for e in seed]))
    fp = fingerprint(
        benchmark=benchmark,
        settings=settings,
        calibrate=setup.settings,
        backend=setup.backend,
        panel=panel,
        calibration=calibration,
        items=items,
        difficulty=difficulty,
        collect=setup.collect,
        llm=setup.llm,
        grading=setup.grading,
    )
    journal = Journal(Path(workdir) / JOURNAL, fp)
    measuring = open_panel(
        setup,
        cache=cache,
        also_serve=(settings.rewriter,),  # a real rewriter shares the panel's pools
        environ=environ,
        world=world,
        direct=direct_panel,
    )
    rewriter: Backend = (
        SimulatedRewriter(seed=settings.seed, simulation=settings.simulation)
        if simulated
        else measuring.backend  # serves the rewriter model too (also_serve)
    )
    try:
        ctx = Context(
            benchmark=benchmark,
            settings=settings,
            calibrate=setup.settings,
            panel=measuring,
            rewriter=rewriter,
            rewriter_model=settings.rewriter,
            cache=cache,
            journal=journal,
            prompts=load_prompts(settings.prompts),
            llm=setup.llm,
            calibration_file=calibration_file,
            judge=judge,
            grading=setup.grading,
            log=log,
            world=world,
        )
        threshold = settings.duplicate_similarity
        index = seed_index(seed, threshold)
        tracks: dict[str, Track] = {BENCHFILL: new_track(BENCHFILL, seed, threshold, index)}
        await run_benchfill(ctx, tracks[BENCHFILL])
        if settings.baseline:
            tracks[BASELINE] = new_track(BASELINE, seed, threshold, index)
            await run_baseline(ctx, tracks[BASELINE], tracks[BENCHFILL].calls)
        if settings.oracle:
            tracks[ORACLE] = new_track(ORACLE, seed, threshold, index)
            answer_type = items["answer_type"].mode().sort()[0]
            run_oracle(ctx, tracks[ORACLE], answer_type)
    finally:
        if rewriter is not measuring.backend:
            await rewriter.aclose()
        await measuring.aclose()

    ability = (
        estimate_ability_error(
            [panel_counts(c) for t in tracks.values() for c in calibrated(t.candidates)],
            calibration,
        )
        if settings.intervals.ability_error
        else AbilityError(0.0, {}, 0)
    )
    draws = AbilityDraws(calibration, ability, draws=settings.intervals.draws, seed=settings.seed)
    if ability.sd > 0:
        for track in tracks.values():
            track.candidates = [widen(c, draws) for c in track.candidates]
            track.inserted = [widen(c, draws) for c in track.inserted]
    b_before = np.array([e.b for e in seed], dtype=np.float64)
    fixed = settings.fixed_budget(len(panel), setup.settings.adaptive)
    methods: dict[str, Any] = {}
    for name, track in tracks.items():
        methods[name] = method_metrics(
            track.candidates,
            track.inserted,
            z_before=z_before,
            n_targets=n_targets(settings.targets, settings.insertions),
            rounds=track.rounds,
            fixed_budget=fixed,
            tolerance=setup.settings.tolerance,
            z_axis_before=z_axis,
            z_world_before=z_world,
            reduction=reduction_interval(track.inserted, b_before, draws, seed=settings.seed),
        )
    source = ctx.source
    bf = methods[BENCHFILL]["top_3_reduction_pct"]
    metrics: dict[str, Any] = {
        "benchmark": benchmark,
        "source": source,
        "backend": setup.backend,
        "calibration": calibration_file,
        "panel_size": len(panel),
        "n_items": int(z_before.size),
        "targets": settings.targets
        if isinstance(settings.targets, str)
        else list(settings.targets),
        "insertions": n_targets(settings.targets, settings.insertions),
        "tolerance": setup.settings.tolerance,
        "top_3_before": round(top_k_sum(z_before, 3), 6),
        "max_gap_before": round(max_gap(z_before), 6),
        "fixed_budget_per_insertion": fixed,
        "adaptive": setup.settings.adaptive.model_dump(),
        "benchfill_vs_oracle": ratio(bf, methods.get(ORACLE, {}).get("top_3_reduction_pct")),
        "benchfill_vs_baseline": ratio(bf, methods.get(BASELINE, {}).get("top_3_reduction_pct")),
        "ability_error": {**ability.describe(), "draws": draws.n},
        "true": _true_summary(methods, world, z_world),
        "methods": methods,
    }
    candidates = candidates_frame(c for t in tracks.values() for c in t.candidates)
    memory = Memory(list(tracks[BENCHFILL].memory))
    if BASELINE in tracks:
        for e in tracks[BASELINE].memory:
            if e.origin != "benchmark":
                memory.add(e)
    return FillResult(
        candidates=candidates,
        memory=memory.to_frame(benchmark, calibration_file),
        metrics=metrics,
        z_before=z_before,
        z_after={
            name: np.concatenate([z_before, [float(c.z) for c in t.inserted if c.z is not None]])
            for name, t in tracks.items()
        },
        inserted={name: list(t.inserted) for name, t in tracks.items()},
        run=RunLog(
            requests=ctx.requests,
            cache_hits=ctx.cache_hits,
            resumed=journal.resumed,
            restarted=journal.restarted,
        ),
    )
