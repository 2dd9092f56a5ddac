"""Leave-one-model-out at leaderboard size (issue 30 item 2): exact refits vs the one-step
approximation, side by side.

    .venv/bin/python benchmarks/bench_loo.py [--models 500] [--big 4000] [--items 250]

Tables printed:

1. a simulated ``--models`` × ``--items`` panel (1PL and 2PL, 10% missing): every model
   refitted (the exact mode) vs the approximation alone (``exact_top=0``) vs the
   annotate default above the threshold (approximation + exact refits of the 20 most
   influential), wall seconds, the largest per-model |Δ max |dz|| and |Δ mean |dz||
   against the exact rows, the exact-worst model's rank by the approximation, and the
   overall max |dz| each reports.
2. a simulated ``--big`` × ``--items`` panel: the annotate default only (exact refits of
   4,000 models do not fit in a session), wall seconds of the whole ``loo_stability``
   call (its full fit included) and the approximation's error measured on the refitted
   top 20 (``approx_error``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._table import print_table  # noqa: E402
from curation.irt import loo_stability, simulate_responses  # noqa: E402
from curation.irt._checks import LOO_APPROX_TOL, LOO_EXACT_TOP  # noqa: E402


def _col(result: dict[str, Any], key: str) -> np.ndarray:
    return np.array([r[key] for r in result["per_model"]])


def _timed(**kw: Any) -> tuple[dict[str, Any], float]:
    t = time.perf_counter()
    out = loo_stability(**kw)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=500)
    ap.add_argument("--big", type=int, default=4000)
    ap.add_argument("--items", type=int, default=250)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    rows: list[list[Any]] = []
    for model in ("1pl", "2pl"):
        df, _ = simulate_responses(
            n_models=args.models, n_items=args.items, n_trials=1, model=model,
            missing=0.1, seed=args.seed,
        )  # fmt: skip
        exact, t_exact = _timed(responses=df, model=model)
        only, t_only = _timed(responses=df, model=model, exact_max_models=1, exact_top=0)
        dflt, t_dflt = _timed(
            responses=df, model=model, exact_max_models=1, exact_top=LOO_EXACT_TOP
        )
        worst = int(np.argmax(_col(exact, "max_abs_dz")))
        for name, res, t in (("exact", exact, t_exact), ("approx only", only, t_only),
                             (f"approx + top {LOO_EXACT_TOP}", dflt, t_dflt)):  # fmt: skip
            d_max = np.max(np.abs(_col(res, "max_abs_dz") - _col(exact, "max_abs_dz")))
            d_mean = np.max(np.abs(_col(res, "mean_abs_dz") - _col(exact, "mean_abs_dz")))
            rank = int(np.argsort(-_col(res, "max_abs_dz"), kind="stable").tolist().index(worst))
            rows.append([
                f"{args.models}x{args.items} {model}", name, f"{t:.1f}", f"{d_max:.4f}",
                f"{d_mean:.4f}", rank, f"{res['overall']['max_abs_dz']:.4f}",
                f"{res.get('approx_error', 0.0):.4f}",
            ])  # fmt: skip
    for model in ("1pl", "2pl"):
        df, _ = simulate_responses(
            n_models=args.big, n_items=args.items, n_trials=1, model=model,
            missing=0.1, seed=args.seed,
        )  # fmt: skip
        res, t = _timed(responses=df, model=model, exact_max_models=200, exact_top=LOO_EXACT_TOP)
        rows.append([
            f"{args.big}x{args.items} {model}", f"approx + top {LOO_EXACT_TOP}", f"{t:.1f}",
            "-", "-", "-", f"{res['overall']['max_abs_dz']:.4f}", f"{res['approx_error']:.4f}",
        ])  # fmt: skip
    print_table(
        f"leave-one-model-out: exact vs one-step approximation (tolerance {LOO_APPROX_TOL})",
        ["panel", "mode", "wall s", "max|d maxdz|", "max|d meandz|", "worst's rank",
         "max|dz|", "approx_error"],
        rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
