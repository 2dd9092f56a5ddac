"""One benchmark's fill run: backends, panel, journal, the three methods, metrics.

The panel that calibrates children must be models *in the benchmark's calibration*
(online calibration holds their abilities fixed; a model without an ability has no
place on the scale). Offline (``backend: simulate``) the panel is the calibration's
models, answering by σ(θ̂_j − b) with exactly the calibration's θ̂_j, so the online
estimate of a child's b is consistent with its latent b. With endpoints
(``backend: openai``) it is the ``panel.models`` that are in the calibration.
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

from curation.errors import ConfigError
from curation.fill._annotate import Child, Panel
from curation.fill._config import FillSettings
from curation.fill._hooks import Judge
from curation.fill._journal import Journal
from curation.fill._memory import Memory, seed_entries
from curation.fill._metrics import method_metrics, ratio
from curation.fill._prompts import load_prompts
from curation.fill._search import (
    Context,
    new_track,
    run_baseline,
    run_benchfill,
    run_oracle,
)
from curation.fill._simulate import SimulatedRewriter, latent_of, register_child
from curation.fill._targets import n_targets
from curation.grading import GradingSettings
from curation.irt import Calibration
from curation.llm import (
    Backend,
    CollectSettings,
    CompletionCache,
    LLMSettings,
    OpenAIBackend,
    PanelModel,
    SimulatedBackend,
)
from curation.measure import max_gap, top_k_sum
from curation.schemas import conform, empty_frame

JOURNAL = "journal.jsonl"


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
    inserted: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


def select_panel(
    settings: FillSettings,
    calibration: Calibration,
    configured: Sequence[PanelModel] | None,
    *,
    benchmark: str,
    params_file: str = "params.yaml",
) -> list[PanelModel]:
    """The panel that calibrates children (see the module docstring)."""
    where = f"{params_file}: fill.panel"
    abilities = calibration.abilities
    if settings.backend == "simulate":
        names = list(settings.panel or calibration.panel)
        unknown = [n for n in names if n not in abilities]
        if unknown:
            raise ConfigError(
                f"{where}: {unknown} not in the calibration of {benchmark!r} "
                f"(models: {', '.join(calibration.panel)})"
            )
        return [
            PanelModel(name=n, model_id=n, temperature=0.0, max_tokens=64, ability=abilities[n])
            for n in names
        ]
    by_name = {m.name: m for m in configured or ()}
    if settings.panel is not None:
        missing = [n for n in settings.panel if n not in by_name]
        if missing:
            raise ConfigError(f"{where}: {missing} are not in panel.models")
        unknown = [n for n in settings.panel if n not in abilities]
        if unknown:
            raise ConfigError(
                f"{where}: {unknown} have no ability in the calibration of {benchmark!r}; "
                "online calibration can only use calibrated models"
            )
        chosen = [by_name[n] for n in settings.panel]
    else:
        chosen = [m for m in configured or () if m.name in abilities]
    if len(chosen) < 2:
        raise ConfigError(
            f"{where}: online calibration needs at least 2 panel models that are in the "
            f"calibration of {benchmark!r}; panel.models has "
            f"{[m.name for m in configured or ()]}, the calibration has "
            f"{list(calibration.panel)[:8]}{'…' if len(calibration.panel) > 8 else ''}. "
            "Collect this benchmark's responses with your panel (collect.enabled: true) and "
            "re-run annotate, or use fill.backend: simulate"
        )
    return chosen


def _frame_hash(df: pl.DataFrame, columns: Sequence[str]) -> str:
    cols = [c for c in columns if c in df.columns]
    blob = df.select(cols).sort(cols[0]).write_csv()
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def fingerprint(
    *,
    benchmark: str,
    settings: FillSettings,
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
        "settings": settings.fingerprint_dict(),
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
        "grading": dataclasses.asdict(grading) if grading is not None else None,
        "prompts": {n: prompts.sha(n) for n in ("system", "benchfill", "baseline", "reference")},
    }
    blob = json.dumps(payload, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def _backends(
    settings: FillSettings,
    panel: Sequence[PanelModel],
    calibration: Calibration,
    llm: LLMSettings,
    benchmark: str,
    environ: Mapping[str, str] | None,
) -> tuple[Backend, Backend, Callable[[Child], None] | None]:
    if settings.backend == "simulate":
        sim_panel = SimulatedBackend(
            benchmark=benchmark,
            truths={},
            abilities={m.name: calibration.abilities[m.name] for m in panel},
            seed=settings.seed,
        )

        def register(child: Child) -> None:
            latent = latent_of(child.question)
            if latent is None:
                raise ValueError(f"simulated child {child.item} states no latent b")
            register_child(
                sim_panel,
                child.item,
                answer=child.answer,
                answer_type=child.answer_type,
                choices=child.choices,
                latent_b=latent,
            )

        rewriter = SimulatedRewriter(seed=settings.seed, simulation=settings.simulation)
        return rewriter, sim_panel, register
    rewriter_model = settings.rewriter
    models = list(panel)
    if rewriter_model.name not in {m.name for m in models}:
        models.append(rewriter_model)
    backend = OpenAIBackend(models, llm, environ=environ)
    return backend, backend, None


async def afill(
    *,
    benchmark: str,
    items: pl.DataFrame,
    difficulty: pl.DataFrame,
    calibration: Calibration,
    calibration_file: str,
    settings: FillSettings,
    panel: Sequence[PanelModel],
    collect: CollectSettings,
    llm: LLMSettings,
    cache: CompletionCache,
    workdir: str | os.PathLike[str],
    judge: Judge | None = None,
    grading: GradingSettings | None = None,
    environ: Mapping[str, str] | None = None,
    log: Callable[[str], None] | None = None,
) -> FillResult:
    """Run BenchFill, the baseline and the oracle on one benchmark; resume from ``workdir``.

    ``panel`` comes from :func:`select_panel`. Call inside the event loop that runs it
    (the real backend's connection pools belong to one loop).
    """
    seed = seed_entries(items, difficulty)
    if not seed:
        raise ConfigError(f"{benchmark}: no item has a difficulty; run annotate first")
    z_before = np.array([e.z for e in seed], dtype=np.float64)
    fp = fingerprint(
        benchmark=benchmark,
        settings=settings,
        panel=panel,
        calibration=calibration,
        items=items,
        difficulty=difficulty,
        collect=collect,
        llm=llm,
        grading=grading,
    )
    journal = Journal(Path(workdir) / JOURNAL, fp)
    rewriter, panel_backend, register = _backends(
        settings, panel, calibration, llm, benchmark, environ
    )
    try:
        ctx = Context(
            benchmark=benchmark,
            settings=settings,
            panel=Panel(
                models=tuple(panel),
                backend=panel_backend,
                cache=cache,
                collect=dataclasses.replace(collect, seed=settings.seed, progress=False),
                llm=llm,
                calibration=calibration,
                benchmark=benchmark,
                grading=grading,
                register=register,
            ),
            rewriter=rewriter,
            rewriter_model=settings.rewriter,
            cache=cache,
            journal=journal,
            prompts=load_prompts(settings.prompts),
            llm=llm,
            calibration_file=calibration_file,
            judge=judge,
            grading=grading,
            log=log,
        )
        threshold = settings.duplicate_similarity
        tracks = {"benchfill": new_track("benchfill", seed, threshold)}
        await run_benchfill(ctx, tracks["benchfill"])
        if settings.baseline:
            tracks["baseline"] = new_track("baseline", seed, threshold)
            await run_baseline(ctx, tracks["baseline"], tracks["benchfill"].calls)
        if settings.oracle:
            tracks["oracle"] = new_track("oracle", seed, threshold)
            answer_type = items["answer_type"].mode().sort()[0]
            run_oracle(ctx, tracks["oracle"], answer_type)
    finally:
        if rewriter is not panel_backend:
            await rewriter.aclose()
        await panel_backend.aclose()

    fixed = settings.fixed_budget(len(panel))
    methods: dict[str, Any] = {}
    for name, track in tracks.items():
        methods[name] = method_metrics(
            track.candidates,
            track.inserted,
            z_before=z_before,
            n_targets=n_targets(settings.targets, settings.insertions),
            rounds=track.rounds,
            fixed_budget=fixed,
        )
    source = ctx.source
    bf = methods["benchfill"]["top_3_reduction_pct"]
    metrics: dict[str, Any] = {
        "benchmark": benchmark,
        "source": source,
        "backend": settings.backend,
        "calibration": calibration_file,
        "panel_size": len(panel),
        "n_items": int(z_before.size),
        "targets": settings.targets
        if isinstance(settings.targets, str)
        else list(settings.targets),
        "insertions": n_targets(settings.targets, settings.insertions),
        "tolerance": settings.tolerance,
        "top_3_before": round(top_k_sum(z_before, 3), 6),
        "max_gap_before": round(max_gap(z_before), 6),
        "fixed_budget_per_insertion": fixed,
        "adaptive": dataclasses.asdict(settings.adaptive),
        "benchfill_vs_oracle": ratio(bf, methods.get("oracle", {}).get("top_3_reduction_pct")),
        "benchfill_vs_baseline": ratio(bf, methods.get("baseline", {}).get("top_3_reduction_pct")),
        "methods": methods,
        "run": {
            "requests": ctx.requests,
            "cache_hits": ctx.cache_hits,
            "resumed": journal.resumed,
            "restarted": journal.restarted,
        },
    }
    rows = [c for t in tracks.values() for c in t.candidates]
    candidates = (
        conform(pl.DataFrame(rows, infer_schema_length=None), "candidate")
        if rows
        else empty_frame("candidate")
    )
    memory = Memory(list(tracks["benchfill"].memory))
    if "baseline" in tracks:
        for e in tracks["baseline"].memory:
            if e.origin != "benchmark":
                memory.add(e)
    return FillResult(
        candidates=candidates,
        memory=memory.to_frame(benchmark, calibration_file),
        metrics=metrics,
        z_before=z_before,
        z_after={
            name: np.concatenate([z_before, [float(c["z"]) for c in t.inserted]])
            for name, t in tracks.items()
        },
        inserted={name: list(t.inserted) for name, t in tracks.items()},
    )
