"""A published subset as ``curate estimate --subset`` reads it: its items and, for an
estimation subset, the weights that rebuild the full score (issue 28).

A subset is named by its HF config (``estimate-<m>``, ``calibrated-<target>-<m>``), by
its file stem (``<target>-<m>``: data/subsets/<b>/<name>.parquet, the subsets stage's
output) or given as a file: a table (parquet, CSV, JSONL) with an ``item`` column and
optionally a ``weight`` column, e.g. a published config's parquet shard.
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
    return SubsetItems(name=name, items=items, weights=weights, source=str(path))
