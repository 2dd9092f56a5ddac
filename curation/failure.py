"""The one exit path of every command: a failure is one line on stderr and an exit code.

``curate`` subcommands and the DVC stages (``curation.stage_main``) both run their work
through :func:`guarded`, so every failure reads the same way::

    error: <what it was doing>: <message>

* exit 2 -- the input (a file, params.yaml, the environment) is wrong; the message says
  which file, record and field (:class:`~curation.errors.CurationError`, or an OS error
  such as a permission problem);
* exit 3 -- anything else: a bug in benchcurate. The traceback is shown only with
  ``--debug`` or ``CURATE_DEBUG=1``, so a user never gets a wall of Python by default.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

from curation.errors import CurationError

INPUT_ERROR = 2
INTERNAL_ERROR = 3


def debug_enabled(flag: bool = False) -> bool:
    """``--debug`` given, or ``CURATE_DEBUG`` set to anything but empty/0."""
    return flag or os.environ.get("CURATE_DEBUG", "") not in ("", "0")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def guarded(
    step: Callable[[], int | None],
    *,
    doing: Callable[[], str],
    debug: bool = False,
    hint: Callable[[], str | None] | None = None,
) -> int:
    """Run ``step``; return its exit code, or report its failure and return 2/3/130.

    ``doing`` says (when asked, after the failure) what was running, e.g.
    ``annotate@gsm8k``; ``hint`` may add what to do next (how to restore outputs).
    """
    show_traceback = debug_enabled(debug)
    caught: BaseException
    try:
        return int(step() or 0)
    except CurationError as exc:
        caught, message, code = exc, str(exc), exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # stdout closed early (`... | head`): not an error of the command
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:
        caught = exc
        where = f" {exc.filename}" if exc.filename else ""
        message = f"{doing()}:{where} {exc.strerror or type(exc).__name__}"
        code = INPUT_ERROR
    except Exception as exc:
        caught = exc
        message = (
            f"{doing()}: internal error {type(exc).__name__}: {exc or '(no message)'} "
            "(a bug in benchcurate; rerun with --debug or CURATE_DEBUG=1 for the traceback)"
        )
        code = INTERNAL_ERROR
    if show_traceback:
        traceback.print_exception(caught, file=sys.stderr)
    extra = hint() if hint is not None else None
    line = f"error: {_one_line(message)}"
    if extra:
        line += f"; {extra}"
    print(line, file=sys.stderr)
    return code
