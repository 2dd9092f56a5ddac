"""The command line every DVC stage shares (``python pipelines/<stage>.py``).

Each ``pipelines/<stage>.py`` defines ``run(params, [benchmark,] params_file=...)`` and
hands it to :func:`stage_main`, which parses ``--params`` and ``--benchmark``, runs it for
each named benchmark (or every benchmark in params.yaml), prints what it made, and turns
any failure into one line on stderr (``curation.failure``: exit 2 for bad input, 3 for a
bug, the traceback only with ``--debug``), never a traceback. Under ``dvc repro`` the line
also says that the stage's previous outputs are unchanged (or, where some are missing,
the command that restores a consistent set: ``curation.restore``). Keeping this here,
not in each stage file, is what lets ``pipelines/`` hold nothing but stage code.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from typing import Any

from curation.errors import ConfigError
from curation.failure import guarded
from curation.io.atomic import all_or_nothing, clean_scratch, drop_own_scratch
from curation.params_model import read_params
from curation.restore import restore_hint

PerBenchmarkRun = Callable[..., str]
"""``run(params: ParamsFile, benchmark, *, params_file) -> printed summary``."""
JointRun = Callable[..., str]
"""``run(params: ParamsFile, *, params_file) -> printed summary`` (stages over all benchmarks)."""


def stage_parser(name: str, *, per_benchmark: bool, description: str | None) -> Any:
    """Every stage's command line: ``--params`` and ``--debug``, and ``--benchmark`` (repeatable)
    for a per-benchmark stage, so all of them read their arguments alike."""
    parser = argparse.ArgumentParser(
        prog=f"pipelines/{name}.py",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--params", default="params.yaml", help="params file (default: params.yaml)"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an unexpected error (also: CURATE_DEBUG=1)",
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
    """Run one stage from the command line; returns the process exit code.

    The params file is validated whole (:class:`curation.params_model.ParamsFile`) before
    anything runs, and that validated object is what ``run`` receives; each run's outputs
    are renamed into place only when it has succeeded.
    """
    args = stage_parser(name, per_benchmark=per_benchmark, description=description).parse_args(argv)
    doing = name

    def step() -> None:
        clean_scratch()  # what killed runs left in .curate-tmp/ (never in an output)
        try:
            work()
        finally:
            drop_own_scratch()

    def work() -> None:
        nonlocal doing
        params = read_params(args.params)
        if per_benchmark:
            for unknown in (b for b in args.benchmark or () if b not in params.benchmarks):
                configured = ", ".join(params.benchmarks)
                raise ConfigError(
                    f"{args.params}: no benchmark {unknown!r}; configured: {configured}"
                )
            for benchmark in args.benchmark or list(params.benchmarks):
                doing = f"{name}@{benchmark}"
                with all_or_nothing():
                    summary = run(params, benchmark, params_file=args.params)
                print(summary, flush=True)
        else:
            with all_or_nothing():
                summary = run(params, params_file=args.params)
            print(summary, flush=True)

    dvc_stage = os.environ.get("DVC_STAGE")  # set by `dvc repro` for the command it runs
    return guarded(
        step,
        doing=lambda: doing,
        debug=args.debug,
        hint=(lambda: restore_hint(dvc_stage)) if dvc_stage else None,
    )
