"""The `curate` command: the things a user runs by hand, one module each.

Pipeline stages are not subcommands: each is ``pipelines/<stage>.py``, run by DVC
(``dvc repro``, or ``dvc repro -s <stage>@<benchmark>`` for one). ``curate`` holds what
sits around the pipeline: importing logs, estimating a new model's score, human review,
publishing, the progress test, power analysis and the summary of the last run.

Every command is one module of :mod:`curation.commands` with a ``register(sub)`` that
adds its parser (inspect_ai's ``_cli/``); this module only builds the top parser from
them, in the order ``curate --help`` lists them, and runs the chosen one through the one
exit path (:func:`curation.failure.guarded`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from curation.commands import (
    benchmark,
    estimate,
    power,
    progress_test,
    publish,
    release,
    responses,
    review,
    summary,
    validate,
)
from curation.commands.help import document
from curation.failure import guarded

COMMANDS = (
    validate,
    responses,
    benchmark,
    estimate,
    review,
    publish,
    release,
    progress_test,
    power,
    summary,
)
"""The command modules, in ``curate --help`` order (``validate`` also adds ``schema``)."""


def build_parser() -> argparse.ArgumentParser:
    """The full ``curate`` parser, every page documented (:func:`~curation.commands.help.document`).

    Building it imports no command's library: each command loads what it needs when it runs.
    """
    parser = argparse.ArgumentParser(prog="curate")
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an unexpected error (also: CURATE_DEBUG=1)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        command.register(sub)
    return document(parser)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run one subcommand through the one exit path."""
    try:
        argv = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser()
        args: Any = parser.parse_args(argv)
        doing = f"curate {args.command}"
        return guarded(lambda: _command(args), doing=lambda: doing, debug=args.debug)
    finally:
        _flush_stdout()  # --help's SystemExit too: its page is still in the buffer


def _command(args: Any) -> int:
    from curation.io.atomic import drop_own_scratch

    try:
        code = int(args.func(args) or 0)
    finally:
        drop_own_scratch()  # the scratch folder its writes used (.curate-tmp/<pid>)
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
