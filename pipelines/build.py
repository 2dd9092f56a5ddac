"""Stage `build`: versioned Hugging Face dataset of one benchmark (SPEC §8).

Reads data/items, data/difficulty, data/calibration, data/responses, the calibrated
subsets (data/subsets/<b>/ + metrics/subsets/<b>.json) and, when present, the reviewed
additions (``build.accepted``, default data/review/accepted/<b>.parquet). Writes
dist/<b>/<b>-<version>/ and metrics/build/<b>.json. ``version: auto`` bumps from the
release committed in releases/<b>.json (`curate release`, `curate publish`), so every
clone computes the same version. Publishing is `curate publish`, never
this stage.
"""

from __future__ import annotations

import curation.blas_kernel  # noqa: F401  (first: OpenBLAS picks its kernels as numpy loads)

# isort: split
import json
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import ConfigError, InputError
from curation.io.atomic import write_json
from curation.io.tables import read_json, read_table, require_output
from curation.items import write_skipped_metrics
from curation.params_model import ParamsFile, legacy_mapping
from curation.paths import (
    DIST_ROOT,
    REVIEW_ACCEPTED_TEMPLATE,
    REVIEW_DECISIONS,
    build_metrics_path,
    build_record_path,
    calibration_path,
    items_path,
    release_path,
    responses_path,
    subset_path,
    subsets_metrics_path,
)
from curation.plots._style import plot_settings
from curation.publish import BuildInputs, CardOptions, SubsetInput, build_dataset
from curation.schemas import validate_records
from curation.stage_main import stage_main
from curation.subsets import read_difficulty, subsets_config

DEFAULT_ACCEPTED = REVIEW_ACCEPTED_TEMPLATE
DEFAULT_DECISIONS = str(REVIEW_DECISIONS)


def _settings(params: dict[str, Any], params_file: str) -> dict[str, Any]:
    settings = params.get("build") or {}
    if not isinstance(settings, dict):
        raise ConfigError(f"{params_file}: build: expected a mapping")
    return settings


def requested_version(settings: dict[str, Any], benchmark: str) -> str:
    """``build.version``: "auto", "X.Y.Z", or a mapping benchmark -> either."""
    raw = settings.get("version", "auto")
    if isinstance(raw, dict):
        raw = raw.get(benchmark, "auto")
    return str(raw)


def accepted_path(settings: dict[str, Any], benchmark: str) -> Path:
    return Path(str(settings.get("accepted") or DEFAULT_ACCEPTED).format(benchmark=benchmark))


def dist_root(settings: dict[str, Any]) -> Path:
    return Path(str(settings.get("dist") or DIST_ROOT))


def _repo_id(settings: dict[str, Any], benchmark: str) -> str | None:
    """``build.repo_id`` ("org/{benchmark}" template or a mapping benchmark -> repo id),
    else the repository the last ``curate publish --repo-id`` recorded in releases/."""
    raw = settings.get("repo_id")
    if isinstance(raw, dict):
        raw = raw.get(benchmark)
    if raw:
        return str(raw).format(benchmark=benchmark)
    release = release_path(benchmark)
    if release.is_file():
        try:
            recorded = json.loads(release.read_text(encoding="utf-8")).get("repo_id")
        except (ValueError, AttributeError):
            return None
        return str(recorded) if recorded else None
    return None


def _subset_inputs(
    params: dict[str, Any], benchmark: str, *, params_file: str
) -> tuple[list[SubsetInput], str | None]:
    cfg = subsets_config(params, benchmark, params_file=params_file)
    metrics_file = require_output(
        subsets_metrics_path(benchmark), produced_by=f"subsets@{benchmark}"
    )
    metrics = read_json(metrics_file, produced_by=f"subsets@{benchmark}")
    out = []
    for name, _spec, _m in cfg.names():
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
    raw = legacy_mapping(params)
    spec = params.benchmark(benchmark, params_file=params_file)
    settings = _settings(raw, params_file)
    if not spec.items.texts:
        (dist_root(settings) / benchmark).mkdir(parents=True, exist_ok=True)
        write_skipped_metrics("build", benchmark, build_metrics_path(benchmark))
        return f"{benchmark}: skipped (no item texts)"
    items = read_table(items_path(benchmark), produced_by=f"ingest@{benchmark}")
    responses = read_table(responses_path(benchmark), produced_by=f"responses@{benchmark}")
    accepted_file = accepted_path(settings, benchmark)
    accepted = _read_accepted(accepted_file) if accepted_file.is_file() else None
    decisions = Path(str(settings.get("decisions") or DEFAULT_DECISIONS))
    subsets: list[SubsetInput] = []
    reference = None
    if settings.get("subsets", True):
        subsets, reference = _subset_inputs(raw, benchmark, params_file=params_file)
    card = settings.get("card") or {}
    tasks = card.get("task_categories")
    if isinstance(tasks, dict):
        tasks = tasks.get(spec.domain)
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
        reference=reference,
        card=CardOptions(
            pretty_name=(card.get("pretty_name") or {}).get(benchmark)
            if isinstance(card.get("pretty_name"), dict)
            else card.get("pretty_name"),
            language=tuple(card.get("language") or ()),
            tags=tuple(card.get("tags") or ()),
            task_categories=tuple(tasks) if tasks else None,
            repo_id=_repo_id(settings, benchmark),
            citation=spec.citation,
            source_datasets=tuple(spec.source_datasets or ()),
        ),
        figure_formats=tuple(plot_settings(raw, where=params_file).format),
    )
    result = build_dataset(
        inputs,
        dist_root=dist_root(settings),
        version=requested_version(settings, benchmark),
        initial_version=str(settings.get("initial_version", "1.0.0")),
        max_shard_rows=int(settings.get("max_shard_rows", 100_000)),
        release_file=release_path(benchmark),
    )
    metrics = result.metrics()
    metrics_file = build_metrics_path(benchmark)
    validate_records([metrics], "build_metrics", file=str(metrics_file))
    # the same hashes outside dist/ for this folder alone: the committed metrics name only
    # the latest build, and `curate publish` of an older one built here checks against it
    for folder, files in metrics["files"].items():
        write_json(build_record_path(benchmark, folder), {"files": files})
    write_json(metrics_file, metrics)
    return result.summary()


def main(argv: list[str] | None = None) -> int:
    return stage_main("build", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
