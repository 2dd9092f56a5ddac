"""Build one benchmark's versioned dataset under ``dist/<benchmark>/<benchmark>-<version>/``.

Layout (what the Hub's ``configs: data_files`` expects, plus local extras)::

    README.md                      card with YAML metadata       (uploaded)
    CHANGELOG.md                   one section per version        (uploaded)
    figures/*.png, *.svg           card figures (plots.format)    (uploaded)
    data/<config>/test-*.parquet   parquet shards per config      (uploaded)
    disk/<config>/                 DatasetDict.save_to_disk copy  (local)
    manifest.json                  digests, version, upload list  (local)
    release.json                   what `curate release` commits   (local)

The folder is assembled in the scratch area (``curation.io.atomic``) and swapped into
place when the stage commits, so a failed or killed build leaves the previous one
untouched, and ``dist/<benchmark>/`` then holds this build alone (as on a fresh clone).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import numpy as np
import polars as pl

from curation.errors import ConfigError, InputError
from curation.io.atomic import atomic_dir, replaces_dir, writes_now
from curation.io.tables import read_json
from curation.measure import Thresholds
from curation.plots import DEFAULT_FORMATS
from curation.plots.publish import (
    ecdf_panels,
    plot_ddm_gaps,
    plot_difficulty_ecdf,
    plot_difficulty_histogram,
)
from curation.publish._card import (
    DEFAULT_TASKS,
    FIGURES,
    CardContext,
    ConfigInfo,
    card_digest,
    finalize_card,
    render_card,
)
from curation.publish._checks import record_problems
from curation.publish._features import hf_features
from curation.publish._layout import MANIFEST, SPLIT, record_schema, upload_files
from curation.publish._records import (
    accepted_records,
    calibration_id,
    difficulty_sources,
    estimate_records,
    original_records,
    subset_records,
)
from curation.publish._verify import file_hashes
from curation.publish._version import (
    RELEASE_CANDIDATE,
    Bump,
    Diff,
    Release,
    SemVer,
    changelog_section,
    content_digests,
    content_hash,
    diff_records,
    frame_records,
    read_release,
)
from curation.schemas import validate_frame
from curation.subsets import Coverage, calibrated_config


@dataclass(frozen=True)
class SubsetInput:
    """A calibrated subset to publish as config ``calibrated-<name>``."""

    name: str
    target: str
    items: list[str]
    metrics: Mapping[str, Any] = field(default_factory=dict)
    """From metrics/subsets: ddm_target, full_ddm_target, tau (dict), full_tau, ...,
    estimation (the held-out validation block, or {"unavailable": why})."""


@dataclass(frozen=True)
class EstimationSubsetInput:
    """An estimation subset to publish as config ``estimate-<m>`` (its name), with the
    weights that rebuild the full score (data/subsets/<b>/estimate-<m>.parquet), or the
    start items of an adaptive test ``adaptive-<m>``."""

    name: str
    design: str
    items: list[str]
    weights: list[float]
    weighted: bool = True
    """The design gives weights (else each item weighs 1/m)."""
    estimation: Mapping[str, Any] = field(default_factory=dict)
    """The held-out validation block (metrics/subsets ``estimation.subsets.<name>``)."""
    budget: int | None = None
    """An adaptive test's items in all (None: a fixed subset of ``len(items)``)."""
    block: int | None = None
    """An adaptive test's items per step."""
    recommended: bool = False
    """The estimation subset of its size with the lowest held-out error."""


@dataclass(frozen=True)
class CardOptions:
    """The dataset card's metadata that does not come from the data (name, language,
    tags, Hub repository, citation)."""

    pretty_name: str | None = None
    language: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    task_categories: tuple[str, ...] | None = None
    repo_id: str | None = None
    """Hub repository named in the card's loading example (placeholder ORG/NAME if unset)."""
    citation: str | None = None
    """BibTeX of the source benchmark (``benchmarks.<b>.citation``)."""
    source_datasets: tuple[str, ...] = ()
    """Hub ids of the source datasets (``benchmarks.<b>.source_datasets``)."""


@dataclass
class BuildInputs:
    """Everything one benchmark's build reads."""

    benchmark: str
    domain: str
    license: str
    source: str
    items: pl.DataFrame
    difficulty: pl.DataFrame
    calibration_file: Path
    responses: pl.DataFrame
    accepted: pl.DataFrame | None = None
    accepted_file: str | None = None
    decisions_file: str | None = None
    subsets: list[SubsetInput] = field(default_factory=list)
    estimation_subsets: list[EstimationSubsetInput] = field(default_factory=list)
    reference: str | None = None
    card: CardOptions = field(default_factory=CardOptions)
    figure_formats: tuple[str, ...] = DEFAULT_FORMATS
    """Files per card figure (``plots.format``): the PNG the card links, SVG beside it, ..."""
    flag_thresholds: Thresholds = field(default_factory=Thresholds)
    """``gaps.thresholds``: the line each measure of the ddm_gaps figure is flagged at."""
    gaps_intervals: dict[str, Any] | None = None
    """This benchmark's ``intervals`` entry of metrics/gaps.json (the gaps stage's
    self-checked intervals, panel bootstrap and leave-one-out), for the card's
    "Uncertainty" section; None: the card says the gaps stage has not run."""


@dataclass(frozen=True)
class BuildResult:
    """What a build wrote: the version and its bump over the previous one, the dataset
    folder, the configs written, the diff against the previous version and the review
    summary."""

    benchmark: str
    version: str
    previous: str | None
    bump: Bump | None
    dataset_dir: Path
    configs: dict[str, dict[str, Any]]
    diff: Diff
    review: dict[str, Any]
    problems: list[str]
    warnings: list[str]
    files: dict[str, str] = field(default_factory=dict)
    """path in the folder -> sha256 of every file the build wrote (hashed while staged)."""

    @property
    def publishable(self) -> bool:
        return not self.problems

    def metrics(self) -> dict[str, Any]:
        return {
            "benchmark": self.benchmark,
            "version": self.version,
            "previous": self.previous,
            "bump": self.bump,
            "dataset_dir": self.dataset_dir.as_posix(),
            "configs": self.configs,
            "changes": self.diff.to_dict(),
            "review": self.review,
            "n_problems": len(self.problems),
            "publishable": self.publishable,
            "warnings": list(self.warnings),
            # this build's folder: what `curate publish` checks the folder against
            "files": {self.dataset_dir.name: dict(self.files)},
        }

    def summary(self) -> str:
        sizes = ", ".join(f"{k} {v['n']}" for k, v in self.configs.items())
        if self.previous is None:
            how = "first build"
        elif self.bump:
            how = f"{self.bump} bump from {self.previous}"
        else:
            how = f"same content as {self.previous}"
        text = f"{self.benchmark} {self.version} ({how}): {sizes} -> {self.dataset_dir}"
        if self.problems:
            text += f"\n  not publishable: {len(self.problems)} record(s), e.g. {self.problems[0]}"
        for w in self.warnings:
            text += f"\n  warning: {w}"
        return text


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _z(df: pl.DataFrame) -> np.ndarray:
    return df.get_column("z").drop_nulls().to_numpy().astype(np.float64)


def _coverage(df: pl.DataFrame) -> dict[str, Any]:
    z = _z(df)
    if z.size == 0:
        return {"n": 0}
    return Coverage.of(z, "uniform").to_dict()


@contextlib.contextmanager
def _quiet_datasets() -> Iterator[None]:
    was_enabled = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if was_enabled:
            datasets.enable_progress_bars()


def _provenance(inputs: BuildInputs, frames: Mapping[str, pl.DataFrame]) -> dict[str, Any]:
    filled = frames["filled"]
    item_sources = Counter(
        f"{origin}: {src}" for src, origin in filled.select("source", "origin").iter_rows()
    )
    resp = inputs.responses
    protocols: list[dict[str, Any]] = []
    proto_cols = [
        c for c in ("source", "prompt_template", "temperature", "max_tokens") if c in resp.columns
    ]
    if proto_cols and not resp.is_empty():
        protocols = [
            {k: v for k, v in row.items() if v is not None}
            for row in resp.select(proto_cols).unique().sort(proto_cols, nulls_last=True).to_dicts()
        ]
    return {
        "item_sources": dict(sorted(item_sources.items())),
        "responses": {
            "n_models": resp.get_column("model").n_unique() if not resp.is_empty() else 0,
            "n_cells": resp.height,
            "sources": dict(sorted(Counter(resp.get_column("source").to_list()).items()))
            if "source" in resp.columns
            else {},
            "protocols": protocols,
            "models": sorted(resp.get_column("model").unique().to_list())
            if not resp.is_empty()
            else [],
        },
    }


def _calibration_summary(path: Path) -> dict[str, Any]:
    obj = read_json(path, produced_by=f"annotate@{path.stem}")
    return {
        "model": obj.get("model", "?"),
        "n_panel": len(obj.get("panel") or obj.get("abilities") or []),
        "scale": (obj.get("scale") or {}).get("method", "?"),
    }


def _resolution_summary(inputs: BuildInputs) -> dict[str, Any]:
    """Levels, score step, clipped items and panel span of the original items' z.

    ``{"unavailable": reason}`` if the stored calibration, responses and difficulties do
    not line up (the card then says so instead of printing figures about another fit).
    """
    from curation.irt import Calibration
    from curation.measure import FittedBenchmark

    try:
        fitted = FittedBenchmark.load(
            inputs.responses, Calibration.load(inputs.calibration_file), inputs.difficulty
        )
        return fitted.resolution().to_metrics()
    except (InputError, ValueError, KeyError, OSError) as exc:
        return {"unavailable": str(exc)}


def assemble_frames(inputs: BuildInputs) -> tuple[dict[str, pl.DataFrame], dict[str, Any], str]:
    """The published tables per config (validated), the review summary and calibration id."""
    cal = calibration_id(inputs.benchmark, inputs.calibration_file)
    original = original_records(
        inputs.items,
        inputs.difficulty,
        calibration=cal,
        sources=difficulty_sources(inputs.responses),
    )
    added, review = accepted_records(
        inputs.accepted,
        benchmark=inputs.benchmark,
        known_items=set(inputs.items.get_column("item").to_list()),
        calibration=cal,
        file=inputs.accepted_file,
        decisions_file=inputs.decisions_file,
    )
    frames: dict[str, pl.DataFrame] = {
        "original": original,
        "filled": pl.concat([original, added], how="vertical"),
    }
    for sub in inputs.subsets:
        frames[calibrated_config(sub.name)] = subset_records(original, sub.items, name=sub.name)
    for est in inputs.estimation_subsets:
        frames[est.name] = estimate_records(original, est.items, est.weights, name=est.name)
    for config, df in frames.items():
        validate_frame(df, record_schema(config), file=f"{inputs.benchmark} config {config}")
    return frames, review.to_dict(), cal


def _card_context(
    inputs: BuildInputs,
    frames: Mapping[str, pl.DataFrame],
    review: dict[str, Any],
    cal: str,
    problems: list[str],
) -> CardContext:
    descriptions = {
        "original": "the source benchmark's items",
        "filled": "original + human-accepted BenchFill items",
    }
    configs = []
    for name, df in frames.items():
        cov = _coverage(df)
        desc = descriptions.get(name)
        est = next((e for e in inputs.estimation_subsets if e.name == name), None)
        if est is not None and est.budget is not None:
            desc = (
                f"the {df.height} start items of an adaptive test of {est.budget} items "
                f"(`curate estimate --next` chooses {est.block} more at a time)"
            )
        elif est is not None:
            desc = f"{df.height} items chosen to estimate the full score ({est.design} design" + (
                ", weighted)" if est.weighted else ")"
            )
        elif desc is None:
            sub = next(s for s in inputs.subsets if calibrated_config(s.name) == name)
            desc = f"{df.height} items quantile-matched to {sub.target} (difficulty-balanced)"
        configs.append(
            ConfigInfo(
                name=name,
                n=df.height,
                n_measured=cov["n"],
                description=desc,
                ddm_uniform=cov.get("ddm_uniform"),
                max_gap=cov.get("max_gap"),
                top_5_sum=cov.get("top_5_sum"),
            )
        )
    added = frames["filled"].filter(pl.col("origin") != "original")
    reviewers: dict[str, Any] = {}
    if inputs.accepted is not None and "reviewer" in inputs.accepted.columns:
        reviewers = dict(inputs.accepted.select("item", "reviewer").iter_rows())
    additions = [
        {
            "item": r["item"],
            "origin": r["origin"],
            "z": r["z"],
            "calibration": r["calibration"],
            "reviewer": reviewers.get(r["item"]),
            "lineage": r["lineage"],
        }
        for r in added.iter_rows(named=True)
    ]
    subsets = []
    for sub in inputs.subsets:
        m = sub.metrics
        tau = m.get("tau")
        subsets.append(
            {
                "config": calibrated_config(sub.name),
                "target": sub.target,
                "m": len(sub.items),
                "ddm_target": m.get("ddm_target"),
                "full_ddm_target": m.get("full_ddm_target"),
                "tau": tau.get("tau") if isinstance(tau, dict) else tau,
                "full_tau": m.get("full_tau"),
                "reference": inputs.reference,
                "tau_note": tau.get("note") if isinstance(tau, dict) else None,
                "estimation": dict(m.get("estimation") or {}),
            }
        )
    estimation = [
        {
            "config": est.name,
            "design": est.design,
            "m": est.budget if est.budget is not None else len(est.items),
            "start": len(est.items) if est.budget is not None else None,
            "block": est.block,
            "weighted": est.weighted,
            "recommended": est.recommended,
            "estimation": dict(est.estimation),
        }
        for est in inputs.estimation_subsets
    ]
    opts = inputs.card
    return CardContext(
        benchmark=inputs.benchmark,
        pretty_name=opts.pretty_name or f"{inputs.benchmark} (benchcurate)",
        domain=inputs.domain,
        license=inputs.license,
        source=inputs.source,
        configs=configs,
        calibration_id=cal,
        calibration=_calibration_summary(inputs.calibration_file),
        resolution=_resolution_summary(inputs),
        uncertainty=inputs.gaps_intervals or {},
        provenance=_provenance(inputs, frames),
        coverage_before=_coverage(frames["original"]),
        coverage_after=_coverage(frames["filled"]),
        additions=additions,
        review=review,
        subsets=subsets,
        estimation=estimation,
        problems=problems,
        task_categories=list(
            opts.task_categories or DEFAULT_TASKS.get(inputs.domain, ["question-answering"])
        ),
        language=list(opts.language),
        tags=list(opts.tags),
        repo_id=opts.repo_id,
        citation=opts.citation,
        source_datasets=list(opts.source_datasets),
        facts=_build_facts(inputs, frames, review),
        bounds={
            str(kind): int(n)
            for kind, n in frames["original"]
            .get_column("bound")
            .drop_nulls()
            .value_counts()
            .iter_rows()
        },
    )


def _build_facts(
    inputs: BuildInputs, frames: Mapping[str, pl.DataFrame], review: dict[str, Any]
) -> dict[str, Any]:
    """Facts of this build the card's Uses and Limitations sections state: the panel
    that anchors the scale, items outside its range, simulated data, review coverage."""
    cal = read_json(inputs.calibration_file, produced_by=f"annotate@{inputs.benchmark}")
    abilities = {str(k): float(v) for k, v in (cal.get("abilities") or {}).items()}
    original = frames["original"]
    z = original.get_column("z")
    resp = inputs.responses
    sources = resp.get_column("source") if "source" in resp.columns else None
    facts: dict[str, Any] = {
        "n_panel": len(abilities),
        "scale": (cal.get("scale") or {}).get("method"),
        "n_items": original.height,
        "n_unmeasured": int(z.is_null().sum()),
        "n_at_floor": int((z <= 0.0).sum()),
        "n_at_ceiling": int((z >= 1.0).sum()),
        "n_simulated_cells": int((sources == "simulated").sum()) if sources is not None else 0,
        "n_offered": int(review.get("offered") or 0),
        "n_accepted": int(sum((review.get("accepted_by_origin") or {}).values())),
        "n_decisions": review.get("n_decisions"),
    }
    if abilities:
        weakest = min(abilities, key=lambda m: abilities[m])
        strongest = max(abilities, key=lambda m: abilities[m])
        facts.update(
            weakest=weakest,
            strongest=strongest,
            theta_span=abilities[strongest] - abilities[weakest],
        )
    return facts


def dataset_dir_name(benchmark: str, version: str) -> str:
    """``<benchmark>-<version>``: unique per benchmark and version, so the ``datasets``
    cache (keyed by the folder name) never serves one build's rows for another."""
    return f"{benchmark}-{version}"


def _resolve_version(
    requested: str,
    *,
    initial: str,
    release: Release | None,
    new_records: Mapping[str, Any],
    digest: str,
    new_hash: str,
) -> tuple[SemVer, SemVer | None, Diff, Bump | None, list[str]]:
    """(version, base to diff against, diff, bump taken, warnings), from the last release."""
    warnings: list[str] = []
    new_digests = {
        c: {i: {"record": d} for i, d in items.items()}
        for c, items in content_digests(new_records).items()
    }
    if release is None:
        diff = diff_records({}, new_records)
        if requested == "auto":
            try:
                return SemVer.parse(initial), None, diff, None, warnings
            except ValueError as exc:
                raise ConfigError(f"build.initial_version: {exc}") from None
        try:
            return SemVer.parse(requested), None, diff, None, warnings
        except ValueError as exc:
            raise ConfigError(f"build.version: {exc} (or 'auto')") from None
    diff = diff_records(release.records(), new_digests)
    need = diff.required_bump(card_changed=release.card_digest != digest)
    if release.content_hash == new_hash:
        need = None
    if requested == "auto":
        if need is None:  # the released content: the released version
            base = SemVer.parse(release.previous) if release.previous else None
            return release.version, base, Diff(), None, warnings
        return release.version.bump(need), release.version, diff, need, warnings
    try:
        version = SemVer.parse(requested)
    except ValueError as exc:
        raise ConfigError(f"build.version: {exc} (or 'auto')") from None
    if need is not None and version < release.version.bump(need):
        warnings.append(
            f"version {version} under-bumps {release.version} (the last release): the "
            f"changes since then call for a {need} bump (≥ {release.version.bump(need)})"
        )
    return version, release.version, diff, need, warnings


def _write_shards(ds: datasets.Dataset, folder: Path, max_rows: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    n = max(1, -(-len(ds) // max_rows))
    for i in range(n):
        part = ds.select(range(i * max_rows, min(len(ds), (i + 1) * max_rows)))
        part.to_parquet(str(folder / f"{SPLIT}-{i:05d}-of-{n:05d}.parquet"))


def build_dataset(
    inputs: BuildInputs,
    *,
    dist_root: str | Path = "dist",
    version: str = "auto",
    initial_version: str = "1.0.0",
    max_shard_rows: int = 100_000,
    release_file: str | Path | None = None,
) -> BuildResult:
    """Build ``dist/<benchmark>/<benchmark>-<version>/`` from ``inputs`` (see the module doc).

    ``version: auto`` bumps from the release recorded in ``release_file``
    (``releases/<benchmark>.json``); without one the build is ``initial_version``.
    """
    if max_shard_rows < 1:
        raise ConfigError(f"build.max_shard_rows must be ≥ 1, got {max_shard_rows}")
    frames, review, cal = assemble_frames(inputs)
    seen: set[tuple[str, str]] = set()
    problems: list[str] = []
    for config, df in frames.items():
        for p in record_problems(df, config=config):
            if (p.item, p.field) not in seen:
                seen.add((p.item, p.field))
                problems.append(str(p))
    ctx = _card_context(inputs, frames, review, cal, problems)
    card = render_card(ctx)
    digest = card_digest(card)
    root = Path(dist_root) / inputs.benchmark
    new_records = {config: frame_records(df) for config, df in frames.items()}
    digests = content_digests(new_records)
    new_hash = content_hash(digests, digest)
    release = read_release(release_file) if release_file is not None else None
    ver, base, diff, bump, warnings = _resolve_version(
        version,
        initial=initial_version,
        release=release,
        new_records=new_records,
        digest=digest,
        new_hash=new_hash,
    )
    previous = str(base) if base is not None else None
    notes = ["dataset card updated (no data change)"] if bump == "patch" else []
    if problems:
        notes.append(f"not publishable: {len(problems)} record(s) refused")
    if release is not None and ver == release.version and release.changelog:
        changelog = release.changelog  # the released content: its own changelog
    else:
        section = changelog_section(str(ver), previous, diff, notes=notes)
        old_log = release.changelog if release is not None else ""
        old_log = old_log.split("\n", 2)[2] if old_log.startswith("# Changelog") else old_log
        changelog = (
            f"# Changelog of {inputs.benchmark}\n\n{section}\n{old_log.lstrip()}".rstrip() + "\n"
        )
    final = root / dataset_dir_name(inputs.benchmark, str(ver))

    # dist/<b>/ holds this build alone, as on a fresh clone: the folder is staged in the
    # scratch area and swapped in, older version folders go when the stage commits (the
    # DVC cache keeps every build dvc.lock ever recorded: `dvc checkout` brings one back)
    replaces_dir(root)
    # files inside the staged folder are written at once; the folder waits for the stage
    with atomic_dir(final) as tmp, writes_now():
        configs: dict[str, dict[str, Any]] = {}
        with _quiet_datasets():
            for config, df in frames.items():
                features = hf_features(record_schema(config))
                ds = datasets.Dataset.from_dict(df.to_dict(as_series=False), features=features)
                _write_shards(ds, tmp / "data" / config, max_shard_rows)
                datasets.DatasetDict({SPLIT: ds}).save_to_disk(str(tmp / "disk" / config))
                cov = _coverage(df)
                configs[config] = {
                    "n": df.height,
                    "n_measured": cov["n"],
                    "ddm_uniform": cov.get("ddm_uniform"),
                    "max_gap": cov.get("max_gap"),
                    "top_5_sum": cov.get("top_5_sum"),
                }
        before, after = _z(frames["original"]), _z(frames["filled"])
        series = {"original": before}
        if frames["filled"].height != frames["original"].height:
            series["filled"] = after
        fmt = inputs.figure_formats
        plot_difficulty_histogram(
            series,
            tmp / FIGURES["histogram"],
            title=f"{inputs.benchmark}: difficulty histogram",
            formats=fmt,
        )
        subset_series = [
            (
                calibrated_config(sub.name),
                sub.target,
                _z(frames[calibrated_config(sub.name)]),
                sub.metrics.get("ddm_target"),
            )
            for sub in inputs.subsets
        ]
        plot_difficulty_ecdf(
            ecdf_panels(series, subset_series),
            tmp / FIGURES["ecdf"],
            title=f"{inputs.benchmark}: ECDF of every config against its target",
            formats=fmt,
        )
        plot_ddm_gaps(
            before,
            after,
            tmp / FIGURES["ddm_gaps"],
            thresholds=inputs.flag_thresholds,
            formats=fmt,
        )
        (tmp / "README.md").write_text(
            finalize_card(card, version=str(ver), previous=previous), encoding="utf-8"
        )
        (tmp / "CHANGELOG.md").write_text(changelog, encoding="utf-8")
        files = {
            rel: {"sha256": _sha256(tmp / rel), "size": (tmp / rel).stat().st_size}
            for rel in upload_files(tmp)
        }
        manifest = {
            "benchmark": inputs.benchmark,
            "version": str(ver),
            "previous": previous,
            "bump": bump,
            "calibration": cal,
            "card_digest": digest,
            "configs": {k: v["n"] for k, v in configs.items()},
            "split": SPLIT,
            "files": files,
            "publishable": not problems,
            "problems": problems,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        candidate = {
            "benchmark": inputs.benchmark,
            "version": str(ver),
            "previous": previous,
            "content_hash": new_hash,
            "card_digest": digest,
            "configs": digests,
            "changelog": changelog,
        }
        (tmp / RELEASE_CANDIDATE).write_text(
            json.dumps(candidate, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )
        staged_hashes = file_hashes(tmp)
    return BuildResult(
        benchmark=inputs.benchmark,
        version=str(ver),
        previous=previous,
        bump=bump,
        dataset_dir=final,
        configs=configs,
        diff=diff,
        review=review,
        problems=problems,
        warnings=warnings,
        files=staged_hashes,
    )
