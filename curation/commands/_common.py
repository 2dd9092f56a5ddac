"""Arguments several ``curate`` commands share, declared once."""

from __future__ import annotations

import argparse


def add_common(p: argparse.ArgumentParser, *, benchmarks: bool = True) -> None:
    """``--params`` (default params.yaml) and, with ``benchmarks``, a repeatable ``-b``."""
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    if benchmarks:
        p.add_argument(
            "--benchmark",
            "-b",
            action="append",
            help="benchmark name from params.yaml (repeatable; default: all)",
        )
