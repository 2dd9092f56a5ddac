"""Arguments several ``curate`` commands share, declared once."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from curation.responses import LogOptions


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
