"""Import this first in a stage script: what must hold before its heavy imports run.

* OpenBLAS's kernels are chosen before numpy loads (:mod:`curation.blas_kernel`).
* Ctrl-C prints one line at any moment. Once the stage runs,
  :func:`curation.failure.guarded` turns a KeyboardInterrupt into ``interrupted`` and exit
  130; before that the script is still importing numpy, scipy, polars and the library
  (seconds), and an interrupt there printed a 40-line traceback of whichever import was
  running. This module's ``sys.excepthook`` prints the same one line for an uncaught
  KeyboardInterrupt (Python still exits as killed by SIGINT); every other uncaught
  exception is printed as before.
"""

from __future__ import annotations

import sys
from types import TracebackType

import curation.blas_kernel  # noqa: F401  (before numpy: OpenBLAS picks its kernels as it loads)


def _one_line_interrupt(
    kind: type[BaseException], value: BaseException, traceback: TracebackType | None
) -> None:
    if issubclass(kind, KeyboardInterrupt):
        print("interrupted", file=sys.stderr, flush=True)
        return
    sys.__excepthook__(kind, value, traceback)


sys.excepthook = _one_line_interrupt
