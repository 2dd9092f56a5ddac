"""`curate progress-test`: is checkpoint B better than A on a calibrated benchmark?

The test itself (and its I/O) is :func:`curation.commands._progress.run_progress_test`,
loaded only when the command runs (it imports numpy, polars and the plots).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def run(args: argparse.Namespace) -> int:
    """Run the stratified test and print its result."""
    from curation.commands._progress import run_progress_test

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


def register(sub: Any) -> None:
    """Add ``progress-test`` to ``curate``'s subcommands."""
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
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the randomisation test (default: 0)"
    )
    p.add_argument("--out", type=Path, default=None, help="also write the result as JSON")
    p.set_defaults(func=run)
