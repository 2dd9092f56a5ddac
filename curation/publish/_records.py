"""Published records: items joined with their difficulty, calibration and provenance.

Every record carries the calibration its z was measured on (invariant 3), where the
responses behind z come from (``difficulty_source``, so simulated data is visible and
refused at publish time, invariant 4), its human review status and its lineage.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError
from curation.schemas import conform, empty_frame, field_names, validate_frame

PUBLISHED = "published_item"
ACCEPTED = "accepted_item"
_DIFFICULTY_COLS = ("z", "z_low", "z_high", "b", "se", "bound")


def calibration_id(benchmark: str, path: str | Path) -> str:
    """``<benchmark>:<first 12 hex of sha256 of the calibration's canonical JSON>``."""
    path = Path(path)
    if not path.is_file():
        raise InputError(
            f"missing; run `dvc repro annotate@{benchmark}` first",
            file=str(path),
        )
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc})", file=str(path)) from None
    digest = hashlib.sha256(json.dumps(obj, sort_keys=True).encode("utf-8")).hexdigest()
    return f"{benchmark}:{digest[:12]}"


def difficulty_sources(responses: pl.DataFrame) -> dict[str, str]:
    """Per item, where its responses come from: one source kind, ``mixed`` for collected
    plus imported, and ``simulated`` as soon as any response is simulated."""
    if responses.is_empty():
        return {}
    grouped = responses.group_by("item").agg(pl.col("source").unique().alias("sources"))
    out: dict[str, str] = {}
    for item, sources in grouped.iter_rows():
        kinds = set(sources)
        if "simulated" in kinds:
            out[item] = "simulated"
        elif len(kinds) == 1:
            out[item] = next(iter(kinds))
        else:
            out[item] = "mixed"
    return out


def original_records(
    items: pl.DataFrame,
    difficulty: pl.DataFrame,
    *,
    calibration: str,
    sources: dict[str, str],
) -> pl.DataFrame:
    """The ``original`` config: every original item with its z (null if unmeasured)."""
    orig = items.filter(pl.col("origin") == "original")
    diff_cols = [c for c in _DIFFICULTY_COLS if c in difficulty.columns]
    diff = difficulty.select("item", *diff_cols)
    df = orig.join(diff, on="item", how="left")
    measured = pl.col("z").is_not_null()
    df = df.with_columns(
        pl.when(measured).then(pl.lit(calibration)).otherwise(None).alias("calibration"),
        pl.col("item")
        .replace_strict(sources, default="unmeasured", return_dtype=pl.String)
        .alias("difficulty_source"),
        pl.lit("not-required").alias("review_status"),
        pl.lit(json.dumps({"origin": "original"})).alias("lineage"),
    )
    df = df.with_columns(
        pl.when(measured)
        .then(pl.col("difficulty_source"))
        .otherwise(pl.lit("unmeasured"))
        .alias("difficulty_source")
    )
    return conform(df, PUBLISHED)


@dataclass(frozen=True)
class ReviewSummary:
    """Counts of the reviewed additions offered to the build."""

    offered: int
    by_status: dict[str, int]
    by_origin: dict[str, int]
    """Accepted items only, by origin (benchfill, edited)."""
    accepted_file: str | None
    decisions_file: str | None
    n_decisions: int | None
    decisions_by_value: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "offered": self.offered,
            "by_status": dict(self.by_status),
            "accepted_by_origin": dict(self.by_origin),
            "accepted_file": self.accepted_file,
            "decisions_file": self.decisions_file,
            "n_decisions": self.n_decisions,
        }


def read_decisions(
    path: str | Path | None, benchmark: str | None = None
) -> tuple[int | None, dict[str, int]]:
    """Count the decisions of the review log (``benchmark``'s only, when given: another
    benchmark's review never changes this one's card) and tally their decision value."""
    if path is None or not Path(path).is_file():
        return None, {}
    counts: Counter[str] = Counter()
    n = 0
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        n += 1
        try:
            rec = json.loads(line)
        except ValueError:
            counts["unreadable"] += 1
            continue
        if isinstance(rec, dict):
            if benchmark is not None and rec.get("benchmark", benchmark) != benchmark:
                n -= 1
                continue
            value = rec.get("decision", rec.get("status"))
            if value is not None:
                counts[str(value)] += 1
    return n, dict(sorted(counts.items()))


def accepted_records(
    accepted: pl.DataFrame | None,
    *,
    benchmark: str,
    known_items: set[str],
    calibration: str,
    file: str | None,
    decisions_file: str | None = None,
) -> tuple[pl.DataFrame, ReviewSummary]:
    """Human-accepted additions as published records, and the review summary.

    ``accepted`` has the ``accepted_item`` columns (validated here); rows not accepted are
    counted but left out. Ids must be new and the benchmark must match.
    """
    n_decisions, by_value = read_decisions(decisions_file, benchmark)
    if accepted is None:
        return empty_frame(PUBLISHED), ReviewSummary(
            0, {}, {}, None, decisions_file, n_decisions, by_value
        )
    label = file or "accepted items"
    table = conform(accepted, ACCEPTED)
    validate_frame(table, ACCEPTED, file=label)
    wrong = table.filter(pl.col("benchmark") != benchmark)
    if wrong.height:
        raise InputError(
            f"belongs to benchmark {wrong.item(0, 'benchmark')!r}, not {benchmark!r}",
            file=label,
            record=f"item {wrong.item(0, 'item')}",
            field="benchmark",
        )
    dupes = table.filter(pl.col("item").is_duplicated())
    if dupes.height:
        raise InputError(
            "item id repeats", file=label, record=f"item {dupes.item(0, 'item')}", field="item"
        )
    clash = table.filter(pl.col("item").is_in(sorted(known_items)))
    if clash.height:
        raise InputError(
            "an added item must have a new id; this one is already an original item",
            file=label,
            record=f"item {clash.item(0, 'item')}",
            field="item",
        )
    status = Counter(table.get_column("review_status").to_list())
    keep = table.filter(pl.col("review_status") == "accepted")
    by_origin = Counter(keep.get_column("origin").to_list())
    df = keep.with_columns(
        pl.col("calibration").fill_null(pl.lit(calibration)),
        pl.lit(None, dtype=pl.String).alias("bound"),
    )
    summary = ReviewSummary(
        offered=table.height,
        by_status=dict(sorted(status.items())),
        by_origin=dict(sorted(by_origin.items())),
        accepted_file=file,
        decisions_file=decisions_file,
        n_decisions=n_decisions,
        decisions_by_value=by_value,
    )
    return conform(df, PUBLISHED), summary


def subset_records(original: pl.DataFrame, items: list[str], *, name: str) -> pl.DataFrame:
    """The records of a calibrated subset, in pick order."""
    order = pl.DataFrame({"item": items, "_k": list(range(len(items)))})
    df = order.join(original, on="item", how="left")
    missing = df.filter(pl.col("benchmark").is_null())
    if missing.height:
        raise InputError(
            f"subset {name!r} names item {missing.item(0, 'item')!r}, which is not an original "
            "item; rerun `dvc repro subsets@<benchmark>`",
        )
    return conform(df.sort("_k"), PUBLISHED)


def estimate_records(
    original: pl.DataFrame, items: list[str], weights: list[float], *, name: str
) -> pl.DataFrame:
    """The records of an estimation subset (config ``estimate-<m>``): the original items,
    in the subset's order, with the weight that rebuilds the full score."""
    from curation.publish._layout import PUBLISHED_ESTIMATE

    if len(items) != len(weights):
        raise InputError(f"estimation subset {name!r}: {len(items)} items, {len(weights)} weights")
    df = subset_records(original, items, name=name).with_columns(
        pl.Series("weight", [float(w) for w in weights], dtype=pl.Float64)
    )
    return conform(df, PUBLISHED_ESTIMATE)


def record_key_fields() -> list[str]:
    """Fields compared by the changelog (all of the published record)."""
    return field_names(PUBLISHED)
