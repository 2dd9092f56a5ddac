"""`curate responses import`: evaluation logs into a benchmark's response matrix.

The logs' models land in ``data/raw/<b>/imports/`` (an input of the responses stage), or
with ``--out`` in one interchange table. The formats, their flags and the ``--format``
help come from :data:`curation.responses.READERS`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from curation.commands._common import add_common, add_log_flags, log_options, read_task_logs
from curation.responses import DEFAULT_FORMAT, READERS


def run_import(args: argparse.Namespace) -> int:
    """``curate responses import``: into a benchmark's imports, or (``--out``) one file."""
    from curation.errors import InputError
    from curation.io.tables import read_table
    from curation.params_model import read_params
    from curation.paths import imports_dir, items_path, responses_path
    from curation.responses import write_imports

    if args.out is not None:
        return _import_to_long(args)
    if not args.path or not args.benchmark or len(args.benchmark) != 1:
        raise InputError(
            "curate responses import needs --path and exactly one --benchmark (or --out FILE)"
        )
    name = args.benchmark[0]
    spec = read_params(args.params).benchmark(name, params_file=args.params)
    items_file = items_path(name)
    items = read_table(items_file, produced_by=f"ingest@{name}")
    read = read_task_logs(
        args,
        name,
        spec.lm_eval_tasks or [name],
        known_items=items["item"].to_list(),
        items_file=str(items_file),
        refused="; nothing imported",
    )
    print(read.summary)
    table = read.table
    current_file = responses_path(name)
    current = read_table(current_file, produced_by="") if current_file.is_file() else None
    for line in write_imports(table, name, current=current, replace_all=args.replace):
        print(f"{name}: {line}")
    print(
        f"{name}: {table.height} responses from {args.format} logs -> {imports_dir(name)}/ "
        f"(an input of the responses stage); run `dvc repro` to rebuild from it"
    )
    return 0


def _import_to_long(args: argparse.Namespace) -> int:
    """``--out FILE``: the logs as one interchange table, for a benchmark's `responses:`."""
    from curation.errors import InputError
    from curation.responses import read_cells, write_long

    if not args.path:
        raise InputError("curate responses import --out needs --path")
    if args.benchmark or args.replace:
        raise InputError("--out writes a file of its own: drop --benchmark/--replace")
    cells, summary = read_cells(args.format, args.path, log_options(args))
    write_long(cells, args.out)
    print(summary)
    print(
        f"{cells.height} cells ({cells['model'].n_unique()} models x "
        f"{cells['item'].n_unique()} items) -> {args.out}: point a benchmark's "
        f"`responses: {{path: {args.out}, layout: long}}` at it (matrix-only: "
        f"`items: {{texts: false, path: {args.out}}}`)"
    )
    return 0


def register(sub: Any) -> None:
    """Add ``responses`` and its ``import`` action to ``curate``'s subcommands."""
    p = sub.add_parser("responses", help="response tables (subcommand: import)")
    rsub = p.add_subparsers(dest="responses_command", metavar="ACTION", required=True)
    q = rsub.add_parser(
        "import",
        help="import evaluation logs into data/raw/<b>/imports/ (an input of `dvc repro`)",
    )
    add_common(q)
    q.add_argument(
        "--format",
        choices=tuple(READERS),
        default=DEFAULT_FORMAT,
        help="; ".join(f"{r.name}: {r.description}" for r in READERS.values()),
    )
    q.add_argument("--path", help="a log file, a folder (searched recursively) or a glob")
    add_log_flags(q)
    q.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the cells as one long table (model, item, n_trials, n_correct; .parquet, "
        ".csv or .jsonl) instead of importing into a benchmark: the responses file of a new "
        "benchmark, e.g. a leaderboard's thousands of models",
    )
    q.add_argument(
        "--replace",
        action="store_true",
        help="replace the whole matrix (default: add the log's models, replacing only "
        "their own cells)",
    )
    q.add_argument(
        "--accept-task",
        action="store_true",
        help="import although the log's task name is not the benchmark's (a renamed task)",
    )
    q.set_defaults(func=run_import)
