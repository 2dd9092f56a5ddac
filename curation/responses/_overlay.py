"""Imported responses are inputs: ``data/raw/<b>/imports/<model>.parquet`` files that the
responses stage overlays on the configured matrix (``benchmarks.<b>.responses``).

`curate responses import` only ever writes here, never into ``data/responses`` (a DVC
output), so the next ``dvc repro`` rebuilds the matrix from them and keeps them. Each
file holds the cells of one model; a model present in the configured matrix has its
cells replaced by the import, a new one is added. A ``REPLACES_BASE`` marker beside the
files (written by ``--replace``) drops the configured matrix altogether.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

import polars as pl

from curation.errors import InputError
from curation.io.atomic import write_text
from curation.io.tables import write_table
from curation.paths import IMPORTS_REPLACE_MARKER, imports_dir
from curation.schemas import conform, validate_frame


def model_file_name(model: str) -> str:
    """The file of one imported model (its name, with path-unsafe characters replaced)."""
    slug = re.sub(r"[^A-Za-z0-9._=+-]+", "_", model).strip("._") or "model"
    return f"{slug}.parquet"


def import_files(benchmark: str, folder: Path | None = None) -> list[Path]:
    folder = folder or imports_dir(benchmark)
    return sorted(folder.glob("*.parquet")) if folder.is_dir() else []


def replaces_base(benchmark: str, folder: Path | None = None) -> bool:
    """Whether the imports replace the bundled responses (the marker file in the imports
    folder) instead of being overlaid on them."""
    return ((folder or imports_dir(benchmark)) / IMPORTS_REPLACE_MARKER).is_file()


def read_imports(
    benchmark: str, *, known_items: Collection[str], items_file: str, folder: Path | None = None
) -> pl.DataFrame | None:
    """Every imported cell of ``benchmark`` (validated), or None when nothing was imported."""
    frames = []
    known = set(known_items)
    for path in import_files(benchmark, folder):
        df = conform(pl.read_parquet(path), "response")
        validate_frame(df, "response", file=str(path))
        wrong = df.filter(pl.col("benchmark") != benchmark)
        if wrong.height:
            raise InputError(
                f"cells of benchmark {wrong.item(0, 'benchmark')!r}, not {benchmark!r}",
                file=str(path),
                field="benchmark",
            )
        unknown = [i for i in df.get_column("item").unique().sort().to_list() if i not in known]
        if unknown:
            raise InputError(
                f"{len(unknown)} items not in {items_file}, e.g. {unknown[0]!r}",
                file=str(path),
                field="item",
            )
        frames.append(df)
    if not frames:
        return None
    out = pl.concat(frames, how="vertical")
    dup = out.filter(pl.struct("model", "item").is_duplicated())
    if dup.height:
        raise InputError(
            f"model {dup.item(0, 'model')!r} is imported by two files",
            file=str(folder or imports_dir(benchmark)),
        )
    return out


def overlay(base: pl.DataFrame | None, imported: pl.DataFrame | None) -> pl.DataFrame:
    """``base`` without the imported models' cells, plus the imported cells (sorted)."""
    if imported is None:
        if base is None:
            raise ValueError("no responses: neither a configured matrix nor imports")
        return base
    if base is None:
        return imported.sort("model", "item")
    models = imported.get_column("model").unique().to_list()
    # a compact matrix (Enum ids, small counts: curation.responses._wide) meets the
    # imports in their (the schema's) types
    base = base.with_columns(
        pl.col(c).cast(imported.schema[c])
        for c in base.columns
        if c in imported.columns and base.schema[c] != imported.schema[c]
    )
    kept = base.filter(~pl.col("model").is_in(models))
    return pl.concat([kept, imported], how="vertical").sort("model", "item")


def write_imports(
    table: pl.DataFrame,
    benchmark: str,
    *,
    current: pl.DataFrame | None,
    replace_all: bool,
    folder: Path | None = None,
) -> list[str]:
    """Write one file per model of ``table`` into the imports folder; what it changed."""
    folder = folder or imports_dir(benchmark)
    lines: list[str] = []
    # one pass each over the table and the current matrix (a leaderboard import holds
    # thousands of models: filtering per model would be quadratic)
    parts = {
        str(key[0]): part.sort("item")
        for key, part in table.partition_by("model", as_dict=True, maintain_order=True).items()
    }
    models = sorted(parts)
    files: dict[str, str] = {}
    for model in models:
        other = files.setdefault(model_file_name(model), model)
        if other != model:
            raise InputError(
                f"models {other!r} and {model!r} would share the file "
                f"{model_file_name(model)}; rename one (--model, or in the log)",
                file=str(folder),
            )
    before_of: dict[str, int] = {}
    if replace_all:
        if current is not None and current.height:
            n_models = current.get_column("model").n_unique()
            lines.append(
                f"--replace: the whole matrix ({current.height} cells of {n_models} models) "
                f"is replaced by this import"
            )
    elif current is not None:
        counts = current.filter(pl.col("model").is_in(models)).group_by("model").len()
        before_of = dict(counts.iter_rows())
    for model in models:
        cells = parts[model]
        before = before_of.get(model, 0)
        if before:
            lines.append(
                f"model {model!r} was already in the matrix: its {before} cells are replaced "
                f"by {cells.height} imported cells"
            )
        else:
            lines.append(f"model {model!r} added: {cells.height} cells")
    # everything is checked; now write (each file atomically)
    if replace_all:
        for old in import_files(benchmark, folder):
            old.unlink()
        write_text(
            folder / IMPORTS_REPLACE_MARKER,
            "written by `curate responses import --replace`: the imports in this folder "
            "replace the matrix configured in params.yaml\n",
        )
    for model in models:
        write_table(parts[model], folder / model_file_name(model), "response")
    return lines
