"""Readers for raw inputs (JSONL, JSON, CSV, parquet, a ``datasets`` dataset saved to disk).

Every reader returns :class:`RawRecord` objects that remember where they came from
(line or row), so a later problem can be reported against the user's own file.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import polars as pl

from curation.errors import InputError

Format = Literal["jsonl", "json", "csv", "parquet", "hf-disk"]
FORMATS: tuple[str, ...] = ("jsonl", "json", "csv", "parquet", "hf-disk")


@dataclass(frozen=True, slots=True)
class RawRecord:
    """One raw record and its location in the source file."""

    where: str
    """Human label of the location, e.g. ``line 12`` or ``row 3``."""
    data: dict[str, Any]


def detect_format(path: Path, declared: str | None = None) -> Format:
    """The declared format, or one guessed from the file name."""
    if declared:
        if declared not in FORMATS:
            raise InputError(
                f"unknown format {declared!r}; use one of {', '.join(FORMATS)}", file=str(path)
            )
        return declared  # type: ignore[return-value]
    if path.is_dir():
        return "hf-disk"
    name = path.name.lower()
    for suffix, fmt in (
        (".jsonl", "jsonl"),
        (".ndjson", "jsonl"),
        (".json", "json"),
        (".csv", "csv"),
        (".parquet", "parquet"),
    ):
        if name.endswith(suffix):
            return fmt  # type: ignore[return-value]
    raise InputError(
        "cannot tell the format from the file name; declare `format` in params.yaml", file=str(path)
    )


def read_text(path: Path) -> str:
    """Read a file as UTF-8; a bad byte is reported with its line and column."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {column}); "
            "re-save the file as UTF-8",
            file=str(path),
            record=f"line {line}",
        ) from None


def _ensure_nonempty(path: Path, n: int) -> None:
    if n == 0:
        raise InputError("file is empty: no records", file=str(path))


def _read_jsonl(path: Path) -> list[RawRecord]:
    records = []
    for lineno, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON ({exc.msg} at column {exc.colno})",
                file=str(path),
                record=f"line {lineno}",
            ) from None
        if not isinstance(obj, dict):
            raise InputError(
                f"expected a JSON object, got {type(obj).__name__}",
                file=str(path),
                record=f"line {lineno}",
            )
        records.append(RawRecord(f"line {lineno}", obj))
    _ensure_nonempty(path, len(records))
    return records


def _read_json(path: Path) -> list[RawRecord]:
    text = read_text(path)
    if not text.strip():
        _ensure_nonempty(path, 0)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"not valid JSON ({exc.msg} at column {exc.colno})",
            file=str(path),
            record=f"line {exc.lineno}",
        ) from None
    if isinstance(obj, dict):
        obj = obj.get("data", obj.get("rows"))
    if not isinstance(obj, list):
        raise InputError(
            "expected a JSON array of objects (or an object with `data`)", file=str(path)
        )
    records = []
    for index, row in enumerate(obj, start=1):
        if not isinstance(row, dict):
            raise InputError(
                f"expected a JSON object, got {type(row).__name__}",
                file=str(path),
                record=f"record {index}",
            )
        records.append(RawRecord(f"record {index}", row))
    _ensure_nonempty(path, len(records))
    return records


def _check_row_lengths(text: str, path: Path) -> None:
    """Every data row has as many cells as the header: a short row is malformed input
    (a cut line, a lost separator), not a row of missing values, so it is refused by its
    number (the first data row is row 1). Lines without quotes are counted with
    ``str.count`` (fast on leaderboard-wide files); text with quotes goes through the csv
    module, which knows quoted separators and line breaks."""
    if '"' in text:
        rows: Iterator[int] = (len(r) for r in csv.reader(io.StringIO(text)) if r)
    else:
        rows = (ln.count(",") + 1 for ln in text.splitlines() if ln.strip())
    width = next(rows, None)
    if width is None:
        return
    for n, cells in enumerate(rows, start=1):
        if cells < width:
            raise InputError(
                f"has {cells} cells where the header has {width}: the row is cut short "
                "(a missing value is an empty cell between separators)",
                file=str(path),
                record=f"row {n}",
            )


def rows_complete(path: Path) -> bool:
    """Whether every line of a plain CSV (no quotes) has the header's number of cells,
    read line by line in binary (cheap on a leaderboard-wide file). False for a short
    row, or a file with quotes (the caller then takes the general reader, which checks
    it with the csv module and names the row)."""
    with open(path, "rb") as fh:
        header = fh.readline()
        if b'"' in header:
            return False
        width = header.count(b",")
        for line in fh:
            if line.strip() and (b'"' in line or line.count(b",") < width):
                return False
    return True


def read_csv_frame(path: Path) -> pl.DataFrame:
    """Read a CSV with every column as text (types are checked field by field later)."""
    text = read_text(path)
    if not text.strip():
        _ensure_nonempty(path, 0)
    _check_row_lengths(text, path)
    try:
        return pl.read_csv(text.encode("utf-8"), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise InputError(
            f"cannot parse as CSV ({str(exc).splitlines()[0]})", file=str(path)
        ) from None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _check_consistent_types(records: list[RawRecord], path: Path) -> None:
    """A field holds one kind of value in every record (numbers may mix ints and
    floats): the record of a minority kind is named, with its value, before a frame
    would coerce every value of the column to text."""
    kinds: dict[str, dict[str, int]] = {}
    for rec in records:
        for key, value in rec.data.items():
            if value is not None:
                seen = kinds.setdefault(key, {})
                kind = _kind(value)
                seen[kind] = seen.get(kind, 0) + 1
    for key, seen in kinds.items():
        if len(seen) < 2:
            continue
        usual = max(seen, key=lambda k: seen[k])
        for rec in records:
            value = rec.data.get(key)
            if value is not None and _kind(value) != usual:
                raise InputError(
                    f"value {value!r} is {_kind(value)} where the other records have "
                    f"{usual} ({seen[usual]} of {sum(seen.values())})",
                    file=str(path),
                    record=rec.where,
                    field=key,
                )


def read_frame(path: Path, fmt: Format) -> pl.DataFrame:
    """Read a tabular file as a polars frame (CSV as text columns)."""
    if fmt == "csv":
        return read_csv_frame(path)
    if fmt == "parquet":
        try:
            return pl.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - any parquet failure is the user's file
            raise InputError(
                f"cannot read parquet ({str(exc).splitlines()[0]})", file=str(path)
            ) from None
    records = read_records(path, fmt)
    _check_consistent_types(records, path)
    return pl.DataFrame([r.data for r in records], infer_schema_length=None)


def _frame_records(df: pl.DataFrame, path: Path, label: str = "row") -> list[RawRecord]:
    _ensure_nonempty(path, df.height)
    return [RawRecord(f"{label} {i}", row) for i, row in enumerate(df.iter_rows(named=True), 1)]


def _read_hf_disk(path: Path, split: str | None) -> list[RawRecord]:
    import datasets

    try:
        ds = datasets.load_from_disk(str(path))
    except Exception as exc:  # noqa: BLE001
        raise InputError(
            f"not a dataset saved with `save_to_disk` ({exc})", file=str(path)
        ) from None
    if isinstance(ds, datasets.DatasetDict):
        if split is None:
            if len(ds) != 1:
                raise InputError(
                    f"dataset has splits {sorted(ds)}; set `split` in params.yaml", file=str(path)
                )
            split = next(iter(ds))
        if split not in ds:
            raise InputError(f"no split {split!r}; it has {sorted(ds)}", file=str(path))
        ds = ds[split]
    return _frame_records(ds.to_polars(), path)


def read_records(
    path: Path, fmt: Format | None = None, *, split: str | None = None
) -> list[RawRecord]:
    """Read every record of a raw file, with its location."""
    path = Path(path)
    if not path.exists():
        raise InputError("file does not exist", file=str(path))
    fmt = detect_format(path, fmt)
    if fmt == "jsonl":
        return _read_jsonl(path)
    if fmt == "json":
        return _read_json(path)
    if fmt == "hf-disk":
        return _read_hf_disk(path, split)
    return _frame_records(read_frame(path, fmt), path)


def iter_data(records: list[RawRecord]) -> Iterator[dict[str, Any]]:
    """The bare dicts of ``records``."""
    return (r.data for r in records)
