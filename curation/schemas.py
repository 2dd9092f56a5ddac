"""JSON Schemas in ``schemas/`` are the one source of truth for every record type.

This module loads them, derives the polars column types from them (so no field list
is kept twice), and validates tables before a stage writes them.

The top-level ``schemas/`` folder is the only committed copy. A wheel carries it as the
package data ``curation/_schemas/`` (see ``[tool.setuptools.package-dir]`` in
pyproject.toml), so an installed package validates without a checkout.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl

from curation.errors import InputError

SCHEMA_DIR_ENV = "BENCHCURATE_SCHEMAS"
PACKAGED_SCHEMAS = "_schemas"


def schema_dir() -> Path:
    """The folder holding ``*.schema.json``.

    In order: ``$BENCHCURATE_SCHEMAS`` if set; the package data ``curation/_schemas/``,
    which only an installed wheel has (the build copies ``schemas/`` there); else the
    checkout's ``schemas/`` beside the package, which is what a source tree or an
    editable install reads, so editing a schema there takes effect without a rebuild.
    """
    override = os.environ.get(SCHEMA_DIR_ENV)
    if override:
        return Path(override)
    packaged = resources.files("curation").joinpath(PACKAGED_SCHEMAS)
    # A Path unless the package is imported from a zip, which pip never installs.
    if isinstance(packaged, Path) and packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / "schemas"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"no JSON Schemas: neither package data {packaged} nor a checkout's {checkout} "
        f"exists (a wheel built without curation/_schemas?); set {SCHEMA_DIR_ENV} to a folder"
    )


@functools.cache
def load_schema(name: str) -> dict[str, Any]:
    """Load ``schemas/<name>.schema.json``."""
    path = schema_dir() / f"{name}.schema.json"
    if not path.is_file():
        raise FileNotFoundError(f"no JSON Schema named {name!r}: expected {path}")
    schema = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


@functools.cache
def _validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(load_schema(name))


def field_names(name: str) -> list[str]:
    """Property names of a record type, in schema order."""
    return list(load_schema(name)["properties"])


def json_kind(prop: Mapping[str, Any]) -> str:
    """The one JSON type a property holds (null aside): enums and JSON text are strings.

    Shared by every mapping from schemas to column types (polars here, Hugging Face
    ``Features`` in curation.publish), so they cannot drift apart.
    """
    if "enum" in prop:
        return "string"
    types = prop.get("type", "string")
    types = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    if len(types) != 1:
        raise ValueError(f"cannot map JSON Schema type {prop.get('type')!r} to one column type")
    return types[0]


def array_items(prop: Mapping[str, Any]) -> Mapping[str, Any]:
    """Schema of an array property's elements (strings when unspecified)."""
    return prop.get("items", {"type": "string"})


def _polars_type(prop: Mapping[str, Any]) -> pl.DataType:
    kind = json_kind(prop)
    if kind == "array":
        return pl.List(_polars_type(array_items(prop)))
    return {
        "string": pl.String(),
        "integer": pl.Int64(),
        "number": pl.Float64(),
        "boolean": pl.Boolean(),
    }[kind]


def polars_schema(name: str) -> pl.Schema:
    """The polars schema of a table of ``name`` records, derived from the JSON Schema."""
    props = load_schema(name)["properties"]
    return pl.Schema({key: _polars_type(prop) for key, prop in props.items()})


def empty_frame(name: str) -> pl.DataFrame:
    """A zero-row table with the record type's columns."""
    return pl.DataFrame(schema=polars_schema(name))


def conform(df: pl.DataFrame, name: str) -> pl.DataFrame:
    """Select and cast ``df`` to the record type's columns, in schema order.

    Missing nullable columns are added as nulls; anything the schema does not know is
    dropped. Casting is strict, so a wrong type is an error, not a silent null.
    """
    schema = polars_schema(name)
    cols = []
    for key, dtype in schema.items():
        if key in df.columns:
            cols.append(pl.col(key).cast(dtype, strict=True))
        else:
            cols.append(pl.lit(None, dtype=dtype).alias(key))
    return df.select(cols)


def _error_field(error: jsonschema.ValidationError) -> str:
    if error.validator == "required":
        missing = [f for f in error.validator_value if f not in (error.instance or {})]
        return missing[0] if missing else ""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        extra = [k for k in error.instance if k not in known]
        return extra[0] if extra else ""
    return ".".join(str(p) for p in error.absolute_path)


def validate_record(
    record: Mapping[str, Any], name: str, *, schema: Mapping[str, Any] | None = None
) -> tuple[str, str] | None:
    """Return ``(field, message)`` for the first problem in ``record``, or None if valid.

    ``schema`` narrows the check to a part of the record type (used per column).
    """
    validator = _validator(name) if schema is None else jsonschema.Draft202012Validator(schema)
    if not validator.is_valid(record):
        errors = sorted(validator.iter_errors(record), key=lambda e: list(e.absolute_path))
        err = errors[0]
        return _error_field(err), err.message
    props = (schema or load_schema(name)).get("properties", {})
    for key, prop in props.items():
        if prop.get("contentMediaType") == "application/json" and record.get(key) is not None:
            try:
                json.loads(record[key])
            except (TypeError, ValueError) as exc:
                return key, f"is not valid JSON text ({exc})"
    return None


def validate_records(
    records: Iterable[Mapping[str, Any]],
    name: str,
    *,
    file: str,
    record_label: str = "row",
    first_index: int = 1,
) -> None:
    """Validate every record; raise one :class:`InputError` naming file, record and field."""
    for index, record in enumerate(records, start=first_index):
        problem = validate_record(record, name)
        if problem is not None:
            field, message = problem
            raise InputError(message, file=file, record=f"{record_label} {index}", field=field)


_FLAT_KEYWORDS = {
    "$schema",
    "$id",
    "title",
    "description",
    "type",
    "properties",
    "required",
    "additionalProperties",
}


def validate_frame(df: pl.DataFrame, name: str, *, file: str) -> None:
    """Validate every row of a table against the record type before it is written.

    Record schemas are flat objects whose constraints are per property, so checking the
    column set once and each column's *distinct* values against its property schema is
    the same as validating every row, at a fraction of the cost. The first failing
    value is reported with the row it first occurs in.
    """
    schema = load_schema(name)
    unsupported = set(schema) - _FLAT_KEYWORDS
    if unsupported:
        raise ValueError(f"{name} schema is not flat ({sorted(unsupported)}): validate per record")
    expected = list(polars_schema(name))
    missing = [c for c in schema.get("required", []) if c not in df.columns]
    if missing:
        raise InputError("required column missing", file=file, field=missing[0])
    extra = [c for c in df.columns if c not in expected]
    if extra:
        raise InputError("column not in the schema", file=file, field=extra[0])
    for key, prop in schema["properties"].items():
        if key not in df.columns:
            continue
        record_schema = {"type": "object", "properties": {key: prop}}
        for value in df.get_column(key).unique(maintain_order=True).to_list():
            problem = validate_record({key: value}, name, schema=record_schema)
            if problem is not None:
                row = _first_row(df, key, value)
                raise InputError(problem[1], file=file, record=f"row {row}", field=key)


def _first_row(df: pl.DataFrame, key: str, value: Any) -> int:
    """1-based row number of the first occurrence of ``value`` in column ``key``."""
    col = df.get_column(key)
    mask = col.is_null() if value is None else (col == value).fill_null(False)
    idx = mask.arg_true()
    return int(idx[0]) + 1 if len(idx) else 0
