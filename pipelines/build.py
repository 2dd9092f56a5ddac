"""Stage `build`: versioned Hugging Face dataset of one benchmark (SPEC §8).

Reads data/items, data/difficulty, data/calibration, data/responses, the calibrated
subsets (data/subsets/<b>/ + metrics/subsets/<b>.json) and, when present, the reviewed
additions (``build.accepted``, default data/review/export/<b>.parquet). Writes
dist/<b>/<b>-<version>/ and metrics/build/<b>.json. ``version: auto`` bumps from the
release committed in releases/<b>.json (`curate release`, `curate publish`), so every
clone computes the same version. Publishing is `curate publish`, never
this stage.
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import json
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError
from curation.io.atomic import write_json
from curation.io.tables import read_json, read_table, require_output
from curation.items import write_skipped_metrics
from curation.measure import Thresholds
from curation.params_model import ParamsFile
from curation.paths import (
    GAPS_METRICS,
    build_metrics_path,
    calibration_path,
    items_path,
    release_path,
    responses_path,
    subset_path,
    subsets_metrics_path,
)
from curation.publish import (
    BuildInputs,
    BuildSettings,
    CardOptions,
    EstimationSubsetInput,
    SubsetInput,
    build_dataset,
)
from curation.schemas import validate_records
from curation.stage_main import stage_main
from curation.subsets import adaptive_name, estimation_name, read_difficulty


def _repo_id(settings: BuildSettings, benchmark: str) -> str | None:
    """``build.repo_id`` ("org/{benchmark}" template or a mapping benchmark -> repo id),
    else the repository the last ``curate publish --repo-id`` recorded in releases/."""
    configured = settings.repo_id_for(benchmark)
    if configured:
        return configured
    release = release_path(benchmark)
    if release.is_file():
        try:
            recorded = json.loads(release.read_text(encoding="utf-8")).get("repo_id")
        except (ValueError, AttributeError):
            return None
        return str(recorded) if recorded else None
    return None


def _subset_inputs(params: ParamsFile, benchmark: str) -> tuple[list[SubsetInput], str | None]:
    metrics_file = require_output(
        subsets_metrics_path(benchmark), produced_by=f"subsets@{benchmark}"
    )
    metrics = read_json(metrics_file, produced_by=f"subsets@{benchmark}")
    out = []
    for name, _spec, _m in params.subsets.names_for(benchmark):
        if name in metrics.get("skipped", {}):
            continue
        frame = read_table(subset_path(benchmark, name), produced_by=f"subsets@{benchmark}").sort(
            "k"
        )
        out.append(
            SubsetInput(
                name=name,
                target=str(frame.item(0, "target")) if frame.height else name,
                items=frame.get_column("item").to_list(),
                metrics=metrics.get("subsets", {}).get(name, {}),
            )
        )
    reference = metrics.get("reference")
    if reference is None:  # the card says why there is no τ
        note = ((metrics.get("full") or {}).get("tau") or {}).get("note")
        reference = f"none: {note}" if note else None
    return out, reference


def _estimation_inputs(params: ParamsFile, benchmark: str) -> list[EstimationSubsetInput]:
    """The ``estimate-<m>`` subsets (and ``adaptive-<m>`` tests) the subsets stage wrote,
    with their validation."""
    metrics_file = subsets_metrics_path(benchmark)
    metrics = read_json(metrics_file, produced_by=f"subsets@{benchmark}")
    made = (metrics.get("estimation") or {}).get("subsets") or {}
    recommended = set(((metrics.get("estimation") or {}).get("recommended") or {}).values())
    settings = params.subsets.estimation
    names = [
        name
        for m in settings.sizes_list()
        for name in (estimation_name(m), *((adaptive_name(m),) if settings.adaptive else ()))
    ]
    out = []
    for name in names:
        if name in ((metrics.get("estimation") or {}).get("skipped") or {}):
            continue
        if name not in made:
            raise InputError(
                f"no estimation subset {name!r}; rerun `dvc repro subsets@{benchmark}`",
                file=str(metrics_file),
                field="estimation",
            )
        frame = read_table(subset_path(benchmark, name), produced_by=f"subsets@{benchmark}")
        frame = frame.sort("k")
        out.append(
            EstimationSubsetInput(
                name=name,
                design=str(made[name]["design"]),
                items=frame.get_column("item").to_list(),
                weights=frame.get_column("weight").to_list(),
                weighted=bool(made[name]["weighted"]),
                estimation=made[name].get("estimation") or {},
                budget=made[name]["m"] if "start" in made[name] else None,
                block=made[name].get("block"),
                recommended=name in recommended,
            )
        )
    return out


def _gaps_intervals(benchmark: str) -> dict[str, Any] | None:
    """This benchmark's intervals from metrics/gaps.json (the card's uncertainty section);
    None when the gaps stage has not measured it (a build run on its own)."""
    if not GAPS_METRICS.is_file():
        return None
    entry = read_json(GAPS_METRICS, produced_by="gaps").get(benchmark) or {}
    intervals = entry.get("intervals")
    return intervals if isinstance(intervals, dict) else None


def _read_accepted(path: Path) -> pl.DataFrame:
    try:
        return pl.read_parquet(path)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(
            f"not a readable parquet table ({str(exc).strip()[:120]}); export it again with "
            "`curate review export`",
            file=str(path),
        ) from None


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `build` for one benchmark on the validated params: the line stage_main prints."""
    spec = params.benchmark(benchmark, params_file=params_file)
    settings = params.build
    if not spec.items.texts:
        (settings.dist / benchmark).mkdir(parents=True, exist_ok=True)
        write_skipped_metrics("build", benchmark, build_metrics_path(benchmark))
        return f"{benchmark}: skipped (no item texts)"
    items = read_table(items_path(benchmark), produced_by=f"ingest@{benchmark}")
    responses = read_table(responses_path(benchmark), produced_by=f"responses@{benchmark}")
    accepted_file = settings.accepted_path(benchmark)
    accepted = _read_accepted(accepted_file) if accepted_file.is_file() else None
    decisions = settings.decisions
    subsets: list[SubsetInput] = []
    estimation: list[EstimationSubsetInput] = []
    reference = None
    if settings.subsets:
        subsets, reference = _subset_inputs(params, benchmark)
        estimation = _estimation_inputs(params, benchmark)
    card = settings.card
    inputs = BuildInputs(
        benchmark=benchmark,
        domain=spec.domain,
        license=spec.license,
        source=spec.source,
        items=items,
        difficulty=read_difficulty(benchmark),
        calibration_file=calibration_path(benchmark),
        responses=responses,
        accepted=accepted,
        accepted_file=str(accepted_file) if accepted is not None else None,
        decisions_file=str(decisions) if decisions.is_file() else None,
        subsets=subsets,
        estimation_subsets=estimation,
        reference=reference,
        card=CardOptions(
            pretty_name=card.pretty_name_for(benchmark),
            language=tuple(card.language),
            tags=tuple(card.tags),
            task_categories=card.task_categories_for(spec.domain),
            repo_id=_repo_id(settings, benchmark),
            citation=spec.citation,
            source_datasets=tuple(spec.source_datasets or ()),
        ),
        figure_formats=tuple(params.plots.format),
        flag_thresholds=Thresholds(**params.gaps.thresholds.model_dump()),
        gaps_intervals=_gaps_intervals(benchmark),
    )
    result = build_dataset(
        inputs,
        dist_root=settings.dist,
        version=settings.version_for(benchmark),
        initial_version=settings.initial_version,
        max_shard_rows=settings.max_shard_rows,
        release_file=release_path(benchmark),
    )
    metrics = result.metrics()
    metrics_file = build_metrics_path(benchmark)
    validate_records([metrics], "build_metrics", file=str(metrics_file))
    write_json(metrics_file, metrics)
    return result.summary()


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.build``): validate params once, run, exit 0/2/3."""
    return stage_main("build", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
