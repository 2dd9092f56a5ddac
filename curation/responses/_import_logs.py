"""`curate responses import`: the log readers, one registry entry per format.

Each format's reader lives in its own module beside this one (``_lm_eval``,
``_inspect``, ``_leaderboard``). :data:`READERS` names them with what each takes, and
the command's ``--format`` choices and help are read from it (lm-eval's model registry,
inspect_ai's ``@modelapi``): adding a format is one reader module and one entry here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Protocol

from curation.errors import InputError

if TYPE_CHECKING:
    import polars as pl

# polars loads inside the readers: the CLI reads this table to build its parser


@dataclass(frozen=True)
class ImportedLogs:
    """A format's cells as the benchmark's response table, and what was read."""

    table: pl.DataFrame
    summary: str
    task: str | None
    """lm-eval's task name (checked against the benchmark's ``lm_eval_tasks``), else None."""


@dataclass(frozen=True)
class LogOptions:
    """The per-format options of `curate responses import` (None: not given)."""

    model: str | None = None
    """``--model``: the model name for every file (every format)."""
    metric: str | None = None
    """``--metric``: the per-sample metric that is the verdict."""
    filter_name: str | None = None
    """``--filter``: lm-eval's filter, when a log has several."""
    item_field: str | None = None
    """``--item-field``: the field or column with the benchmark's item id."""
    threshold: float | None = None
    """``--threshold``: a value that is not 0/1 counts as correct when >= this (every format)."""
    scorer: str | None = None
    """``--scorer``: inspect's scorer whose value is the verdict."""
    model_column: str = "model"
    """Leaderboard details: the column naming the model (not a flag)."""

    def given(self) -> dict[str, object]:
        """The format-specific flags, by flag name, with their values (None: not given)."""
        return {
            "--metric": self.metric,
            "--filter": self.filter_name,
            "--item-field": self.item_field,
            "--scorer": self.scorer,
        }


class CellsReader(Protocol):
    """Reads a format's logs into ``(model, item, n_trials, n_correct)`` and a summary line."""

    def __call__(self, path: str | Path, options: LogOptions) -> tuple[pl.DataFrame, str]: ...


class TableReader(Protocol):
    """Reads a format's logs into one benchmark's validated response table."""

    def __call__(
        self,
        path: str | Path,
        options: LogOptions,
        *,
        benchmark: str,
        known_items: Collection[str],
        items_file: str,
    ) -> ImportedLogs: ...


@dataclass(frozen=True)
class LogReader:
    """One log format `curate responses import --format` reads."""

    name: str
    """The ``--format`` value."""
    description: str
    """What files it reads (the ``--format`` help)."""
    options: frozenset[str]
    """Its format-specific flags (every format takes ``--model`` and ``--threshold``)."""
    cells: CellsReader
    """Logs -> interchange cells (``--out``: no benchmark needed)."""
    table: TableReader
    """Logs -> a benchmark's response table (every item must be one of its items)."""

    def check(self, options: LogOptions) -> None:
        """Refuse flags this format has no use for: a ``--scorer`` given to an lm-eval
        import is a mistake the user should hear about, not an ignored flag."""
        unused = [k for k, v in options.given().items() if v is not None and k not in self.options]
        if unused:
            raise InputError(
                f"{', '.join(unused)} does not apply to --format {self.name} "
                f"(its options: {', '.join(sorted(self.options)) or 'none'}, --model, "
                "--threshold)"
            )


def _lm_eval_cells(path: str | Path, options: LogOptions) -> tuple[pl.DataFrame, str]:
    from curation.responses._lm_eval import read_lm_eval

    lm = read_lm_eval(
        path,
        model=options.model,
        metric=options.metric,
        filter_name=options.filter_name,
        item_field=options.item_field,
        threshold=options.threshold,
    )
    return lm.cells, lm.summary()


def _lm_eval_table(
    path: str | Path,
    options: LogOptions,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
) -> ImportedLogs:
    from curation.responses._lm_eval import lm_eval_responses

    table, lm = lm_eval_responses(
        path,
        benchmark=benchmark,
        known_items=known_items,
        items_file=items_file,
        model=options.model,
        metric=options.metric,
        filter_name=options.filter_name,
        item_field=options.item_field,
        threshold=options.threshold,
    )
    return ImportedLogs(table, lm.summary(), lm.task)


def _inspect_cells(path: str | Path, options: LogOptions) -> tuple[pl.DataFrame, str]:
    from curation.responses._inspect import read_inspect

    ins = read_inspect(
        path, model=options.model, scorer=options.scorer, threshold=options.threshold
    )
    return ins.cells, ins.summary()


def _inspect_table(
    path: str | Path,
    options: LogOptions,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
) -> ImportedLogs:
    from curation.responses._inspect import inspect_responses

    table, ins = inspect_responses(
        path,
        benchmark=benchmark,
        known_items=known_items,
        items_file=items_file,
        model=options.model,
        scorer=options.scorer,
        threshold=options.threshold,
    )
    return ImportedLogs(table, ins.summary(), None)  # inspect task names are free-form


def _leaderboard_cells(path: str | Path, options: LogOptions) -> tuple[pl.DataFrame, str]:
    from curation.responses._leaderboard import read_details

    lb = read_details(
        path,
        model=options.model,
        metric=options.metric,
        item_field=options.item_field or "doc_id",
        threshold=options.threshold,
    )
    return lb.cells, lb.summary()


def _leaderboard_table(
    path: str | Path,
    options: LogOptions,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
) -> ImportedLogs:
    from curation.responses._leaderboard import details_responses

    table, lb = details_responses(
        path,
        benchmark=benchmark,
        known_items=known_items,
        items_file=items_file,
        model=options.model,
        model_column=options.model_column,
        metric=options.metric,
        item_field=options.item_field or "doc_id",
        threshold=options.threshold,
    )
    return ImportedLogs(table, lb.summary(), None)


READERS: Mapping[str, LogReader] = MappingProxyType(
    {
        reader.name: reader
        for reader in (
            LogReader(
                name="lm-eval",
                description="lm-evaluation-harness --log_samples files (JSONL or JSON list)",
                options=frozenset({"--metric", "--filter", "--item-field"}),
                cells=_lm_eval_cells,
                table=_lm_eval_table,
            ),
            LogReader(
                name="inspect",
                description="inspect_ai .eval/.json logs (needs benchcurate[inspect])",
                options=frozenset({"--scorer"}),
                cells=_inspect_cells,
                table=_inspect_table,
            ),
            LogReader(
                name="leaderboard",
                description="per-sample detail parquet files (doc_id + a metric column, e.g. "
                "Open LLM Leaderboard details)",
                options=frozenset({"--metric", "--item-field"}),
                cells=_leaderboard_cells,
                table=_leaderboard_table,
            ),
        )
    }
)
"""Every log format, by ``--format`` name."""

FORMATS: tuple[str, ...] = tuple(READERS)
"""Log formats `curate responses import --format` reads."""
DEFAULT_FORMAT = "lm-eval"


def log_reader(fmt: str) -> LogReader:
    """The reader of ``fmt``; an :class:`InputError` naming the formats otherwise."""
    try:
        return READERS[fmt]
    except KeyError:
        raise InputError(
            f"unknown import format {fmt!r}; use one of {', '.join(FORMATS)}"
        ) from None


def read_logs(
    fmt: str,
    path: str | Path,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
    options: LogOptions,
) -> ImportedLogs:
    """Read ``path`` in format ``fmt`` into ``benchmark``'s validated response table.

    Options a format has no use for must be left unset (:meth:`LogReader.check`).
    """
    reader = log_reader(fmt)
    reader.check(options)
    return reader.table(
        path, options, benchmark=benchmark, known_items=known_items, items_file=items_file
    )


def read_cells(fmt: str, path: str | Path, options: LogOptions) -> tuple[pl.DataFrame, str]:
    """A format's cells in the interchange shape ``(model, item, n_trials, n_correct)``.

    No benchmark is needed: this is how a leaderboard's details become the response
    matrix of a new (matrix-only) benchmark, whose items are then the matrix's ids.
    """
    return log_reader(fmt).cells(path, options)


def write_long(cells: pl.DataFrame, out: Path) -> None:
    """Write the interchange table atomically (.parquet, .csv or .jsonl by the suffix)."""
    from curation.io.atomic import atomic_path

    if out.suffix not in (".parquet", ".csv", ".jsonl"):
        raise InputError("--out must end in .parquet, .csv or .jsonl", file=str(out))
    with atomic_path(out) as tmp:
        if out.suffix == ".parquet":
            cells.write_parquet(tmp)
        elif out.suffix == ".csv":
            cells.write_csv(tmp)
        else:
            cells.write_ndjson(tmp)
