"""Reading ``params.yaml``: the one place every stage takes its settings (and seeds) from.

Benchmark entries are parsed into frozen dataclasses so that a typo is reported once,
by key, before any work starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from curation.errors import ConfigError, InputError

ANSWER_TYPES = ("numeric", "exact", "choice", "code", "free")
BENCHMARK_KEYS = (
    "domain",
    "license",
    "source",
    "items",
    "responses",
    "grading",
    "lm_eval_tasks",
    "in_domain_reference",
    "limit",
    "citation",  # BibTeX of the source benchmark, printed in the dataset card
    "source_datasets",  # Hub ids of the source datasets, in the card's YAML header
)
ITEMS_KEYS = (
    "path",
    "format",
    "split",
    "fields",
    "answer_type",
    "answer_pattern",
    "metadata_fields",
    "texts",
)
RESPONSES_KEYS = (
    "path",
    "format",
    "layout",
    "model_column",
    "columns",
    "n_trials",
    "aggregate",
    "source",
    "protocol",
)


def _known_keys(section: dict[str, Any], valid: tuple[str, ...], where: str) -> None:
    """Reject a key that is not a setting (a typo would otherwise be silently ignored)."""
    unknown = [str(k) for k in section if k not in valid]
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown key; valid keys: {', '.join(valid)}")


RESPONSE_SOURCES = ("collected", "imported", "simulated")


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Load the params file as a dict (an empty file is an empty dict)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: not found (run from the project folder, or pass --params)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def _get(section: dict[str, Any], key: str, where: str, *, default: Any = ..., kind: Any = None):
    if key not in section or section[key] is None:
        if default is ...:
            raise ConfigError(f"{where}.{key}: required setting missing")
        return default
    value = section[key]
    if kind is not None and not isinstance(value, kind):
        raise ConfigError(
            f"{where}.{key}: expected {getattr(kind, '__name__', kind)}, got {type(value).__name__}"
        )
    return value


@dataclass(frozen=True)
class ItemsSpec:
    """How to read one benchmark's raw items and map their fields."""

    path: Path
    format: str | None
    split: str | None
    fields: dict[str, str]
    """Target field -> source field (item, question, answer, choices, answer_type)."""
    answer_type: str
    answer_pattern: str | None
    """Regex with one group that extracts the reference answer from the source text."""
    metadata_fields: list[str] | None
    """Source fields kept as metadata; None keeps every unmapped field."""
    texts: bool = True
    """False for a matrix-only benchmark: ``path`` is its response matrix, the items are
    the matrix's ids (no question, no answer) and the stages that need texts skip it."""


@dataclass(frozen=True)
class ResponsesSpec:
    """How to import one benchmark's response matrix."""

    path: Path
    format: str | None
    layout: str
    """``wide`` (models x items) or ``long`` (one row per model x item, or per sample)."""
    model_column: str
    columns: dict[str, str]
    """Long layout: target column -> source column (model, item, n_trials, n_correct, correct)."""
    n_trials: int
    """Wide layout: trials behind each cell (values are 0/1 or success rates)."""
    source: str
    protocol: dict[str, Any]
    aggregate: str = "none"
    """Long rows repeating a (model, item) cell: ``none`` = an error, ``sum`` = added up."""


@dataclass(frozen=True)
class BenchmarkSpec:
    """One benchmark entry of ``params.yaml``."""

    name: str
    domain: str
    license: str
    source: str
    items: ItemsSpec
    responses: ResponsesSpec | None
    extra: dict[str, Any] = field(default_factory=dict)


def benchmark_names(params: dict[str, Any]) -> list[str]:
    """Names of the benchmarks configured in ``params['benchmarks']``."""
    benchmarks = params.get("benchmarks")
    if not isinstance(benchmarks, dict) or not benchmarks:
        raise ConfigError(
            "params.yaml: `benchmarks` must map at least one benchmark name to its settings"
        )
    return list(benchmarks)


def benchmark_spec(
    params: dict[str, Any], name: str, *, params_file: str = "params.yaml"
) -> BenchmarkSpec:
    """Parse and check ``params['benchmarks'][name]``."""
    names = benchmark_names(params)
    if name not in names:
        raise ConfigError(f"{params_file}: no benchmark {name!r}; configured: {', '.join(names)}")
    where = f"{params_file}: benchmarks.{name}"
    entry = params["benchmarks"][name]
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected a mapping")
    _known_keys(entry, BENCHMARK_KEYS, where)
    items_raw = _get(entry, "items", where, kind=dict)
    iw = f"{where}.items"
    _known_keys(items_raw, ITEMS_KEYS, iw)
    fields = dict(_get(items_raw, "fields", iw, default={}, kind=dict))
    for required in ("item", "question"):
        fields.setdefault(required, required)
    answer_type = _get(items_raw, "answer_type", iw, default="exact", kind=str)
    if answer_type not in ANSWER_TYPES:
        raise ConfigError(f"{iw}.answer_type: {answer_type!r} is not one of {ANSWER_TYPES}")
    items = ItemsSpec(
        path=Path(_get(items_raw, "path", iw, kind=str)),
        format=_get(items_raw, "format", iw, default=None, kind=str),
        split=_get(items_raw, "split", iw, default=None, kind=str),
        fields=fields,
        answer_type=answer_type,
        answer_pattern=_get(items_raw, "answer_pattern", iw, default=None, kind=str),
        metadata_fields=_get(items_raw, "metadata_fields", iw, default=None, kind=list),
        texts=_get(items_raw, "texts", iw, default=True, kind=bool),
    )
    responses = None
    if entry.get("responses") is not None:
        rr = _get(entry, "responses", where, kind=dict)
        rw = f"{where}.responses"
        _known_keys(rr, RESPONSES_KEYS, rw)
        layout = _get(rr, "layout", rw, default="wide", kind=str)
        if layout not in ("wide", "long"):
            raise ConfigError(f"{rw}.layout: {layout!r} is not 'wide' or 'long'")
        source = _get(rr, "source", rw, default="imported", kind=str)
        if source not in RESPONSE_SOURCES:
            raise ConfigError(f"{rw}.source: {source!r} is not one of {RESPONSE_SOURCES}")
        n_trials = _get(rr, "n_trials", rw, default=1, kind=int)
        aggregate = _get(rr, "aggregate", rw, default="none", kind=str)
        if aggregate not in ("none", "sum"):
            raise ConfigError(f"{rw}.aggregate: {aggregate!r} is not 'none' or 'sum'")
        if n_trials < 1:
            raise ConfigError(f"{rw}.n_trials: must be at least 1, got {n_trials}")
        responses = ResponsesSpec(
            path=Path(_get(rr, "path", rw, kind=str)),
            format=_get(rr, "format", rw, default=None, kind=str),
            layout=layout,
            model_column=_get(rr, "model_column", rw, default="model", kind=str),
            columns=dict(_get(rr, "columns", rw, default={}, kind=dict)),
            n_trials=n_trials,
            source=source,
            protocol=dict(_get(rr, "protocol", rw, default={}, kind=dict)),
            aggregate=aggregate,
        )
    if not items.texts and (responses is None or responses.path != items.path):
        raise ConfigError(
            f"{iw}.texts: false (a matrix-only benchmark) takes its item ids from the response "
            f"matrix: set {iw}.path to the same file as {where}.responses.path"
        )
    tasks = _get(entry, "lm_eval_tasks", where, default=None, kind=list)
    if tasks is not None and not all(isinstance(t, str) and t for t in tasks):
        raise ConfigError(f"{where}.lm_eval_tasks: expected a list of task names")
    _get(entry, "in_domain_reference", where, default=True, kind=bool)
    limit = _get(entry, "limit", where, default=None, kind=int)
    if limit is not None and limit < 1:
        raise ConfigError(f"{where}.limit: must be at least 1 (the first N items), got {limit}")
    _get(entry, "citation", where, default=None, kind=str)
    sources = _get(entry, "source_datasets", where, default=None, kind=list)
    if sources is not None and not all(isinstance(x, str) and x for x in sources):
        raise ConfigError(f"{where}.source_datasets: expected a list of dataset ids")
    known = {"domain", "license", "source", "items", "responses"}
    return BenchmarkSpec(
        name=name,
        domain=_get(entry, "domain", where, kind=str),
        license=_get(entry, "license", where, kind=str),
        source=_get(entry, "source", where, kind=str),
        items=items,
        responses=responses,
        extra={k: v for k, v in entry.items() if k not in known},
    )


def benchmark_limit(spec: BenchmarkSpec) -> int | None:
    """``benchmarks.<b>.limit``: keep only the first N items (trying a real panel on a few).

    Applied at ingest, so every later stage (collection, annotate, fill) sees the slice.
    """
    value = spec.extra.get("limit")
    return None if value is None else int(value)


def require_file(path: Path, *, params_file: str, key: str) -> Path:
    """Fail with the params key that names ``path`` when the file is missing."""
    if not path.exists():
        raise InputError(f"file {path} does not exist", file=params_file, field=key)
    return path
