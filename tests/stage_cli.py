"""Run a pipeline stage the way DVC does (``python pipelines/<stage>.py ARGS``), in-process.

``run_stage(["ingest", "--benchmark", "toy"])`` calls ``pipelines/ingest.py``'s ``main``
with the remaining arguments and returns its exit code, so tests see the same argument
parsing, messages and exit codes as a ``dvc repro`` run, without a subprocess each time.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence


def run_stage(argv: Sequence[str]) -> int:
    stage, *rest = argv
    module = importlib.import_module(f"pipelines.{stage}")
    return int(module.main(rest))
