"""Reading lm-evaluation-harness per-sample logs (``--log_samples``) as response cells.

lm-eval writes ``<output_path>/<model_name_sanitized>/samples_<task>_<date>.jsonl``
beside ``results_<date>.json``, one JSON object per (document, filter). The shapes
met in the wild, all read here:

* 2025 (lm-eval >= 0.4.5): each record names its ``filter`` and lists its
  ``metrics``::

    {"doc_id": 0, "doc": {...}, "target": "18", "arguments": {...},
     "resps": [["<raw generation>"]], "filtered_resps": ["18"],
     "filter": "strict-match", "metrics": ["exact_match"], ..., "exact_match": 1.0}

* 2024 (0.4.2 - 0.4.4): no ``filter`` and no ``metrics`` key. A task with several
  filters (gsm8k: ``strict-match`` then ``flexible-extract``) logs every document once
  per filter, one block per filter in the task's ``filter_list`` order; the block
  names come from ``results_*.json`` (``configs.<task>.filter_list``) when it is there.
* older (0.4.0 - 0.4.1): the same records as one indented JSON *list*, in a file named
  ``<model_args>_<task>.jsonl`` beside ``results.json``; JSON lists are read whatever
  the file is called.

The per-sample metric (``acc``, ``exact_match``, ``pass@1``...) is the verdict. The
filters' verdicts differ, so the filter must be chosen when there is more than one;
silently picking one would change ``n_correct``. A metric that is not 0/1 (``f1`` of
drop, a ``bleu`` score) is refused unless a ``threshold`` turns it into a verdict; a
metric logged as a (gold, prediction) pair (``f1``/``mcc`` of super_glue) is aggregated
over the corpus by lm-eval and is no per-sample verdict at all.

The model is the ``model_name`` (or ``pretrained=``/``model=`` of ``config.model_args``)
of the ``results_*.json`` beside the samples, the folder name when there is none, or
the ``model`` argument, which overrides both.
"""

from __future__ import annotations

import glob
import json
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from curation.errors import InputError
from curation.io.readers import read_text

PREFERRED_METRICS = ("acc", "exact_match", "pass@1", "em", "correct", "accuracy", "acc_norm")
"""Metric chosen when a sample lists several and none is named (first present wins)."""

_NAME = re.compile(r"^samples_(?P<task>.+?)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9.\-:]+)\.jsonl?$")
_RESULTS_DATE = re.compile(r"^results_(?P<date>.+)\.json$")
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
class _Results:
    """What a ``results*.json`` says about its run."""

    path: Path
    model: str | None
    tasks: dict[str, list[str]]  # task -> filter names, in the harness's order


@dataclass(frozen=True)
class _File:
    path: Path
    task: str
    date: str
    model: str
    model_from: str  # "--model", "results_*.json" or "folder"
    filters: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LmEvalRead:
    """What :func:`read_lm_eval` read: the cells and how they were chosen."""

    cells: pl.DataFrame
    task: str
    filter: str
    metric: str
    n_docs: int
    models: tuple[str, ...]
    model_from: tuple[str, ...]
    threshold: float | None = None

    def summary(self) -> str:
        """One line: task, filter, metric, n docs, n models (and where the names came from)."""
        metric = self.metric if self.threshold is None else f"{self.metric} >= {self.threshold:g}"
        source = "/".join(self.model_from)
        return (
            f"lm-eval: task {self.task}, filter {self.filter}, metric {metric}, "
            f"{self.n_docs} docs, {len(self.models)} models (names from {source})"
        )


def _files(path_or_glob: str | Path) -> list[Path]:
    path = Path(path_or_glob)
    if path.is_file():
        return [path]
    if path.is_dir():
        found = sorted({*path.rglob("samples_*.jsonl"), *path.rglob("samples_*.json")})
        if not found:  # lm-eval 0.4.0/0.4.1: <model_args>_<task>.jsonl beside results.json
            found = sorted(
                p
                for r in path.rglob("results*.json")
                for p in r.parent.glob("*.json*")
                if not p.name.startswith("results") and p.is_file()
            )
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


def _model_from_args(model_args: Any) -> str | None:
    if isinstance(model_args, dict):
        value = model_args.get("pretrained") or model_args.get("model")
        return str(value) if value else None
    if not isinstance(model_args, str):
        return None
    parts = dict(p.split("=", 1) for p in model_args.split(",") if "=" in p)
    for key in ("pretrained", "model", "path", "engine"):
        if parts.get(key):
            return parts[key].strip()
    return None


def _read_results(path: Path) -> _Results | None:
    try:
        data = json.loads(read_text(path))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict):
        return None
    model = data.get("model_name")
    if not isinstance(model, str) or not model:
        config = data.get("config")
        model = _model_from_args(config.get("model_args")) if isinstance(config, dict) else None
    tasks: dict[str, list[str]] = {}
    configs = data.get("configs")
    if isinstance(configs, dict):
        for task, conf in configs.items():
            flist = conf.get("filter_list") if isinstance(conf, dict) else None
            names = [f.get("name") for f in flist or [] if isinstance(f, dict)]
            tasks[str(task)] = [str(n) for n in names if n]
    results = data.get("results")
    if isinstance(results, dict):  # "exact_match,strict-match" keys, in filter order
        for task, vals in results.items():
            if tasks.get(task) or not isinstance(vals, dict):
                tasks.setdefault(task, [])
                continue
            order: list[str] = []
            for key in vals:
                if "," in key and "_stderr" not in key:
                    name = key.split(",", 1)[1]
                    if name not in order:
                        order.append(name)
            tasks[str(task)] = order
    return _Results(path, model, tasks)


def _results_beside(path: Path, date: str, cache: dict[Path, list[_Results]]) -> _Results | None:
    """The results file of the same run: same date if several, else the only one."""
    folder = path.parent
    if folder not in cache:
        found = [_read_results(p) for p in sorted(folder.glob("results*.json"))]
        cache[folder] = [r for r in found if r is not None]
    runs = cache[folder]
    for r in runs:
        m = _RESULTS_DATE.match(r.path.name)
        if date and m and m.group("date") == date:
            return r
    return runs[-1] if runs else None


def _describe(path: Path, model: str | None, cache: dict[Path, list[_Results]]) -> _File:
    m = _NAME.match(path.name)
    if m:
        task, date = m.group("task"), m.group("date")
    elif path.name.startswith("samples_") and path.suffix in (".jsonl", ".json"):
        task, date = path.stem.removeprefix("samples_"), ""
    else:
        task, date = "", ""
    results = _results_beside(path, date, cache)
    if not task and results is not None:  # 0.4.0/0.4.1 name: <model_args>_<task>.jsonl
        for known in sorted(results.tasks, key=len, reverse=True):
            if path.stem.endswith(f"_{known}") or path.stem == known:
                task = known
                break
    if not task:
        raise InputError(
            "not an lm-eval sample file name (expected samples_<task>_<date>.jsonl, or "
            "<model>_<task>.jsonl beside the results.json naming the task)",
            file=str(path),
        )
    filters = results.tasks.get(task, []) if results is not None else []
    if model:
        return _File(path, task, date, model, "--model", filters)
    if results is not None and results.model:
        return _File(path, task, date, results.model, results.path.name, filters)
    name = path.parent.name
    if not name or name in (".", "/"):
        raise InputError(
            "cannot tell the model from the folder; pass the model name", file=str(path)
        )
    return _File(path, task, date, name, "folder", filters)


def _lookup(doc: Any, dotted: str) -> Any:
    value = doc
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _is_pair(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and len(value) == 2


def _metric_keys(sample: dict[str, Any]) -> list[str]:
    """Fields that look like per-sample metrics: numbers, booleans, (gold, prediction) pairs."""
    return [
        k
        for k, v in sample.items()
        if k not in _BOOKKEEPING and (isinstance(v, (int, float)) or _is_pair(v))
    ]


def _binary_keys(sample: dict[str, Any]) -> list[str]:
    return [
        k
        for k in _metric_keys(sample)
        if isinstance(sample[k], (int, float)) and sample[k] in (0, 1)
    ]


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


def _n_responses(sample: dict[str, Any]) -> int:
    resps = sample.get("resps")
    if isinstance(resps, list) and len(resps) == 1 and isinstance(resps[0], list):
        return len(resps[0])
    return 1


def _options(sample: dict[str, Any], metric: str) -> str:
    others = [k for k in _binary_keys(sample) if k != metric]
    return f"choose a 0/1 metric ({', '.join(others)})" if others else "no 0/1 metric is logged"


def _cell(
    value: Any,
    sample: dict[str, Any],
    *,
    file: str,
    where: str,
    field: str,
    threshold: float | None,
) -> tuple[int, int]:
    if isinstance(value, bool):
        return 1, int(value)
    if _is_pair(value):
        raise InputError(
            f"metric {field!r} is logged as a (gold, prediction) pair {list(value)!r}: lm-eval "
            f"aggregates it over the whole corpus, it is no per-sample verdict; "
            f"{_options(sample, field)} with --metric",
            file=file,
            record=where,
            field=field,
        )
    if not isinstance(value, (int, float)):
        raise InputError(
            f"metric {field!r}: expected a number, got {value!r}; {_options(sample, field)} "
            "with --metric",
            file=file,
            record=where,
            field=field,
        )
    if value in (0, 1):
        return 1, int(value)
    n = _n_responses(sample)
    count = value * n
    if 0 <= value <= 1 and n > 1 and abs(count - round(count)) < 1e-6:
        return n, int(round(count))
    if threshold is not None:
        return 1, int(value >= threshold)
    raise InputError(
        f"metric {field!r} is not 0/1 (value {value}, nor a whole share of {n} responses): "
        f"pass --threshold T to count {field} >= T as correct, or {_options(sample, field)} "
        "with --metric",
        file=file,
        record=where,
        field=field,
    )


def _records(d: _File) -> list[tuple[str, Any]]:
    """(where, record) pairs of a JSONL file or of a JSON list (older harness versions)."""
    file = str(d.path)
    text = read_text(d.path)
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # JSONL whose first line is a list: reported line by line below
        if isinstance(data, list):
            return [(f"record {i}", rec) for i, rec in enumerate(data, start=1)]
    out: list[tuple[str, Any]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {lineno}"
        try:
            out.append((where, json.loads(line)))
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON ({exc.msg})", file=file, record=where) from None
    return out


def read_lm_eval(
    path_or_glob: str | Path,
    *,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_field: str | None = None,
    threshold: float | None = None,
) -> LmEvalRead:
    """Read lm-eval sample logs of one task into cells, with what was chosen.

    ``path_or_glob``: a file, a folder (searched recursively) or a glob such as
    ``results/*/samples_gsm8k_*.jsonl``. ``model``: the model name for every file;
    by default the ``results_*.json`` beside each file names it, else its folder
    (lm-eval's sanitized model name, e.g. ``org__model``). ``metric``: the
    per-sample verdict; by default the first of :data:`PREFERRED_METRICS` the
    sample lists. ``filter_name``: which filter's verdicts to use, required when a
    file has several. ``item_field``: a (dotted) field of ``doc`` holding the
    benchmark's item id; by default the ``doc_id``. ``threshold``: count a metric
    that is not 0/1 as correct when ``value >= threshold`` (refused otherwise).

    One task per call (doc ids of different tasks collide). When the same model
    and task appear in several files (reruns), the newest date wins, with a warning.
    Problems are raised as :class:`InputError` naming file, record and field.
    """
    cache: dict[Path, list[_Results]] = {}
    described = [_describe(p, model, cache) for p in _files(path_or_glob)]
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
    used_filters: set[str] = set()
    used_metrics: set[str] = set()
    for d in newest.values():
        got, flt, name = _read_file(
            d, metric=metric, filter_name=filter_name, item_field=item_field, threshold=threshold
        )
        rows.extend(got)
        used_filters.add(flt)
        used_metrics.add(name)
    df = pl.DataFrame(
        rows,
        schema={"model": pl.String, "item": pl.String, "n_trials": pl.Int64, "n_correct": pl.Int64},
        orient="row",
    ).sort("model", "item")
    return LmEvalRead(
        cells=df,
        task=tasks[0],
        filter=", ".join(sorted(used_filters)),
        metric=", ".join(sorted(used_metrics)),
        n_docs=df["item"].n_unique(),
        models=tuple(sorted(newest)),
        model_from=tuple(
            sorted(
                {
                    "results_*.json" if d.model_from.startswith("results") else d.model_from
                    for d in newest.values()
                }
            )
        ),  # fmt: skip
        threshold=threshold,
    )


def read_lm_eval_samples(
    path_or_glob: str | Path,
    *,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_field: str | None = None,
    threshold: float | None = None,
) -> pl.DataFrame:
    """Read lm-eval sample logs into ``(model, item, n_trials, n_correct)``.

    See :func:`read_lm_eval` (which also says what was chosen) for the arguments.
    """
    return read_lm_eval(
        path_or_glob,
        model=model,
        metric=metric,
        filter_name=filter_name,
        item_field=item_field,
        threshold=threshold,
    ).cells


def _read_file(
    d: _File,
    *,
    metric: str | None,
    filter_name: str | None,
    item_field: str | None,
    threshold: float | None,
) -> tuple[list[tuple[str, str, int, int]], str, str]:
    file = str(d.path)
    # filter key -> item -> (n_trials, n_correct, where); records without a filter key
    # go to blocks 0, 1, ... by how often their document was seen before
    by_filter: dict[str | int, dict[str, tuple[int, int, str]]] = {}
    chosen_metric: str | None = metric
    for where, sample in _records(d):
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
        n_trials, n_correct = _cell(
            sample[name], sample, file=file, where=where, field=name, threshold=threshold
        )
        key: str | int
        if "filter" in sample:
            key = str(sample["filter"])
            if item in by_filter.get(key, {}):
                raise InputError(
                    f"item {item!r} appears twice for filter {key!r} (first on "
                    f"{by_filter[key][item][2]})",
                    file=file,
                    record=where,
                    field=item_field and f"doc.{item_field}" or "doc_id",
                )
        else:
            key = 0
            while item in by_filter.get(key, {}):
                key += 1
        by_filter.setdefault(key, {})[item] = (n_trials, n_correct, where)
    if not by_filter or chosen_metric is None:
        raise InputError("file is empty: no records", file=file)
    named = _name_blocks(by_filter, d, item_field=item_field)
    if filter_name is None:
        if len(named) > 1:
            raise InputError(
                f"samples of several filters ({', '.join(sorted(named))}); choose one "
                "with --filter (their verdicts differ)",
                file=file,
                field="filter",
            )
        filter_name = next(iter(named))
    if filter_name not in named:
        raise InputError(
            f"no samples for filter {filter_name!r} (present: {', '.join(sorted(named))})",
            file=file,
            field="filter",
        )
    cells = [(d.model, item, t, c) for item, (t, c, _) in named[filter_name].items()]
    return cells, filter_name, chosen_metric


def _name_blocks(
    by_filter: dict[str | int, dict[str, tuple[int, int, str]]],
    d: _File,
    *,
    item_field: str | None,
) -> dict[str, dict[str, tuple[int, int, str]]]:
    """Filter name -> cells; blocks of a log without ``filter`` keys get their names here.

    Block k holds each document's (k+1)-th record. Every document must appear once per
    block, else the duplicates are not filter blocks and the first one is reported.
    """
    blocks = [k for k in by_filter if isinstance(k, int)]
    out = {k: v for k, v in by_filter.items() if isinstance(k, str)}
    if not blocks:
        return out
    first = by_filter[0]
    for k in blocks[1:]:
        if by_filter[k].keys() != first.keys():
            item = next(iter(by_filter[k].keys() - first.keys() or first.keys() - by_filter[k]))
            cells = by_filter[k].get(item) or first[item]
            raise InputError(
                f"item {item!r} does not appear once per block ({len(blocks)} blocks of "
                "duplicated documents, one per filter, must hold the same documents)",
                file=str(d.path),
                record=cells[2],
                field=item_field and f"doc.{item_field}" or "doc_id",
            )
    if len(d.filters) == len(blocks):
        names = d.filters
    elif len(blocks) == 1:
        names = ["none"]
    else:  # no results file to name them: by position
        names = [f"#{k + 1}" for k in range(len(blocks))]
    out.update({name: by_filter[k] for name, k in zip(names, blocks, strict=True)})
    return out


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
    threshold: float | None = None,
) -> tuple[pl.DataFrame, LmEvalRead]:
    """lm-eval sample logs as the validated response table of ``benchmark`` (source imported).

    Every item must be one of ``known_items`` (the ingested items); use ``item_field``
    when lm-eval's ``doc_id`` is not the benchmark's item id. Returns the table and
    what was read (:class:`LmEvalRead`, whose ``summary()`` is one line).
    """
    from curation.schemas import conform, validate_frame

    read = read_lm_eval(
        path_or_glob,
        model=model,
        metric=metric,
        filter_name=filter_name,
        item_field=item_field,
        threshold=threshold,
    )
    cells = read.cells
    known = set(known_items)
    unknown = [i for i in cells["item"].unique(maintain_order=True).to_list() if i not in known]
    if unknown:
        hint = "" if item_field else "; lm-eval numbers documents, pass the doc field with the id"
        raise InputError(
            f"{len(unknown)} items of lm-eval task {read.task!r} are not items of benchmark "
            f"{benchmark!r} ({items_file}), e.g. {unknown[0]!r}{hint}",
            file=str(path_or_glob),
            field=f"doc.{item_field}" if item_field else "doc_id",
        )
    table = cells.with_columns(
        pl.lit(benchmark).alias("benchmark"), pl.lit("imported").alias("source")
    )
    table = conform(table, "response").sort("model", "item")
    validate_frame(table, "response", file=str(path_or_glob))
    return table, read
