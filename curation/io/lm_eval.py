"""Reading lm-evaluation-harness per-sample logs (``--log_samples``) as response cells.

lm-eval writes ``<output_path>/<model_name_sanitized>/samples_<task>_<date>.jsonl``,
one JSON object per (document, filter)::

    {"doc_id": 0, "doc": {...}, "target": "18",
     "arguments": {"gen_args_0": {"arg_0": "<prompt>", "arg_1": {...}}},
     "resps": [["<raw generation>"]], "filtered_resps": ["18"],
     "filter": "strict-match", "metrics": ["exact_match"],
     "doc_hash": "...", "prompt_hash": "...", "target_hash": "...",
     "exact_match": 1.0}

The per-sample metric (``acc``, ``exact_match``, ``pass@1``...) is the verdict. A
task with several filters (gsm8k: ``strict-match`` and ``flexible-extract``)
logs each document once per filter, and the verdicts differ, so the filter must
be chosen when there is more than one; silently picking one would change
``n_correct``.
"""

from __future__ import annotations

import glob
import json
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError
from curation.io.readers import read_text

PREFERRED_METRICS = ("acc", "exact_match", "pass@1", "em", "correct", "accuracy", "acc_norm")
"""Metric chosen when a sample lists several and none is named (first present wins)."""

_NAME = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-:]+)\.jsonl$")
_BOOKKEEPING = {
    "doc_id",
    "doc",
    "target",
    "arguments",
    "resps",
    "filtered_resps",
    "filter",
    "metrics",
    "doc_hash",
    "prompt_hash",
    "target_hash",
    "length_info",
}


@dataclass(frozen=True)
class _File:
    path: Path
    task: str
    date: str
    model: str


def _files(path_or_glob: str | Path) -> list[Path]:
    path = Path(path_or_glob)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted(path.rglob("samples_*.jsonl"))
    else:
        found = sorted(Path(p) for p in glob.glob(str(path_or_glob), recursive=True))
        found = [p for p in found if p.is_file()]
    if not found:
        raise InputError(
            "no lm-eval sample files found (expected samples_<task>_<date>.jsonl, written "
            "by lm_eval --log_samples)",
            file=str(path_or_glob),
        )
    return found


def _describe(path: Path, model: str | None) -> _File:
    m = _NAME.match(path.name)
    if m:
        task, date = m.group("task"), m.group("date")
    elif path.name.startswith("samples_") and path.suffix == ".jsonl":
        task, date = path.stem.removeprefix("samples_"), ""
    else:
        raise InputError(
            "not an lm-eval sample file name (expected samples_<task>_<date>.jsonl)",
            file=str(path),
        )
    name = model or path.parent.name
    if not name or name in (".", "/"):
        raise InputError(
            "cannot tell the model from the folder; pass the model name", file=str(path)
        )
    return _File(path, task, date, name)


def _lookup(doc: Any, dotted: str) -> Any:
    value = doc
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _choose_metric(sample: dict[str, Any], metric: str | None, *, file: str, where: str) -> str:
    if metric is not None:
        if metric not in sample:
            raise InputError(
                f"per-sample metric {metric!r} missing (present: "
                f"{', '.join(_metric_keys(sample)) or 'none'})",
                file=file,
                record=where,
                field=metric,
            )
        return metric
    listed = sample.get("metrics")
    candidates = [m for m in listed if m in sample] if isinstance(listed, list) else []
    candidates = candidates or _metric_keys(sample)
    for preferred in PREFERRED_METRICS:
        if preferred in candidates:
            return preferred
    if len(candidates) == 1:
        return candidates[0]
    raise InputError(
        f"cannot tell which per-sample metric is the verdict (candidates: "
        f"{', '.join(candidates) or 'none'}); name one",
        file=file,
        record=where,
        field="metrics",
    )


def _metric_keys(sample: dict[str, Any]) -> list[str]:
    """Top-level numeric (or boolean) fields that are not lm-eval bookkeeping."""
    return [k for k, v in sample.items() if k not in _BOOKKEEPING and isinstance(v, (int, float))]


def _n_responses(sample: dict[str, Any]) -> int:
    resps = sample.get("resps")
    if isinstance(resps, list) and len(resps) == 1 and isinstance(resps[0], list):
        return len(resps[0])
    return 1


def _cell(
    value: Any, sample: dict[str, Any], *, file: str, where: str, field: str
) -> tuple[int, int]:
    if isinstance(value, bool):
        return 1, int(value)
    if not isinstance(value, (int, float)):
        raise InputError(f"expected a number, got {value!r}", file=file, record=where, field=field)
    if value in (0, 1):
        return 1, int(value)
    n = _n_responses(sample)
    count = value * n
    if 0 <= value <= 1 and n > 1 and abs(count - round(count)) < 1e-6:
        return n, int(round(count))
    raise InputError(
        f"value {value} is not 0/1 (nor a whole share of {n} responses); choose a "
        "0/1 metric such as acc or exact_match",
        file=file,
        record=where,
        field=field,
    )


def read_lm_eval_samples(
    path_or_glob: str | Path,
    *,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_field: str | None = None,
) -> pl.DataFrame:
    """Read lm-eval ``samples_*.jsonl`` files into ``(model, item, n_trials, n_correct)``.

    ``path_or_glob``: a file, a folder (searched recursively) or a glob such as
    ``results/*/samples_gsm8k_*.jsonl``. ``model``: the model name; by default the
    file's folder name (lm-eval's sanitized model name, e.g. ``org__model``).
    ``metric``: the per-sample verdict; by default the first of
    :data:`PREFERRED_METRICS` the sample lists. ``filter_name``: which filter's
    verdicts to use, required when a file has several. ``item_field``: a (dotted)
    field of ``doc`` holding the benchmark's item id; by default the ``doc_id``.

    One task per call (doc ids of different tasks collide). When the same model
    and task appear in several files (reruns), the newest date wins, with a warning.
    Problems are raised as :class:`InputError` naming file, line and field.
    """
    described = [_describe(p, model) for p in _files(path_or_glob)]
    tasks = sorted({d.task for d in described})
    if len(tasks) > 1:
        raise InputError(
            f"files of several tasks matched ({', '.join(tasks)}); read one task at a time",
            file=str(path_or_glob),
        )
    newest: dict[str, _File] = {}
    for d in sorted(described, key=lambda d: d.date):
        if d.model in newest:
            warnings.warn(
                f"{d.model}: several sample files for task {d.task}; using the newest, "
                f"{d.path.name}",
                stacklevel=2,
            )
        newest[d.model] = d
    rows: list[tuple[str, str, int, int]] = []
    for d in newest.values():
        rows.extend(_read_file(d, metric=metric, filter_name=filter_name, item_field=item_field))
    df = pl.DataFrame(
        rows,
        schema={"model": pl.String, "item": pl.String, "n_trials": pl.Int64, "n_correct": pl.Int64},
        orient="row",
    )
    return df.sort("model", "item")


def _read_file(
    d: _File, *, metric: str | None, filter_name: str | None, item_field: str | None
) -> list[tuple[str, str, int, int]]:
    file = str(d.path)
    by_filter: dict[str, dict[str, tuple[int, int, str]]] = {}
    chosen_metric: str | None = metric
    lines = read_text(d.path).splitlines()
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"line {lineno}"
        try:
            sample = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", file=file, record=where) from None
        if not isinstance(sample, dict):
            raise InputError("expected a JSON object", file=file, record=where)
        if "doc_id" not in sample:
            raise InputError("required field missing", file=file, record=where, field="doc_id")
        doc_id = sample["doc_id"]
        if not isinstance(doc_id, (int, str)) or isinstance(doc_id, bool):
            raise InputError(
                f"expected an integer or text, got {doc_id!r}",
                file=file,
                record=where,
                field="doc_id",
            )
        if item_field is not None:
            value = _lookup(sample.get("doc"), item_field)
            if value is None:
                raise InputError(
                    "item id field missing", file=file, record=where, field=f"doc.{item_field}"
                )
            item = str(value)
        else:
            item = str(doc_id)
        name = _choose_metric(sample, chosen_metric, file=file, where=where)
        chosen_metric = chosen_metric or name
        n_trials, n_correct = _cell(sample[name], sample, file=file, where=where, field=name)
        flt = sample.get("filter", "none")
        cells = by_filter.setdefault(str(flt), {})
        if item in cells:
            raise InputError(
                f"item {item!r} appears twice for filter {flt!r} (first on {cells[item][2]})",
                file=file,
                record=where,
                field=item_field and f"doc.{item_field}" or "doc_id",
            )
        cells[item] = (n_trials, n_correct, where)
    if not by_filter:
        raise InputError("file is empty: no records", file=file)
    if filter_name is None:
        if len(by_filter) > 1:
            raise InputError(
                f"samples of several filters ({', '.join(sorted(by_filter))}); choose one "
                "(their verdicts differ)",
                file=file,
                field="filter",
            )
        filter_name = next(iter(by_filter))
    if filter_name not in by_filter:
        raise InputError(
            f"no samples for filter {filter_name!r} (present: {', '.join(sorted(by_filter))})",
            file=file,
            field="filter",
        )
    return [(d.model, item, t, c) for item, (t, c, _) in by_filter[filter_name].items()]


def lm_eval_responses(
    path_or_glob: str | Path,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_field: str | None = None,
) -> pl.DataFrame:
    """lm-eval sample logs as the validated response table of ``benchmark`` (source imported).

    Every item must be one of ``known_items`` (the ingested items); use ``item_field``
    when lm-eval's ``doc_id`` is not the benchmark's item id.
    """
    from curation.schemas import conform, validate_frame

    cells = read_lm_eval_samples(
        path_or_glob,
        model=model,
        metric=metric,
        filter_name=filter_name,
        item_field=item_field,
    )
    known = set(known_items)
    unknown = [i for i in cells["item"].unique(maintain_order=True).to_list() if i not in known]
    if unknown:
        hint = "" if item_field else "; lm-eval numbers documents, pass the doc field with the id"
        raise InputError(
            f"{len(unknown)} items not in {items_file}, e.g. {unknown[0]!r}{hint}",
            file=str(path_or_glob),
            field=f"doc.{item_field}" if item_field else "doc_id",
        )
    table = cells.with_columns(
        pl.lit(benchmark).alias("benchmark"), pl.lit("imported").alias("source")
    )
    table = conform(table, "response").sort("model", "item")
    validate_frame(table, "response", file=str(path_or_glob))
    return table
