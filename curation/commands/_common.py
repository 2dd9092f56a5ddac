"""Arguments several ``curate`` commands share, declared once."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from curation.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Collection

    from curation.responses import ImportedLogs, LogOptions


NO_PROJECT = (
    "no params.yaml here ({where}): run curate from the project folder (the one holding "
    "params.yaml and dvc.yaml), or pass --params"
)


def require_project(params_file: str | Path | None = None) -> Path:
    """The params file a project command works from; outside a project, one message that
    says so (not "run `dvc repro`", which would fail there too)."""
    path = Path(params_file or "params.yaml")
    if not path.is_file():
        where = path if params_file else Path.cwd()
        raise ConfigError(NO_PROJECT.format(where=where))
    return path


def add_common(p: argparse.ArgumentParser, *, benchmarks: bool = True) -> None:
    """``--params`` (default params.yaml) and, with ``benchmarks``, a repeatable ``-b``."""
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    if benchmarks:
        p.add_argument(
            "--benchmark",
            "-b",
            action="append",
            help="benchmark name from params.yaml (repeatable; default: all)",
        )


def add_log_flags(p: argparse.ArgumentParser) -> None:
    """The log readers' flags (`curate responses import`, `curate estimate`): --model,
    --metric, --filter, --scorer, --threshold, --item-field."""
    p.add_argument(
        "--model",
        help="model name for every file (default: lm-eval's results_*.json beside the "
        "samples, else the folder; inspect's log header; leaderboard: the model column, "
        "else the details folder)",
    )
    p.add_argument(
        "--metric",
        help="lm-eval/leaderboard: per-sample metric (default: acc / exact_match ...)",
    )
    p.add_argument("--filter", help="lm-eval: filter name when the log has several")
    p.add_argument("--scorer", help="inspect: scorer whose value is the verdict (if several)")
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="count a value that is not 0/1 (f1, bleu, inspect's P...) as correct when >= this",
    )
    p.add_argument(
        "--item-field",
        help="lm-eval: field of `doc` with the item id (default doc_id); leaderboard: "
        "column with the item id (default doc_id; doc.id for a field of doc)",
    )


def log_options(args: argparse.Namespace) -> LogOptions:
    """The command's per-format flags as the readers take them."""
    from curation.responses import LogOptions

    return LogOptions(
        model=args.model,
        metric=args.metric,
        filter_name=args.filter,
        item_field=args.item_field,
        threshold=args.threshold,
        scorer=args.scorer,
    )


def task_matches(task: str, names: list[str]) -> bool:
    """An lm-eval task name is the benchmark's when it equals one of ``names`` or extends
    it with a variant suffix (``gsm8k`` matches ``gsm8k_cot``), ignoring case and -/_."""

    def norm(text: str) -> str:
        return text.lower().replace("-", "_")

    t = norm(task)
    return any(t == norm(n) or t.startswith(norm(n) + "_") for n in names)


def read_task_logs(
    args: argparse.Namespace,
    benchmark: str,
    tasks: list[str],
    *,
    known_items: Collection[str],
    items_file: str,
    refused: str = "",
) -> ImportedLogs:
    """``args.path`` read as ``args.format`` for ``benchmark``, refusing another lm-eval task.

    A log of a task that is not one of ``tasks`` (nor a variant of one) is one InputError,
    unless ``--accept-task``; ``refused`` says what the command then did not do.
    """
    from curation.errors import InputError
    from curation.responses import read_logs

    read = read_logs(
        args.format,
        args.path,
        benchmark=benchmark,
        known_items=known_items,
        items_file=items_file,
        options=log_options(args),
    )
    if read.task is not None and not args.accept_task and not task_matches(read.task, tasks):
        raise InputError(
            f"the log is lm-eval task {read.task!r}, but benchmark {benchmark!r} takes task(s) "
            f"{', '.join(map(repr, tasks))}{refused} (a renamed task: list it in "
            f"{args.params}: benchmarks.{benchmark}.lm_eval_tasks, or pass --accept-task)",
            file=str(args.path),
            field="task",
        )
    return read
