"""A published subset as ``curate estimate --subset`` reads it: its items and, for an
estimation subset, the weights that rebuild the full score (issue 28).

A subset is named by its HF config (``estimate-<m>``, ``calibrated-<target>-<m>``), by
its file stem (``<target>-<m>``: data/subsets/<b>/<name>.parquet, the subsets stage's
output) or given as a file: a table (parquet, CSV, JSONL) with an ``item`` column and
optionally a ``weight`` column, e.g. a published config's parquet shard. The subsets
stage's files also carry the conformal ``interval_scale`` their held-out validation
measured and, for an adaptive test (``adaptive-<m>``), its budget m and step ``block``;
a quantile-matched subset's scale is read from metrics/subsets/<b>.json.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from curation.errors import InputError


@dataclass(frozen=True)
class SubsetItems:
    """The items of a subset, its weights (None: unweighted) and where they came from."""

    name: str
    items: tuple[str, ...]
    weights: tuple[float, ...] | None
    source: str
    interval_scale: float | None = None
    """The conformal scale of the subset's held-out validation (None: unknown)."""
    budget: int | None = None
    """An adaptive test's items in all (its ``items`` are the start); None: a fixed subset."""
    block: int | None = None
    """An adaptive test's items per step."""

    @property
    def adaptive(self) -> bool:
        """An adaptive test: answers on any item count, the next items are chosen."""
        return self.budget is not None

    def weight_map(self) -> dict[str, float] | None:
        if self.weights is None:
            return None
        return dict(zip(self.items, self.weights, strict=True))


def _read(path: Path) -> pl.DataFrame:
    from curation.io.readers import detect_format, read_frame

    if path.is_dir():
        shards = sorted(path.glob("*.parquet"))
        if not shards:
            raise InputError("no parquet file in the folder", file=str(path))
        return pl.concat([pl.read_parquet(s) for s in shards], how="diagonal_relaxed")
    try:
        return read_frame(path, detect_format(path))
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        raise InputError(
            f"not a readable table ({str(exc).strip()[:120]})", file=str(path)
        ) from None


def subset_file(benchmark: str, spec: str) -> Path:
    """The file a subset name stands for (a path that exists is itself)."""
    from curation.paths import subset_path
    from curation.subsets import CALIBRATED_PREFIX

    given = Path(spec)
    if given.exists():
        return given
    stem = spec.removeprefix(CALIBRATED_PREFIX)
    return subset_path(benchmark, stem)


def load_subset(benchmark: str, spec: str) -> SubsetItems:
    """The subset ``spec`` of ``benchmark`` (a config name, a file stem or a file)."""
    path = subset_file(benchmark, spec)
    if not path.exists():
        raise InputError(
            f"no subset {spec!r} of {benchmark!r}: give a config name (estimate-<m>, "
            "calibrated-<target>-<m>) the subsets stage wrote (`dvc repro "
            f"subsets@{benchmark}`), or a table with an item column",
            file=str(path),
        )
    df = _read(path)
    if "item" not in df.columns:
        raise InputError("a subset table needs an item column", file=str(path), field="item")
    if "k" in df.columns:
        df = df.sort(pl.col("k").cast(pl.Int64, strict=False))
    item_col = df["item"].cast(pl.String)
    items = tuple(str(i) for i in item_col.to_list())
    dupes = item_col.filter(item_col.is_duplicated())
    if dupes.len():
        raise InputError(f"item {str(dupes.min())!r} repeats", file=str(path), field="item")
    weights: tuple[float, ...] | None = None
    if "weight" in df.columns:
        raw = df["weight"].cast(pl.Float64, strict=False).to_list()
        bad = [
            i for i, w in zip(items, raw, strict=True) if w is None or not math.isfinite(w) or w < 0
        ]
        if bad:
            raise InputError(
                f"item {bad[0]!r} has no non-negative weight", file=str(path), field="weight"
            )
        total = float(sum(raw))
        if total <= 0:
            raise InputError("the weights sum to 0", file=str(path), field="weight")
        weights = tuple(float(w) / total for w in raw)
    name = path.stem if path.is_file() else path.name
    if not Path(spec).exists():
        name = spec
    scale = _first(df, "interval_scale")
    if scale is None and not Path(spec).exists():
        scale = _metrics_scale(benchmark, spec)
    adaptive = "design" in df.columns and "adaptive" in df["design"].cast(pl.String).to_list()
    budget = _first(df, "m") if adaptive else None
    block = _first(df, "block") if adaptive else None
    return SubsetItems(
        name=name,
        items=items,
        weights=None if adaptive else weights,
        source=str(path),
        interval_scale=scale,
        budget=None if budget is None else int(budget),
        block=None if block is None else int(block),
    )


def _first(df: pl.DataFrame, column: str) -> float | None:
    """The first non-null, finite, positive value of ``column`` (None without one)."""
    if column not in df.columns:
        return None
    for v in df[column].cast(pl.Float64, strict=False).to_list():
        if v is not None and math.isfinite(v) and v > 0:
            return float(v)
    return None


def _metrics_scale(benchmark: str, spec: str) -> float | None:
    """A subset's conformal scale from metrics/subsets/<b>.json (quantile-matched subsets
    keep it there; their files hold items only). None when not recorded."""
    import json

    from curation.paths import subsets_metrics_path
    from curation.subsets import CALIBRATED_PREFIX

    path = subsets_metrics_path(benchmark)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    stem = spec.removeprefix(CALIBRATED_PREFIX)
    for where in (doc.get("subsets") or {}, (doc.get("estimation") or {}).get("subsets") or {}):
        block = (where.get(stem) or where.get(spec) or {}).get("estimation") or {}
        value = block.get("interval_scale")
        if isinstance(value, int | float) and math.isfinite(value) and value > 0:
            return float(value)
    return None
