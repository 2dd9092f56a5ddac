"""The `curate` command: one small function per subcommand.

Every stage subcommand runs the same code as its DVC stage (``pipelines/<stage>.py``),
for one benchmark (``--benchmark``) or for every benchmark in params.yaml.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from curation.errors import CurationError
from curation.params import benchmark_names, load_params

StageRun = Callable[..., str]


def _stage(module: str) -> StageRun:
    import importlib

    return importlib.import_module(f"curation.stages.{module}").run


def _run_per_benchmark(args: argparse.Namespace, module: str) -> int:
    params = load_params(args.params)
    names = args.benchmark or benchmark_names(params)
    run = _stage(module)
    for name in names:
        print(run(params, name, params_file=args.params), flush=True)
    return 0


def _cmd_ingest(args: argparse.Namespace) -> int:
    return _run_per_benchmark(args, "ingest")


def _cmd_responses_import(args: argparse.Namespace) -> int:
    return _run_per_benchmark(args, "responses")


def _cmd_check(args: argparse.Namespace) -> int:
    return _run_per_benchmark(args, "check")


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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curate",
        description="benchcurate: measure and repair LLM benchmarks. Each stage subcommand "
        "runs the same code as its DVC stage; `dvc repro` runs them all.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("ingest", help="read raw benchmark items into data/items/<b>.parquet")
    _add_common(p)
    p.set_defaults(func=_cmd_ingest)

    p = sub.add_parser("responses", help="response tables (subcommand: import)")
    rsub = p.add_subparsers(dest="responses_command", metavar="ACTION", required=True)
    q = rsub.add_parser("import", help="import response matrices into data/responses/<b>.parquet")
    _add_common(q)
    q.set_defaults(func=_cmd_responses_import)

    p = sub.add_parser("check", help="response-matrix diagnostics: informativeness, reversals")
    _add_common(p)
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser("summary", help="print the per-benchmark figures of the last run")
    _add_common(p, benchmarks=False)
    p.set_defaults(func=_cmd_summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args: Any = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
