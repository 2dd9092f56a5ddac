"""Raw benchmark files -> item records, by the field mapping declared in params.yaml."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import polars as pl

from curation.errors import InputError
from curation.io.readers import RawRecord, read_records
from curation.items._settings import ANSWER_TYPES
from curation.params import require_file
from curation.schemas import conform, validate_record

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings

_MAPPED = ("item", "question", "answer", "choices", "answer_type")


def _as_text(value: Any, *, field: str, where: str, file: str, allow_number: bool) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if allow_number and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        f"expected text, got {type(value).__name__} {value!r:.40}",
        file=file,
        record=where,
        field=field,
    )


def _choices(value: Any, *, where: str, file: str, field: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise InputError(
                "expected a list of options (or its JSON text)",
                file=file,
                record=where,
                field=field,
            ) from None
    if isinstance(value, dict):  # e.g. {"label": [...], "text": [...]}
        value = value.get("text", list(value.values()))
    if not isinstance(value, list) or not all(isinstance(v, str | int | float) for v in value):
        raise InputError("expected a list of options", file=file, record=where, field=field)
    return [str(v) for v in value]


def item_record(
    raw: RawRecord, benchmark: str, spec: BenchmarkSettings, *, file: str
) -> dict[str, Any]:
    """Map one raw record of ``benchmark`` to an item record (not yet schema-validated)."""
    fields = spec.items.fields
    data = raw.data
    for target in ("item", "question"):
        source = fields[target]
        if data.get(source) is None:
            raise InputError(
                f"required field missing (mapped from source field {source!r})",
                file=file,
                record=raw.where,
                field=source,
            )
    item = _as_text(
        data[fields["item"]], field=fields["item"], where=raw.where, file=file, allow_number=True
    )
    question = _as_text(
        data[fields["question"]],
        field=fields["question"],
        where=raw.where,
        file=file,
        allow_number=False,
    )
    answer = None
    if "answer" in fields:
        answer = _as_text(
            data.get(fields["answer"]),
            field=fields["answer"],
            where=raw.where,
            file=file,
            allow_number=True,
        )
        if answer is not None and spec.items.answer_pattern:
            match = re.search(spec.items.answer_pattern, answer, flags=re.S)
            if match is None:
                raise InputError(
                    f"answer does not match answer_pattern {spec.items.answer_pattern!r}",
                    file=file,
                    record=raw.where,
                    field=fields["answer"],
                )
            answer = match.group(1).strip()
    answer_type: str = spec.items.answer_type
    if "answer_type" in fields and data.get(fields["answer_type"]) is not None:
        answer_type = str(data[fields["answer_type"]])
        if answer_type not in ANSWER_TYPES:
            raise InputError(
                f"{answer_type!r} is not one of {ANSWER_TYPES}",
                file=file,
                record=raw.where,
                field=fields["answer_type"],
            )
    choices = None
    if "choices" in fields:
        choices = _choices(
            data.get(fields["choices"]), where=raw.where, file=file, field=fields["choices"]
        )
    used = {fields[k] for k in _MAPPED if k in fields}
    keep = spec.items.metadata_fields
    meta_keys = [k for k in data if k not in used] if keep is None else keep
    metadata = {k: data.get(k) for k in meta_keys}
    return {
        "benchmark": benchmark,
        "item": item,
        "domain": spec.domain,
        "question": question,
        "answer": answer,
        "answer_type": answer_type,
        "choices": choices,
        "source": spec.source,
        "license": spec.license,
        "origin": "original",
        "metadata": json.dumps(metadata, ensure_ascii=False, sort_keys=True, default=str),
    }


def ingest_benchmark(
    benchmark: str, spec: BenchmarkSettings, *, params_file: str = "params.yaml"
) -> pl.DataFrame:
    """Read a benchmark's raw items and return its validated item table."""
    path = require_file(
        spec.items.path, params_file=params_file, key=f"benchmarks.{benchmark}.items.path"
    )
    file = str(path)
    raws = read_records(path, spec.items.format, split=spec.items.split)  # type: ignore[arg-type]
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for raw in raws:
        row = item_record(raw, benchmark, spec, file=file)
        problem = validate_record(row, "item")
        if problem is not None:
            target, message = problem
            field = spec.items.fields.get(target, target)
            raise InputError(message, file=file, record=raw.where, field=field)
        if row["item"] in seen:
            raise InputError(
                f"duplicate item id {row['item']!r} (first at {seen[row['item']]})",
                file=file,
                record=raw.where,
                field=spec.items.fields["item"],
            )
        seen[row["item"]] = raw.where
        rows.append(row)
    return conform(pl.DataFrame(rows, infer_schema_length=None), "item")
