"""Response matrices (wide or long, CSV/JSONL/parquet) -> the long response table.

The response table has one row per (model, item) with ``n_trials`` and ``n_correct``
plus the protocol that produced it; see ``schemas/response.schema.json``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

import polars as pl

from curation.errors import InputError
from curation.io.readers import detect_format, read_frame
from curation.params import require_file
from curation.responses._model_column import require_model_column
from curation.responses._settings import ResponsesSettings
from curation.responses._wide import wide_cells
from curation.schemas import conform, polars_schema, validate_frame

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings

PROTOCOL_FIELDS = (
    "prompt_template",
    "system_prompt",
    "temperature",
    "max_tokens",
    "seed",
    "model_revision",
)
_RATE_TOLERANCE = 1e-6
MAX_COUNT = 1_000_000_000
"""The largest n_trials / n_correct a table may hold (a count beyond it is a typo or an
overflow, and could not be stored as a 64-bit count summed over a panel)."""


def _row_of(mask: pl.Series) -> int:
    return int(mask.arg_true()[0]) + 1


def _reject(mask: pl.Series, *, file: str, field: str, message: Callable[[int], str]) -> None:
    """Raise for the first row where ``mask`` holds; ``message`` gets its 0-based index."""
    if mask.any():
        row = _row_of(mask)
        raise InputError(message(row - 1), file=file, record=f"row {row}", field=field)


def _numbers(
    col: pl.Series,
    *,
    file: str,
    field: str,
    row_offset: int = 0,
    nan_rows: list[tuple[int, str]] | None = None,
) -> pl.Series:
    """Parse a text/number column as floats; empty text is missing, anything else is an error.

    ``NaN`` text (and NaN numbers) are missing too, never silently: their (row, field) are
    added to ``nan_rows`` for the caller to report.
    """
    if col.dtype == pl.String:
        stripped = col.str.strip_chars()
        stripped = pl.Series(col.name, stripped).set(stripped == "", None)
        parsed = stripped.cast(pl.Float64, strict=False)
        bad = parsed.is_null() & stripped.is_not_null()
        bad = bad | parsed.is_infinite().fill_null(False)
    else:
        try:
            parsed = col.cast(pl.Float64, strict=True)
        except pl.exceptions.PolarsError:
            raise InputError(f"expected numbers, got {col.dtype}", file=file, field=field) from None
        bad = pl.Series([False] * len(col))
    if bad.any():
        row = _row_of(bad)
        raise InputError(
            f"value {col[row - 1]!r} is not a number",
            file=file,
            record=f"row {row + row_offset}",
            field=field,
        )
    if col.dtype != pl.String:
        inf = parsed.is_infinite().fill_null(False)
        if inf.any():
            row = _row_of(inf)
            raise InputError(
                f"value {col[row - 1]!r} is not a finite number",
                file=file,
                record=f"row {row + row_offset}",
                field=field,
            )
    nan = parsed.is_nan().fill_null(False)
    if nan_rows is not None and nan.any():
        nan_rows.extend((int(i) + 1 + row_offset, field) for i in nan.arg_true())
    return parsed.set(nan, None)


def _require_model_column(df: pl.DataFrame, spec: ResponsesSettings, *, file: str) -> None:
    """Checked before the item columns: else the model column reads as an unknown item."""
    require_model_column(df, spec.model_column, file=file)


def _wide_to_long(
    df: pl.DataFrame, spec: ResponsesSettings, *, file: str, notes: list[str]
) -> pl.DataFrame:
    _require_model_column(df, spec, file=file)
    models = df.get_column(spec.model_column).cast(pl.String)
    if models.is_null().any() or (models.str.strip_chars() == "").any():
        row = _row_of(models.is_null() | (models.str.strip_chars() == "").fill_null(True))
        raise InputError(
            "model name is empty", file=file, record=f"row {row}", field=spec.model_column
        )
    dup = models.is_duplicated()
    if dup.any():
        row = _row_of(dup)
        raise InputError(
            f"model {models[row - 1]!r} appears in more than one row",
            file=file,
            record=f"row {row}",
            field=spec.model_column,
        )
    item_cols = [c for c in df.columns if c != spec.model_column]
    if not item_cols:
        raise InputError("no item columns", file=file)
    nan_rows: list[tuple[int, str]] = []
    parsed = {
        c: _numbers(df.get_column(c), file=file, field=c, nan_rows=nan_rows) for c in item_cols
    }
    for c, values in parsed.items():
        out_of_range = ((values < 0) | (values > 1)).fill_null(False)
        if out_of_range.any():
            row = _row_of(out_of_range)
            raise InputError(
                f"value {values[row - 1]} is outside [0, 1] (wide cells are 0/1 or success rates)",
                file=file,
                record=f"row {row}",
                field=c,
            )
        counts = values * spec.n_trials
        off = ((counts - counts.round()).abs() > _RATE_TOLERANCE).fill_null(False)
        if off.any():
            row = _row_of(off)
            raise InputError(
                f"success rate {values[row - 1]} is not a whole number of {spec.n_trials} trials",
                file=file,
                record=f"row {row}",
                field=c,
            )
    _note_nan(nan_rows, notes)
    empty = pl.DataFrame(parsed).select(pl.sum_horizontal(pl.all().is_null())).to_series()
    if empty.sum():
        rows = [
            f"row {i + 1} ({models[i]}: {int(empty[i])})"
            for i in (empty > 0).arg_true().to_list()[:5]
        ]
        notes.append(
            f"{int(empty.sum())} of {df.height * len(item_cols)} cells are missing "
            f"(empty or NaN) in "
            f"{int((empty > 0).sum())} rows, kept as missing (not imputed): {', '.join(rows)}"
            + (" …" if int((empty > 0).sum()) > 5 else "")
        )
    wide = pl.DataFrame({"model": models, **parsed})
    long = wide.unpivot(index="model", variable_name="item", value_name="rate").drop_nulls("rate")
    return long.select(
        "model",
        "item",
        pl.lit(spec.n_trials, dtype=pl.Int64).alias("n_trials"),
        (pl.col("rate") * spec.n_trials).round().cast(pl.Int64).alias("n_correct"),
    )


def _note_nan(nan_rows: list[tuple[int, str]], notes: list[str]) -> None:
    if nan_rows:
        row, field = nan_rows[0]
        notes.append(
            f"{len(nan_rows)} cells read NaN, kept as missing (not imputed); "
            f"first: row {row}, field '{field}'"
        )


def _long_to_cells(
    df: pl.DataFrame, spec: ResponsesSettings, *, file: str, notes: list[str]
) -> pl.DataFrame:
    names = {
        "model": "model",
        "item": "item",
        "n_trials": "n_trials",
        "n_correct": "n_correct",
        "correct": "correct",
        **spec.columns,
    }
    for key in ("model", "item"):
        if names[key] not in df.columns:
            raise InputError(
                f"required column missing (set responses.columns.{key})",
                file=file,
                field=names[key],
            )
    cols: dict[str, pl.Series] = {
        "model": df.get_column(names["model"]).cast(pl.String),
        "item": df.get_column(names["item"]).cast(pl.String),
    }
    for key in ("model", "item"):
        empty = cols[key].is_null() | (cols[key].str.strip_chars() == "").fill_null(True)
        if empty.any():
            raise InputError(
                "required value missing",
                file=file,
                record=f"row {_row_of(empty)}",
                field=names[key],
            )
    if names["n_correct"] in df.columns:
        n_correct = _numbers(df.get_column(names["n_correct"]), file=file, field=names["n_correct"])
        if names["n_trials"] in df.columns:
            n_trials = _numbers(
                df.get_column(names["n_trials"]), file=file, field=names["n_trials"]
            )
        else:
            n_trials = pl.Series([float(spec.n_trials)] * df.height)
    elif names["correct"] in df.columns:  # one row per sample
        n_correct = _numbers(df.get_column(names["correct"]), file=file, field=names["correct"])
        n_trials = pl.Series([1.0] * df.height)
        bad = ~n_correct.is_in([0.0, 1.0]).fill_null(False)
        if bad.any():
            raise InputError(
                "per-sample `correct` must be 0 or 1",
                file=file,
                record=f"row {_row_of(bad)}",
                field=names["correct"],
            )
    else:
        raise InputError(
            "needs either n_correct (with n_trials) or a per-sample correct column",
            file=file,
            field=names["n_correct"],
        )
    for series, field in ((n_trials, names["n_trials"]), (n_correct, names["n_correct"])):
        _reject(
            series.is_null(), file=file, field=field, message=lambda _i: "required value missing"
        )
        _reject(
            (series.abs() > MAX_COUNT).fill_null(False),
            file=file,
            field=field,
            message=lambda i, s=series: f"{s[i]:g} is too large (at most {MAX_COUNT:,} trials)",  # type: ignore[misc]
        )
        _reject(
            (series != series.round()).fill_null(False),
            file=file,
            field=field,
            message=lambda i, s=series: f"expected a whole number, got {s[i]}",  # type: ignore[misc]
        )
    _reject(
        n_trials < 1,
        file=file,
        field=names["n_trials"],
        message=lambda i: f"n_trials must be at least 1, got {int(n_trials[i])}",
    )
    _reject(
        n_correct < 0,
        file=file,
        field=names["n_correct"],
        message=lambda i: f"n_correct must be at least 0, got {int(n_correct[i])}",
    )
    _reject(
        n_correct > n_trials,
        file=file,
        field=names["n_correct"],
        message=lambda i: f"n_correct ({int(n_correct[i])}) exceeds n_trials ({int(n_trials[i])})",
    )
    cells = pl.DataFrame(
        {**cols, "n_trials": n_trials.cast(pl.Int64), "n_correct": n_correct.cast(pl.Int64)}
    )
    per_sample = names["n_correct"] not in df.columns
    repeated = cells.select(pl.struct("model", "item").is_duplicated()).to_series()
    if repeated.any() and not per_sample:
        if spec.aggregate != "sum":
            _duplicate_rows(cells, file=file, field=names["item"])
        notes.append(
            f"{int(repeated.sum())} rows share a (model, item) cell with another row; "
            "summed into one cell each (responses.aggregate: sum)"
        )
    return cells.group_by("model", "item", maintain_order=True).agg(
        pl.col("n_trials").sum(), pl.col("n_correct").sum()
    )


def _duplicate_rows(cells: pl.DataFrame, *, file: str, field: str) -> None:
    """The first row repeating an earlier row's (model, item) cell, naming both rows."""
    first_of: dict[tuple[str, str], int] = {}
    for i, key in enumerate(zip(cells["model"], cells["item"], strict=True)):
        if key in first_of:
            raise InputError(
                f"repeats the cell of row {first_of[key] + 1} (model {key[0]!r}, item "
                f"{key[1]!r}); remove one, or set responses.aggregate: sum to add them up",
                file=file,
                record=f"row {i + 1}",
                field=field,
            )
        first_of[key] = i


def _check_items(
    items: pl.Series,
    known_items: Collection[str],
    *,
    file: str,
    items_file: str,
    layout: str,
    field: str,
) -> None:
    """Every response must belong to an ingested item (wide: a column; long: a row)."""
    known = pl.Series(list(known_items), dtype=pl.String)
    unknown = ~items.is_in(known.implode())
    if unknown.any():
        idx = int(unknown.arg_true()[0])
        item = items[idx]
        if layout == "wide":
            raise InputError(
                f"column for unknown item {item!r} (not in {items_file})",
                file=file,
                record="header",
                field=item,
            )
        raise InputError(
            f"response for unknown item {item!r} (not in {items_file})",
            file=file,
            record=f"row {idx + 1}",
            field=field,
        )


def _compact_table(
    cells: pl.DataFrame, benchmark: str, source: str, protocol: dict[str, Any], *, file: str
) -> pl.DataFrame:
    """The response table of compact cells (sorted, Enum ids), in the schema's column
    order: constants as one-category Enums (a byte a row), absent fields as null columns;
    :func:`curation.io.tables.write_table` writes it as the schema's types."""
    constants: dict[str, Any] = {"benchmark": benchmark, "source": source, **protocol}
    columns = []
    for key in polars_schema("response"):
        if key in cells.columns:
            columns.append(pl.col(key))
            continue
        value = constants.get(key)
        if isinstance(value, str):
            columns.append(pl.lit(value, dtype=pl.Enum([value])).alias(key))
        else:
            columns.append(pl.lit(value).alias(key))
    table = cells.select(columns)
    validate_frame(table, "response", file=file)
    return table


def import_responses(
    benchmark: str,
    spec: BenchmarkSettings,
    *,
    known_items: Collection[str],
    items_file: str,
    params_file: str = "params.yaml",
    notes: list[str] | None = None,
) -> pl.DataFrame:
    """Read ``benchmark``'s response matrix into the validated long response table.

    What the import kept as missing or added up (empty or NaN cells, ``aggregate: sum``)
    is appended to ``notes``, one line each, for the caller to print.
    """
    notes = [] if notes is None else notes
    rs = spec.responses
    if rs is None:
        raise InputError(
            "no `responses` configured for this benchmark",
            file=params_file,
            field=f"benchmarks.{benchmark}.responses",
        )
    path = require_file(
        rs.path, params_file=params_file, key=f"benchmarks.{benchmark}.responses.path"
    )
    file = str(path)
    fmt = detect_format(path, rs.format)
    protocol: dict[str, Any] = {k: rs.protocol.get(k) for k in PROTOCOL_FIELDS}
    if rs.layout == "wide":
        fast = wide_cells(path, fmt, rs, notes=notes)
        if fast is not None:  # valid and numeric: compact, never a per-cell string
            cells, item_order = fast
            _check_items(
                pl.Series(item_order, dtype=pl.String),
                known_items,
                file=file,
                items_file=items_file,
                layout="wide",
                field="",
            )
            return _compact_table(cells, benchmark, rs.source, protocol, file=file)
    df = read_frame(path, fmt)
    if df.height == 0:
        raise InputError("file is empty: no records", file=file)
    if rs.layout == "wide":
        _require_model_column(df, rs, file=file)
        item_cols = pl.Series([c for c in df.columns if c != rs.model_column], dtype=pl.String)
        _check_items(
            item_cols, known_items, file=file, items_file=items_file, layout="wide", field=""
        )
        cells = _wide_to_long(df, rs, file=file, notes=notes)
    else:
        item_col = rs.columns.get("item", "item")
        if item_col in df.columns:
            _check_items(
                df.get_column(item_col).cast(pl.String),
                known_items,
                file=file,
                items_file=items_file,
                layout="long",
                field=item_col,
            )
        cells = _long_to_cells(df, rs, file=file, notes=notes)
    table = cells.with_columns(
        pl.lit(benchmark).alias("benchmark"),
        pl.lit(rs.source).alias("source"),
        *[pl.lit(v).alias(k) for k, v in protocol.items()],
    )
    table = conform(table, "response").sort("model", "item")
    validate_frame(table, "response", file=file)
    return table
