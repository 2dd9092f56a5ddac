"""Write a simulated leaderboard as wide CSVs, one per task (``curation.simulated_leaderboard``).

    .venv/bin/python benchmarks/make_leaderboard.py --out /tmp/lb [--models 4030]
        [--items 250 100] [--seed 0] [--index-column]

Each ``--items`` value is one task of the same models (``lb.csv``, ``lb2.csv``, …): the
first is the 4,030 × 250 leaderboard of issue 30, the second gives MIRT a joint pool
(4,030 × 350 together). ``--index-column`` writes the model names as pandas'
``df.to_csv()`` does with the models as the index: an unnamed first column (pandas reads
it back as ``Unnamed: 0``). Onboard with::

    curate benchmark add lb --responses /tmp/lb/lb.csv
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from curation.simulated_leaderboard import simulate_leaderboard, write_wide_csv  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for lb.csv, lb2.csv, ...")
    ap.add_argument("--models", type=int, default=4030)
    ap.add_argument("--items", type=int, nargs="+", default=[250])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--missing", type=float, default=0.0)
    ap.add_argument("--index-column", action="store_true", help="unnamed model column")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for task, n_items in enumerate(args.items):
        t = time.perf_counter()
        frame, _ = simulate_leaderboard(
            n_models=args.models, n_items=n_items, seed=args.seed, task=task,
            missing=args.missing, item_prefix=f"t{task}-q",
            model_column="" if args.index_column else "model",
        )  # fmt: skip
        path = args.out / ("lb.csv" if task == 0 else f"lb{task + 1}.csv")
        write_wide_csv(frame, path)
        print(f"{path}: {frame.height} models x {frame.width - 1} items "
              f"({time.perf_counter() - t:.1f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
