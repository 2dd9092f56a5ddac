"""Model choice on simulated multiple-choice leaderboards (issue 29): does ``auto`` pick
the truth's model, and is the chosen fit a usable difficulty axis?

    .venv/bin/python benchmarks/bench_model_choice.py [--models 4000] [--items 250]
        [--worlds 10] [--options known|unknown]

Worlds: :func:`curation.irt.simulate_leaderboard` with a 1PL, 2PL or 3PL truth (a pile of
near-chance models; a 3PL truth's floors drawn around 1/5, not at it), one trial per
cell, ``--worlds`` seeds each. ``--options known``: the item records list five options
(the 3PL holds c at 0.2); ``unknown``: a matrix-only leaderboard (one shared floor
estimated). For each truth the tables give:

1. how often ``choose_model`` (the ``auto`` rule: held-out likelihood, cluster-robust
   one-SE rule, degeneracy checks) picks each model, and how often held-out likelihood
   and BIC alone would;
2. the chosen fit against the truth: Spearman of abilities with the true θ (min and
   median over worlds), the largest a of any world against the stated bound
   (``ModelChoiceSettings.max_a``), median wall seconds of the whole choice;
3. the 2PL as it was fitted before the scale was identified (θ, b and log a priors
   only: the N(0, 3²) ability prior over thousands of models shrinks the scale): its
   abilities' slope on the true θ, Spearman with accuracy, largest a, against the 2PL
   now.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._table import print_table  # noqa: E402
from curation.irt import (  # noqa: E402
    FitSettings,
    ModelChoiceSettings,
    choose_model,
    kernel_threads,
    simulate_leaderboard,
)
from curation.irt._checks import spearman  # noqa: E402
from curation.irt._map import fit_map_1pl  # noqa: E402
from curation.irt._map_big import fit_map_2pl_big  # noqa: E402

TRUTHS = ("3pl", "2pl", "1pl")


def _unidentified_2pl(cells: Any, settings: FitSettings) -> dict[str, Any]:
    """The 2PL before issue 29: one MAP fit under N(0, 0.5²) log a, no scale identification."""
    with kernel_threads():
        one = fit_map_1pl(cells, settings)
        return fit_map_2pl_big(cells, settings, one, centre=0.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", type=int, default=4000)
    ap.add_argument("--items", type=int, default=250)
    ap.add_argument("--worlds", type=int, default=10)
    ap.add_argument("--options", choices=("known", "unknown"), default="known")
    args = ap.parse_args()
    settings, bound = FitSettings(), ModelChoiceSettings().max_a
    picks: list[list[Any]] = []
    quality: list[list[Any]] = []
    before: list[list[Any]] = []
    for truth in TRUTHS:
        chosen, heldout, bic = Counter[str](), Counter[str](), Counter[str]()
        rhos, top_a, seconds = [], [], []
        old_rows = []
        for seed in range(args.worlds):
            cells, true = simulate_leaderboard(
                n_models=args.models, n_items=args.items, truth=truth, seed=seed
            )
            floor = np.full(cells.n_items, 0.2) if args.options == "known" else None
            t0 = time.perf_counter()
            choice = choose_model(cells, floor=floor, settings=settings, seed=0)
            seconds.append(time.perf_counter() - t0)
            chosen[choice.chosen] += 1
            heldout[choice.heldout_choice or "-"] += 1
            bic[choice.bic_choice] += 1
            fit = choice.fits[choice.chosen]
            rhos.append(spearman(fit.theta, true["theta"]))
            top_a.append(0.0 if fit.a is None else float(fit.a.max()))
            if seed < 3:
                old = _unidentified_2pl(cells, settings)
                new = choice.fits["2pl"]
                assert new.a is not None
                acc = np.bincount(cells.mi, weights=cells.k) / np.bincount(cells.mi)
                for name, th, a in (("before", old["theta"], old["a"]), ("now", new.theta, new.a)):
                    old_rows.append([
                        f"{truth} #{seed}", name, f"{np.polyfit(true['theta'], th, 1)[0]:.2f}",
                        f"{th.min():.2f}..{th.max():.2f}", f"{spearman(th, acc):.3f}",
                        f"{float(np.mean(np.log(a))):+.2f}", f"{float(a.max()):.1f}",
                    ])  # fmt: skip
            print(f"{truth} world {seed}: {choice.chosen} ({seconds[-1]:.0f} s) {choice.reason}",
                  flush=True)  # fmt: skip

        def share(c: Counter[str]) -> str:
            return " ".join(f"{m}:{c[m]}" for m in ("1pl", "2pl", "3pl") if c[m])

        picks.append([truth, share(chosen), share(heldout), share(bic),
                      f"{chosen[truth]}/{args.worlds}"])  # fmt: skip
        quality.append([
            truth, f"{min(rhos):.3f}", f"{float(np.median(rhos)):.3f}",
            f"{max(top_a):.2f}" if max(top_a) else "- (1PL)", f"{bound:g}",
            f"{float(np.median(seconds)):.0f}",
        ])  # fmt: skip
        before.extend(old_rows)
    shape = f"{args.models} x {args.items}, options {args.options}, {args.worlds} worlds"
    print_table(
        f"model choice ({shape}): picks per truth",
        ["truth", "auto", "held-out alone", "BIC alone", "auto = truth"],
        picks,
    )
    print_table(f"the chosen fit against the truth ({shape})",
                ["truth", "min rho(theta)", "median rho", "max a (any world)", "bound",
                 "median s"], quality)  # fmt: skip
    print_table("2PL before the scale was identified vs now (first 3 worlds per truth)",
                ["world", "2PL", "slope on true theta", "theta range", "rho with accuracy",
                 "mean log a", "max a"], before)  # fmt: skip


if __name__ == "__main__":
    main()
