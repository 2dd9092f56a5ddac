"""`curate power`: Theorem 2.3's power simulation on a benchmark's own gaps.

The simulation (and its plot) is :func:`curation.commands._progress.run_power`, loaded
only when the command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def run(args: argparse.Namespace) -> int:
    """Run the simulation and print the power table."""
    from curation.commands._common import require_project
    from curation.commands._progress import run_power

    require_project()  # the benchmark's difficulties are this project's data/difficulty/
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


def register(sub: Any) -> None:
    """Add ``power`` to ``curate``'s subcommands."""
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
    p.add_argument(
        "--alpha", type=float, default=0.05, help="significance level of the test (default: 0.05)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the simulations (default: 0)")
    p.add_argument("--plot", type=Path, default=None, help="PNG path (default plots/power/<b>.png)")
    p.set_defaults(func=run)
