"""The `curate` command: the things a user runs by hand, one small function each.

Pipeline stages are not subcommands: each is ``pipelines/<stage>.py``, run by DVC
(``dvc repro``, or ``dvc repro -s <stage>@<benchmark>`` for one). ``curate`` holds what
sits around the pipeline: importing logs, human review, publishing, the progress test,
power analysis and the summary of the last run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.failure import guarded
from curation.params import load_params

if TYPE_CHECKING:
    from curation.responses import LogOptions


def _task_matches(task: str, names: list[str]) -> bool:
    """An lm-eval task name is the benchmark's when it equals one of ``names`` or extends
    it with a variant suffix (``gsm8k`` matches ``gsm8k_cot``), ignoring case and -/_."""

    def norm(text: str) -> str:
        return text.lower().replace("-", "_")

    t = norm(task)
    return any(t == norm(n) or t.startswith(norm(n) + "_") for n in names)


def _import_logs(args: argparse.Namespace) -> int:
    from curation.errors import InputError
    from curation.io.tables import read_table
    from curation.params import benchmark_spec
    from curation.paths import imports_dir, items_path, responses_path
    from curation.responses import read_logs, write_imports

    if args.out is not None:
        return _import_to_long(args)
    if not args.path or not args.benchmark or len(args.benchmark) != 1:
        raise InputError(
            "curate responses import needs --path and exactly one --benchmark (or --out FILE)"
        )
    name = args.benchmark[0]
    spec = benchmark_spec(load_params(args.params), name, params_file=args.params)
    items_file = items_path(name)
    items = read_table(items_file, produced_by=f"ingest@{name}")
    read = read_logs(
        args.format,
        args.path,
        benchmark=name,
        known_items=items["item"].to_list(),
        items_file=str(items_file),
        options=_log_options(args),
    )
    tasks = [str(t) for t in spec.extra.get("lm_eval_tasks") or [name]]
    if read.task is not None and not args.accept_task and not _task_matches(read.task, tasks):
        raise InputError(
            f"the log is lm-eval task {read.task!r}, but benchmark {name!r} takes task(s) "
            f"{', '.join(map(repr, tasks))}; nothing imported (a renamed task: list it in "
            f"{args.params}: benchmarks.{name}.lm_eval_tasks, or pass --accept-task)",
            file=str(args.path),
            field="task",
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
    cells, summary = read_cells(args.format, args.path, _log_options(args))
    write_long(cells, args.out)
    print(summary)
    print(
        f"{cells.height} cells ({cells['model'].n_unique()} models x "
        f"{cells['item'].n_unique()} items) -> {args.out}: point a benchmark's "
        f"`responses: {{path: {args.out}, layout: long}}` at it (matrix-only: "
        f"`items: {{texts: false, path: {args.out}}}`)"
    )
    return 0


def _log_options(args: argparse.Namespace) -> LogOptions:
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


def _cmd_publish(args: argparse.Namespace) -> int:
    from curation.publish._cli import run_publish_command

    return int(run_publish_command(args) or 0)


def _cmd_progress_test(args: argparse.Namespace) -> int:
    from curation.commands.progress import run_progress_test

    print(
        run_progress_test(
            benchmark=args.benchmark,
            model_a=args.model_a,
            model_b=args.model_b,
            responses=args.responses,
            n_bins=args.bins,
            n_permutations=args.permutations,
            seed=args.seed,
            out=args.out,
        )
    )
    return 0


def _cmd_power(args: argparse.Namespace) -> int:
    from curation.commands.progress import run_power

    print(
        run_power(
            benchmark=args.benchmark,
            widths=args.width,
            repeats=args.repeats,
            n_sims=args.sims,
            alpha=args.alpha,
            seed=args.seed,
            plot=args.plot,
        )
    )
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from curation.summary import print_summary

    return print_summary(load_params(args.params))


def _add_common(p: argparse.ArgumentParser, *, benchmarks: bool = True) -> None:
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    if benchmarks:
        p.add_argument(
            "--benchmark",
            "-b",
            action="append",
            help="benchmark name from params.yaml (repeatable; default: all)",
        )


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The full parser; given the command line ``argv``, one that imports only what it needs.

    ``publish``'s options come from curation.publish, which imports polars and the Hub
    client (0.6 s): with ``argv`` they are added only when ``publish`` is on the line.
    """
    parser = argparse.ArgumentParser(prog="curate")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an unexpected error (also: CURATE_DEBUG=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    from curation.commands.validate import register as register_validate

    register_validate(sub)

    p = sub.add_parser("responses", help="response tables (subcommand: import)")
    rsub = p.add_subparsers(dest="responses_command", metavar="ACTION", required=True)
    q = rsub.add_parser(
        "import",
        help="import evaluation logs into data/raw/<b>/imports/ (an input of `dvc repro`)",
    )
    _add_common(q)
    from curation.responses import DEFAULT_FORMAT, READERS

    q.add_argument(
        "--format",
        choices=tuple(READERS),
        default=DEFAULT_FORMAT,
        help="; ".join(f"{r.name}: {r.description}" for r in READERS.values()),
    )
    q.add_argument("--path", help="a log file, a folder (searched recursively) or a glob")
    q.add_argument(
        "--model",
        help="model name for every file (default: lm-eval's results_*.json beside the "
        "samples, else the folder; inspect's log header; leaderboard: the model column, "
        "else the details folder)",
    )
    q.add_argument(
        "--metric",
        help="lm-eval/leaderboard: per-sample metric (default: acc / exact_match ...)",
    )
    q.add_argument("--filter", help="lm-eval: filter name when the log has several")
    q.add_argument("--scorer", help="inspect: scorer whose value is the verdict (if several)")
    q.add_argument(
        "--threshold",
        type=float,
        default=None,
        help="count a value that is not 0/1 (f1, bleu, inspect's P...) as correct when >= this",
    )
    q.add_argument(
        "--item-field",
        help="lm-eval: field of `doc` with the item id (default doc_id); leaderboard: "
        "column with the item id (default doc_id; doc.id for a field of doc)",
    )
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
    q.set_defaults(func=_import_logs)

    from curation.commands.benchmark import register as register_benchmark

    register_benchmark(sub)

    from curation.review import register as register_review

    register_review(sub)

    p = sub.add_parser("publish", help="upload a built version to the Hub (one commit + tag)")
    if argv is None or "publish" in argv:
        from curation.publish._cli import add_publish_arguments

        add_publish_arguments(p)
    p.set_defaults(func=_cmd_publish)

    from curation.publish._cli import add_release_arguments, run_release_command

    p = sub.add_parser(
        "release",
        help="record a built version as released (releases/<b>.json, to commit): "
        "`version: auto` bumps from it",
    )
    add_release_arguments(p)
    p.set_defaults(func=run_release_command)

    p = sub.add_parser("progress-test", help="is checkpoint B better than A? (stratified test)")
    p.add_argument("--benchmark", "-b", required=True, help="calibrated benchmark")
    p.add_argument("--model-a", required=True, help="the old checkpoint (model name)")
    p.add_argument("--model-b", required=True, help="the new checkpoint (model name)")
    p.add_argument(
        "--responses",
        type=Path,
        default=None,
        help="long table (model, item, n_trials, n_correct) with both checkpoints; "
        "default: the benchmark's imported responses",
    )
    p.add_argument("--bins", type=int, default=5, help="difficulty strata (default 5)")
    p.add_argument("--permutations", type=int, default=9999, help="default 9999")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="also write the result as JSON")
    p.set_defaults(func=_cmd_progress_test)

    p = sub.add_parser("power", help="Theorem 2.3 power simulation on a benchmark's gaps")
    p.add_argument("--benchmark", "-b", required=True, help="calibrated benchmark")
    p.add_argument(
        "--width",
        type=float,
        action="append",
        help="progress width (repeatable; default: half and twice the Max Gap)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        nargs="+",
        default=None,
        help="re-evaluations per item (default: 1 4 16 64)",
    )
    p.add_argument("--sims", type=int, default=400, help="simulations per point (default 400)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", type=Path, default=None, help="PNG path (default plots/power/<b>.png)")
    p.set_defaults(func=_cmd_power)

    p = sub.add_parser("summary", help="print the per-benchmark figures of the last run")
    _add_common(p, benchmarks=False)
    p.set_defaults(func=_cmd_summary)
    from curation.commands.help import document

    return document(parser)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run one subcommand through the one exit path."""
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(argv)
        args: Any = parser.parse_args(argv)
        doing = f"curate {args.command}"
        return guarded(lambda: _command(args), doing=lambda: doing, debug=args.debug)
    finally:
        _flush_stdout()  # --help's SystemExit too: its page is still in the buffer


def _command(args: Any) -> int:
    code = int(args.func(args) or 0)
    sys.stdout.flush()  # a closed pipe shows here, where guarded() sees it, not at exit
    return code


def _flush_stdout() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    """stdout was closed early (`curate review stats | head -1`): not an error. Point it
    at /dev/null so the interpreter's own flush at exit has nowhere to fail."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    raise SystemExit(main())
