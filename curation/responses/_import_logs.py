"""`curate responses import`: one reader per log format, the same table and summary out.

Each format's reader lives in its own module (``curation.io.lm_eval``, ``_inspect``,
``_leaderboard``); this one only maps the command's options onto it, so adding a
format means adding a reader and one branch here.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from curation.errors import InputError

FORMATS = ("lm-eval", "inspect", "leaderboard")
"""Log formats `curate responses import --format` reads."""


@dataclass(frozen=True)
class ImportedLogs:
    """A format's cells as the benchmark's response table, and what was read."""

    table: pl.DataFrame
    summary: str
    task: str | None
    """lm-eval's task name (checked against the benchmark's ``lm_eval_tasks``), else None."""


def read_logs(
    fmt: str,
    path: str | Path,
    *,
    benchmark: str,
    known_items: Collection[str],
    items_file: str,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_field: str | None = None,
    threshold: float | None = None,
    scorer: str | None = None,
    model_column: str = "model",
) -> ImportedLogs:
    """Read ``path`` in format ``fmt`` into ``benchmark``'s validated response table.

    Options a format has no use for must be left unset: a ``--scorer`` given to an
    lm-eval import is a mistake the user should hear about, not an ignored flag.
    """
    given = {
        "--metric": metric,
        "--filter": filter_name,
        "--item-field": item_field,
        "--scorer": scorer,
    }
    valid = {
        "lm-eval": {"--metric", "--filter", "--item-field"},
        "inspect": {"--scorer"},
        "leaderboard": {"--metric", "--item-field"},
    }
    if fmt not in valid:
        raise InputError(f"unknown import format {fmt!r}; use one of {', '.join(FORMATS)}")
    unused = [k for k, v in given.items() if v is not None and k not in valid[fmt]]
    if unused:
        raise InputError(
            f"{', '.join(unused)} does not apply to --format {fmt} "
            f"(its options: {', '.join(sorted(valid[fmt])) or 'none'}, --model, --threshold)"
        )
    if fmt == "lm-eval":
        from curation.io.lm_eval import lm_eval_responses

        table, lm = lm_eval_responses(
            path,
            benchmark=benchmark,
            known_items=known_items,
            items_file=items_file,
            model=model,
            metric=metric,
            filter_name=filter_name,
            item_field=item_field,
            threshold=threshold,
        )
        return ImportedLogs(table, lm.summary(), lm.task)
    if fmt == "inspect":
        from curation.responses._inspect import inspect_responses

        table, ins = inspect_responses(
            path,
            benchmark=benchmark,
            known_items=known_items,
            items_file=items_file,
            model=model,
            scorer=scorer,
            threshold=threshold,
        )
        return ImportedLogs(table, ins.summary(), None)  # inspect task names are free-form
    from curation.responses._leaderboard import details_responses

    table, lb = details_responses(
        path,
        benchmark=benchmark,
        known_items=known_items,
        items_file=items_file,
        model=model,
        model_column=model_column,
        metric=metric,
        item_field=item_field or "doc_id",
        threshold=threshold,
    )
    return ImportedLogs(table, lb.summary(), None)


def read_cells(
    fmt: str,
    path: str | Path,
    *,
    model: str | None = None,
    metric: str | None = None,
    filter_name: str | None = None,
    item_field: str | None = None,
    threshold: float | None = None,
    scorer: str | None = None,
) -> tuple[pl.DataFrame, str]:
    """A format's cells in the interchange shape ``(model, item, n_trials, n_correct)``.

    No benchmark is needed: this is how a leaderboard's details become the response
    matrix of a new (matrix-only) benchmark, whose items are then the matrix's ids.
    """
    if fmt == "lm-eval":
        from curation.io.lm_eval import read_lm_eval

        lm = read_lm_eval(
            path,
            model=model,
            metric=metric,
            filter_name=filter_name,
            item_field=item_field,
            threshold=threshold,
        )
        return lm.cells, lm.summary()
    if fmt == "inspect":
        from curation.responses._inspect import read_inspect

        ins = read_inspect(path, model=model, scorer=scorer, threshold=threshold)
        return ins.cells, ins.summary()
    if fmt == "leaderboard":
        from curation.responses._leaderboard import read_details

        lb = read_details(
            path,
            model=model,
            metric=metric,
            item_field=item_field or "doc_id",
            threshold=threshold,
        )
        return lb.cells, lb.summary()
    raise InputError(f"unknown import format {fmt!r}; use one of {', '.join(FORMATS)}")


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
