"""Reading leaderboard per-sample detail tables (parquet) as response cells, at scale.

Public leaderboards publish, per model, the per-sample log of every task as parquet:
the Open LLM Leaderboard's ``<org>__<model>-details`` datasets (v2) and
``details_<org>__<model>`` datasets (v1) hold one table per task with lm-eval's sample
fields as columns -- ``doc_id``, ``doc``, ``target``, ``resps``, ``filtered_resps`` --
and the per-sample metric (``acc``, ``acc_norm``, ``exact_match``...) as a column, or,
in v1, inside a ``metrics`` struct. A local copy of such details is thousands of files
(one or more per model); this reader takes every file a path, folder or glob names and
makes one cell per (model, doc) with polars, reading only the two or three columns it
needs, so thousands of models load in seconds.

The model of a file is its ``model`` column when there is one (a table holding many
models), else the ``<org>__<model>`` of the dataset folder it sits in
(``<org>__<model>-details`` or ``details_<org>__<model>``, read back as
``org/model``), else the file's folder name, unless ``model`` overrides it. A metric
that is not 0/1 counts as correct only with an explicit ``threshold``.
"""

from __future__ import annotations

import glob
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from curation.errors import InputError

PREFERRED_METRICS = ("acc", "acc_norm", "exact_match", "pass@1", "em", "correct", "accuracy")
"""Metric column used when none is named (first present wins)."""

_DATASET = re.compile(r"^(?:details_(?P<v1>.+?__.+)|(?P<v2>.+?__.+?)-details)$")


@dataclass(frozen=True)
class DetailsRead:
    """What :func:`read_details` read: the cells and how they were chosen."""

    cells: pl.DataFrame
    metric: str
    n_docs: int
    n_models: int
    n_files: int
    model_from: str
    threshold: float | None = None

    def summary(self) -> str:
        """One line: metric, docs, models, files and where the model names came from."""
        metric = self.metric if self.threshold is None else f"{self.metric} >= {self.threshold:g}"
        return (
            f"leaderboard details: metric {metric}, {self.n_docs} docs, {self.n_models} models "
            f"from {self.n_files} files (names from {self.model_from})"
        )


def _files(path_or_glob: str | Path) -> list[Path]:
    path = Path(path_or_glob)
    if path.is_file():
        found = [path]
    elif path.is_dir():
        found = sorted(path.rglob("*.parquet"))
    else:
        found = sorted(Path(p) for p in glob.glob(str(path_or_glob), recursive=True))
        found = [p for p in found if p.is_file()]
    if not found:
        raise InputError(
            "no parquet detail files found (expected per-sample tables with doc_id and a "
            "metric column)",
            file=str(path_or_glob),
        )
    return found


def model_of_path(path: Path) -> tuple[str, str]:
    """(model, where the name came from) for a details file without a ``model`` column."""
    for part in reversed(path.parent.parts):
        m = _DATASET.match(part)
        if m:
            return (m.group("v1") or m.group("v2")).replace("__", "/", 1), "dataset folders"
    name = path.parent.name
    if not name or name in (".", "/"):
        raise InputError("cannot tell the model from the path; pass the model name", file=str(path))
    return name, "folders"


def _column(schema: pl.Schema, name: str) -> pl.Expr | None:
    """``name`` as an expression: a column, a ``struct.field`` path, or a ``metrics`` field."""
    if name in schema:
        return pl.col(name)
    head, _, rest = name.partition(".")
    if rest and isinstance(schema.get(head), pl.Struct):
        return pl.col(head).struct.field(rest)
    metrics = schema.get("metrics")
    if isinstance(metrics, pl.Struct) and name in {f.name for f in metrics.fields}:
        return pl.col("metrics").struct.field(name)
    return None


def _metric_names(schema: pl.Schema) -> list[str]:
    names = [n for n, t in schema.items() if n != "doc_id" and (t.is_numeric() or t == pl.Boolean)]
    metrics = schema.get("metrics")
    if isinstance(metrics, pl.Struct):
        names += [f.name for f in metrics.fields if f.dtype.is_numeric() or f.dtype == pl.Boolean]
    return names


def _choose_metric(schema: pl.Schema, metric: str | None, *, file: str) -> str:
    if metric is not None:
        if _column(schema, metric) is None:
            raise InputError(
                f"no metric column {metric!r} (numeric columns: "
                f"{', '.join(_metric_names(schema)) or 'none'})",
                file=file,
                field=metric,
            )
        return metric
    present = _metric_names(schema)
    for preferred in PREFERRED_METRICS:
        if preferred in present:
            return preferred
    if len(present) == 1:
        return present[0]
    raise InputError(
        f"cannot tell which column is the per-sample metric (candidates: "
        f"{', '.join(present) or 'none'}); name one with --metric",
        file=file,
        field="metric",
    )


def _schema(path: Path) -> pl.Schema:
    try:
        return pl.Schema(pl.read_parquet_schema(path))
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"not a readable parquet file ({exc})", file=str(path)) from None


def _read_group(
    paths: list[Path],
    schema: pl.Schema,
    *,
    model: str | None,
    model_column: str,
    metric: str | None,
    item_field: str,
) -> tuple[pl.LazyFrame, str, str]:
    """(model, item, value, file) rows of files sharing one schema, as one lazy scan.

    One scan over the list (not one per file) because a local copy of a leaderboard's
    details is thousands of files: polars then reads them in parallel, two or three
    columns each, and plans one query instead of a union of thousands.
    """
    file = str(paths[0])
    item = _column(schema, item_field)
    if item is None:
        raise InputError(
            f"no item id column {item_field!r} (columns start {list(schema)[:6]})",
            file=file,
            field=item_field,
        )
    name = _choose_metric(schema, metric, file=file)
    value = _column(schema, name)
    assert value is not None
    if model is not None:
        who, source = pl.lit(model), "--model"
    elif model_column in schema:
        who, source = pl.col(model_column).cast(pl.String), f"the {model_column!r} column"
    else:
        named = {str(p): model_of_path(p)[0] for p in paths}
        who = pl.col("file").replace_strict(named, return_dtype=pl.String)
        source = model_of_path(paths[0])[1]
    lazy = pl.scan_parquet(paths, include_file_paths="file").select(
        who.alias("model"),
        item.cast(pl.String).alias("item"),
        value.cast(pl.Float64).alias("value"),
        pl.col("file"),
    )
    return lazy, name, source


def read_details(
    path_or_glob: str | Path,
    *,
    model: str | None = None,
    model_column: str = "model",
    metric: str | None = None,
    item_field: str = "doc_id",
    threshold: float | None = None,
) -> DetailsRead:
    """Read per-sample detail parquet files of one task into cells, with what was chosen.

    ``path_or_glob``: a file, a folder (searched recursively) or a glob. ``model``: the
    model for every file (default: the ``model_column`` column, else the path).
    ``metric``: the per-sample metric column (default: the first of
    :data:`PREFERRED_METRICS` present). ``item_field``: the item id column (``doc_id``;
    ``doc.id`` for a field of the ``doc`` struct). Each (model, item) must appear once:
    several files of the same model and doc are reruns or several tasks, and refused.
    """
    frames: list[pl.LazyFrame] = []
    metrics: set[str] = set()
    sources: set[str] = set()
    files = _files(path_or_glob)
    groups: dict[tuple[tuple[str, str], ...], tuple[pl.Schema, list[Path]]] = {}
    for path in files:  # footers only
        schema = _schema(path)
        key = tuple((n, str(t)) for n, t in schema.items())
        groups.setdefault(key, (schema, []))[1].append(path)
    for schema, paths in groups.values():
        frame, name, source = _read_group(
            paths,
            schema,
            model=model,
            model_column=model_column,
            metric=metric,
            item_field=item_field,
        )
        frames.append(frame)
        metrics.add(name)
        sources.add(source)
        metric = metric or name  # every file is read with the first file's metric
    try:  # one query over every file: polars reads them in parallel, two columns each
        df = pl.concat(frames, how="vertical").collect()
    except pl.exceptions.PolarsError as exc:
        raise InputError(
            f"cannot read the details ({str(exc).splitlines()[0]})", file=str(path_or_glob)
        ) from None
    missing = df.filter(pl.col("item").is_null() | pl.col("model").is_null())
    if missing.height:
        raise InputError(
            "a row without a model or item id", file=missing.item(0, "file"), field=item_field
        )
    df = df.filter(pl.col("value").is_not_null())
    dup = df.filter(pl.struct("model", "item").is_duplicated())
    if dup.height:
        first = dup.filter(
            (pl.col("model") == dup.item(0, "model")) & (pl.col("item") == dup.item(0, "item"))
        )
        files_of = sorted(set(first.get_column("file").to_list()))
        where = " and ".join(files_of) if len(files_of) > 1 else f"{files_of[0]} (twice)"
        raise InputError(
            f"model {dup.item(0, 'model')!r} has item {dup.item(0, 'item')!r} more than once, "
            f"in {where}: reruns or several tasks; pass one task's latest files",
            file=str(path_or_glob),
            field=item_field,
        )
    (name,) = metrics
    values = df.get_column("value")
    if threshold is not None:
        correct = (values >= threshold).cast(pl.Int64)
    else:
        bad = ~values.is_in([0.0, 1.0])
        if bad.any():
            row = df.filter(bad).row(0, named=True)
            raise InputError(
                f"metric {name!r} is not 0/1 (value {row['value']:g} for model "
                f"{row['model']!r}, item {row['item']!r}): pass --threshold T to count "
                f"{name} >= T as correct, or name a 0/1 metric with --metric",
                file=row["file"],
                field=name,
            )
        correct = values.cast(pl.Int64)
    cells = (
        df.select("model", "item", pl.lit(1, dtype=pl.Int64).alias("n_trials"))
        .with_columns(correct.alias("n_correct"))
        .sort("model", "item")
    )
    return DetailsRead(
        cells=cells,
        metric=name,
        n_docs=cells.get_column("item").n_unique(),
        n_models=cells.get_column("model").n_unique(),
        n_files=len(files),
        model_from=", ".join(sorted(sources)),
        threshold=threshold,
    )


def details_responses(
    path_or_glob: str | Path,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
    model: str | None = None,
    model_column: str = "model",
    metric: str | None = None,
    item_field: str = "doc_id",
    threshold: float | None = None,
) -> tuple[pl.DataFrame, DetailsRead]:
    """Leaderboard details as the validated response table of ``benchmark``."""
    from curation.schemas import conform, validate_frame

    read = read_details(
        path_or_glob,
        model=model,
        model_column=model_column,
        metric=metric,
        item_field=item_field,
        threshold=threshold,
    )
    items = read.cells.get_column("item").unique()
    unknown = items.filter(~items.is_in(pl.Series(list(known_items), dtype=pl.String).implode()))
    if unknown.len():
        raise InputError(
            f"{unknown.len()} items of the details are not items of benchmark {benchmark!r} "
            f"({items_file}), e.g. {unknown.sort()[0]!r}; name the id column with --item-field",
            file=str(path_or_glob),
            field=item_field,
        )
    table = read.cells.with_columns(
        pl.lit(benchmark).alias("benchmark"), pl.lit("imported").alias("source")
    )
    table = conform(table, "response").sort("model", "item")
    validate_frame(table, "response", file=str(path_or_glob))
    return table, read
