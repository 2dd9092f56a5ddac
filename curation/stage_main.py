"""The command line every DVC stage shares (``python pipelines/<stage>.py``).

Each ``pipelines/<stage>.py`` defines ``run(params, [benchmark,] params_file=...)`` and
hands it to :func:`stage_main`, which parses ``--params`` and ``--benchmark``, runs it for
each named benchmark (or every benchmark in params.yaml), prints what it made, and turns
a :class:`~curation.errors.CurationError` into one line on stderr and exit code 2, never
a traceback. Keeping this here, not in each stage file, is what lets ``pipelines/`` hold
nothing but stage code.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from curation.errors import CurationError
from curation.params import benchmark_names, load_params

PerBenchmarkRun = Callable[..., str]
"""``run(params, benchmark, *, params_file) -> printed summary``."""
JointRun = Callable[..., str]
"""``run(params, *, params_file) -> printed summary`` (stages over all benchmarks)."""


def stage_parser(name: str, *, per_benchmark: bool, description: str | None) -> Any:
    parser = argparse.ArgumentParser(
        prog=f"pipelines/{name}.py",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--params", default="params.yaml", help="params file (default: params.yaml)"
    )
    if per_benchmark:
        parser.add_argument(
            "--benchmark",
            "-b",
            action="append",
            help="benchmark name from params.yaml (repeatable; default: all)",
        )
    return parser


def stage_main(
    name: str,
    run: PerBenchmarkRun | JointRun,
    argv: Sequence[str] | None = None,
    *,
    per_benchmark: bool = True,
    description: str | None = None,
) -> int:
    """Run one stage from the command line; returns the process exit code."""
    args = stage_parser(name, per_benchmark=per_benchmark, description=description).parse_args(argv)
    try:
        params = load_params(args.params)
        if per_benchmark:
            for benchmark in args.benchmark or benchmark_names(params):
                print(run(params, benchmark, params_file=args.params), flush=True)
        else:
            print(run(params, params_file=args.params), flush=True)
    except CurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (`... | head`): not an error of the stage
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return 0
