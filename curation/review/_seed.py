"""Seeding the queue from candidate tables (schema ``candidate``), parents looked up."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from curation.errors import InputError
from curation.review._settings import ReviewSettings
from curation.review._store import ReviewStore, SeedRecord, SeedReport
from curation.schemas import validate_frame

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings

CANDIDATE = "candidate"


def benchmark_meta(
    benchmarks: Mapping[str, BenchmarkSettings], benchmark: str
) -> tuple[str | None, str | None]:
    """(domain, license) of a benchmark from params.yaml, if it is configured there."""
    entry = benchmarks.get(benchmark)
    if entry is None:
        return None, None
    return entry.domain or None, entry.license or None


def read_candidates(path: str | Path) -> pl.DataFrame:
    """Read and validate a candidate table; (benchmark, candidate) must be unique."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            "missing; run the fill and judge stages (`dvc repro`) first, or pass a file",
            file=str(path),
        )
    try:
        df = pl.read_parquet(path)
    except Exception as exc:  # polars raises several error types for unreadable files
        raise InputError(f"not a readable parquet file ({exc})", file=str(path)) from None
    validate_frame(df, CANDIDATE, file=str(path))
    dupes = df.filter(pl.struct("benchmark", "candidate").is_duplicated())
    if dupes.height:
        raise InputError(
            "(benchmark, candidate) repeats",
            file=str(path),
            record=f"candidate {dupes.item(0, 'benchmark')}/{dupes.item(0, 'candidate')}",
            field="candidate",
        )
    return df


def _parents(
    config: ReviewSettings, benchmark: str
) -> tuple[dict[str, tuple[str, str | None]], str | None, str | None]:
    """item id -> (question, answer) of a benchmark's items, and its domain and license."""
    path = config.items_path(benchmark)
    if not path.is_file():
        return {}, None, None
    df = pl.read_parquet(path)
    cols = [c for c in ("item", "question", "answer") if c in df.columns]
    if cols != ["item", "question", "answer"]:
        raise InputError("expected item, question and answer columns", file=str(path))
    texts = {r[0]: (r[1], r[2]) for r in df.select(cols).iter_rows()}
    domain = df.item(0, "domain") if "domain" in df.columns and df.height else None
    lic = df.item(0, "license") if "license" in df.columns and df.height else None
    return texts, domain, lic


def seed_records(
    frames: Sequence[pl.DataFrame],
    *,
    config: ReviewSettings,
    benchmarks: Mapping[str, BenchmarkSettings],
) -> tuple[list[SeedRecord], int]:
    """Seed records for the candidates that go to review, and how many were filtered."""
    all_rows = [r for df in frames for r in df.iter_rows(named=True)]
    by_key: dict[tuple[str, str], dict[str, Any]] = {}
    for r in all_rows:  # first wins: a child's parent is the text it was rewritten from,
        by_key.setdefault((r["benchmark"], r["candidate"]), r)  # not a later reviewer edit
    cache: dict[str, tuple[dict[str, tuple[str, str | None]], str | None, str | None]] = {}
    out: list[SeedRecord] = []
    filtered = 0
    for row in all_rows:
        if row["status"] not in config.seed_statuses or row["method"] not in config.seed_methods:
            filtered += 1
            continue
        b = row["benchmark"]
        if b not in cache:
            cache[b] = _parents(config, b)
        texts, item_domain, item_license = cache[b]
        p_domain, p_license = benchmark_meta(benchmarks, b)
        parent = row["parent"]
        kind, pq, pa = "none", None, None
        if parent is not None:
            if parent in texts:
                kind, (pq, pa) = "item", texts[parent]
            elif (b, parent) in by_key:
                p = by_key[(b, parent)]
                kind, pq, pa = "candidate", p["question"], p["answer"]
            else:
                kind = "missing"
        out.append(
            SeedRecord(
                record=dict(row),
                parent_kind=kind,
                parent_question=pq,
                parent_answer=pa,
                domain=p_domain or item_domain,
                license=p_license or item_license,
            )
        )
    return out, filtered


def seed(
    store: ReviewStore,
    paths: Sequence[str | Path],
    *,
    config: ReviewSettings,
    benchmarks: Mapping[str, BenchmarkSettings],
) -> SeedReport:
    """Seed ``store`` from candidate tables. Idempotent: the same files add nothing.

    ``benchmarks`` (params' entries) give an item's domain and license when its parents'
    table does not."""
    frames = [read_candidates(p) for p in paths]
    records, filtered = seed_records(frames, config=config, benchmarks=benchmarks)
    label = ", ".join(str(p) for p in paths)
    report = store.seed(records, created_by=f"seed:{label}")
    report.filtered = filtered
    report.files = [str(p) for p in paths]
    return report
