"""`curate summary`: the per-benchmark figures of the last run, from metrics/."""

from __future__ import annotations

import argparse
from typing import Any

from curation.commands._common import add_common


def run_summary(args: argparse.Namespace) -> int:
    """Print what `dvc repro` prints at its end (:func:`curation.summary.print_summary`)."""
    from curation.params_model import read_params
    from curation.summary import print_summary

    return print_summary(read_params(args.params))


def register(sub: Any) -> None:
    """Add ``summary`` to ``curate``'s subcommands."""
    p = sub.add_parser("summary", help="print the per-benchmark figures of the last run")
    add_common(p, benchmarks=False)
    p.set_defaults(func=run_summary)
