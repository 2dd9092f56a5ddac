"""A wide response matrix (CSV or parquet) read straight into a compact long table.

The general import (:mod:`curation.responses._import`) reads every cell as text and
unpivots it into per-cell strings: fine for a panel of forty models, 10 GB at 2,000 x
20,000. This path reads the item columns as numbers, checks them a block of columns at a
time into a dense ``uint8``/``uint16`` count matrix, and emits the long table sorted by
(model, item) with Enum ids (1-2 bytes a cell; :func:`curation.io.tables.write_table`
writes them as the same strings, byte for byte). It handles valid input only: on anything
the general import would reject or report differently (text that is not a number, a rate
out of range or not a whole number of trials, an empty or repeated model name) it returns
None and the general import runs, so every message stays the general import's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from curation.io.readers import rows_complete
from curation.responses._settings import ResponsesSettings

_RATE_TOLERANCE = 1e-6  # as the general import
_COLUMNS_PER_BLOCK = 512


def _numeric(path: Path, fmt: str, model_column: str) -> pl.DataFrame | None:
    """The matrix with item columns as Float64 (the model column as text), or None."""
    try:
        if fmt == "csv":
            if not rows_complete(path):  # a row cut short: the general import names it
                return None
            header = pl.scan_csv(path, infer_schema=False, n_rows=0).collect_schema().names()
            if model_column not in header:
                return None
            overrides = {c: pl.Float64 for c in header if c != model_column}
            return pl.scan_csv(path, infer_schema=False, schema_overrides=overrides).collect(
                engine="streaming"
            )
        lf = pl.scan_parquet(path)
        schema = lf.collect_schema()
        if model_column not in schema:
            return None
        items = [c for c in schema.names() if c != model_column]
        if not all(schema[c].is_numeric() for c in items):
            return None
        return lf.select(
            pl.col(model_column).cast(pl.String), pl.col(items).cast(pl.Float64)
        ).collect(engine="streaming")
    except (pl.exceptions.PolarsError, OSError, UnicodeDecodeError):
        return None  # not parseable as numbers here: the general import says why


def wide_cells(
    path: Path, fmt: str, spec: ResponsesSettings, *, notes: list[str]
) -> tuple[pl.DataFrame, list[str]] | None:
    """(model, item, n_trials, n_correct) of a valid wide matrix, sorted by (model, item),
    ids as Enums, counts unsigned, and the item columns in the file's order; the general
    import's notes appended. None: not valid or not readable this way (the caller runs
    the general import)."""
    if fmt not in ("csv", "parquet"):
        return None
    df = _numeric(path, fmt, spec.model_column)
    if df is None or df.height == 0 or df.width < 2:
        return None
    models = df.get_column(spec.model_column)
    if models.is_null().any() or (models.str.strip_chars() == "").any():
        return None
    if models.is_duplicated().any():
        return None
    items = [c for c in df.columns if c != spec.model_column]
    n_trials = spec.n_trials
    if n_trials > 0xFFFE:
        return None
    dtype = np.uint8 if n_trials < 0xFF else np.uint16
    missing_code = np.iinfo(dtype).max
    counts = np.empty((df.height, len(items)), dtype=dtype)
    missing_per_row = np.zeros(df.height, dtype=np.int64)
    nan_total, first_nan = 0, None
    for c0 in range(0, len(items), _COLUMNS_PER_BLOCK):
        block = items[c0 : c0 + _COLUMNS_PER_BLOCK]
        values = df.select(block).to_numpy(order="fortran")  # float64, null -> NaN
        nulls = np.column_stack([df.get_column(c).is_null().to_numpy() for c in block])
        nan = np.isnan(values) & ~nulls  # NaN written in the file: reported, then missing
        if nan.any():
            nan_total += int(nan.sum())
            if first_nan is None:
                col = int(np.flatnonzero(nan.any(axis=0))[0])
                first_nan = (int(np.flatnonzero(nan[:, col])[0]) + 1, block[col])
        present = ~np.isnan(values)
        with np.errstate(invalid="ignore"):
            if np.isinf(values).any() or ((values < 0) | (values > 1)).any():
                return None
            scaled = values * n_trials
            whole = np.round(scaled)
            if (np.abs(scaled - whole) > _RATE_TOLERANCE).any():
                return None
        out = counts[:, c0 : c0 + len(block)]
        out[...] = missing_code
        out[present] = whole[present].astype(dtype)
        missing_per_row += (~present).sum(axis=1)
        del values, nulls, nan, present, scaled, whole
    if first_nan is not None:
        notes.append(
            f"{nan_total} cells read NaN, kept as missing (not imputed); "
            f"first: row {first_nan[0]}, field '{first_nan[1]}'"
        )
    if missing_per_row.sum():
        rows_with = np.flatnonzero(missing_per_row)
        listed = ", ".join(
            f"row {i + 1} ({models[int(i)]}: {int(missing_per_row[i])})" for i in rows_with[:5]
        )
        notes.append(
            f"{int(missing_per_row.sum())} of {df.height * len(items)} cells are missing "
            f"(empty or NaN) in {rows_with.size} rows, kept as missing (not imputed): {listed}"
            + (" …" if rows_with.size > 5 else "")
        )
    names_m = models.sort()
    names_i = pl.Series(items, dtype=pl.String).sort()
    order_m = models.arg_sort().to_numpy()
    order_i = pl.Series(items, dtype=pl.String).arg_sort().to_numpy()
    del df
    return _long(counts, missing_code, order_m, order_i, names_m, names_i, n_trials), items


def _long(
    counts: np.ndarray,
    missing_code: int,
    order_m: np.ndarray,
    order_i: np.ndarray,
    names_m: pl.Series,
    names_i: pl.Series,
    n_trials: int,
) -> pl.DataFrame:
    """The present cells of ``counts`` in (sorted model, sorted item) order, as a frame."""
    rows_per_block = max(1, (1 << 22) // max(counts.shape[1], 1))
    mis, iis, ks = [], [], []
    for r0 in range(0, counts.shape[0], rows_per_block):
        block = counts[order_m[r0 : r0 + rows_per_block]][:, order_i]
        r, c = np.nonzero(block != missing_code)
        mis.append((r + r0).astype(np.uint32))
        iis.append(c.astype(np.uint32))
        ks.append(block[r, c])
    mi, ii, k = np.concatenate(mis), np.concatenate(iis), np.concatenate(ks)
    del mis, iis, ks
    model = names_m.cast(pl.Enum(names_m)).gather(mi)
    item = names_i.cast(pl.Enum(names_i)).gather(ii)
    del mi, ii
    return pl.DataFrame(
        {
            "model": model,
            "item": item,
            "n_trials": pl.Series(np.full(k.size, n_trials, dtype=k.dtype)),
            "n_correct": pl.Series(k),
        }
    )
