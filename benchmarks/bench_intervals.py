"""Do the intervals of DDM and the gap metrics cover? Laplace draws vs the bootstrap.

    nice python benchmarks/bench_intervals.py [--quick] [--worlds N] [--replicates R]
                      [--seed S] [--shape ci bundled around:math-l5 fit:math-l5 ...]
                      [--trials 1 8] [--methods laplace bootstrap ...]

``--quick``: the coverage test's shape only (12 × 150), 100 worlds, 39 replicates,
Laplace draws (before) vs the bootstrap (after) — a few CPU-minutes.

For each shape and trial count, draws ``--worlds`` simulated benchmarks with a known
truth (``curation.measure.World``: evenly spread abilities with jitter, a block of items
below the weakest model, a bulk inside the panel — not the fit's model), fits the default
1PL MAP, builds 90% intervals with each method and prints, per method and metric, the
share of worlds whose interval holds the true value (the estimand: the metric of the true
z on the true panel anchors), the mean interval width and the mean error of the reported
point and of the plug-in T(ẑ).

Methods: ``laplace`` (before: normal draws of each b around the mode, abilities fixed —
what the gaps stage reported before), ``bootstrap-plugin`` (the textbook parametric
bootstrap, MAP estimates as the truth), ``bootstrap`` (after: smooth empirical-Bayes
truth, the bias rule of curation.measure._bootstrap) and the same replicates with every
(``-corrected``) or no (``-uncorrected``) metric bias-corrected.

Shapes: ``ci`` is the coverage test's (12 models × 150 items); ``bundled`` the bundled
benchmarks' (40 × 721, abilities spanning ~8 logits like math-l5 and crux). Two more
worlds are built from a bundled benchmark's real data (needs ``dvc repro annotate``) and
keep its exact design (cells, missingness, one trial): ``around:<b>`` draws each truth
from smooth empirical-Bayes posteriors of the real fit (continuous difficulties — but the
bootstrap's own prior family, so it flatters the bootstrap), ``fit:<b>`` takes the fit
itself (θ̂, b̂) as the truth (difficulties tied on the score lattice — a truth no real
benchmark has, and the textbook bootstrap's home ground).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from curation.irt import FitSettings  # noqa: E402
from curation.irt._data import Cells, Dense, encode  # noqa: E402
from curation.irt._eb import SmoothTruth  # noqa: E402
from curation.irt._fit import fit_map  # noqa: E402
from curation.measure import World, coverage_experiment  # noqa: E402
from curation.measure._coverage import METHODS  # noqa: E402


class DataWorld:
    """Truths around (``around``) or equal to (``fit``) a bundled benchmark's fit, simulated
    on its real design. Duck-types :class:`curation.measure.World`."""

    def __init__(self, benchmark: str, kind: str) -> None:
        self.cells = encode(pl.read_parquet(REPO / "data" / "responses" / f"{benchmark}.parquet"))
        self.fit = fit_map(self.cells, "1pl", FitSettings())
        self.kind = kind
        lay = Dense(self.cells)
        self.smooth = SmoothTruth.fit(lay.K, lay.N, self.fit.theta, self.fit.theta_se)
        self.n_models, self.n_items = self.cells.n_models, self.cells.n_items
        self.n_trials = int(np.median(self.cells.n))

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        if self.kind == "fit":
            return self.fit.theta, self.fit.b
        theta, b = self.smooth.draw(rng, 1)
        return theta[0], b[0]

    def responses(self, theta: np.ndarray, b: np.ndarray, rng: np.random.Generator) -> Cells:
        c = self.cells
        p = 1.0 / (1.0 + np.exp(-(theta[c.mi] - b[c.ii])))
        k = rng.binomial(c.n.astype(np.int64), p).astype(np.float64)
        return Cells(c.models, c.items, c.mi, c.ii, k, c.n)


SHAPES = {
    "ci": World(n_models=12, n_items=150),
    "bundled": World(
        n_models=40, n_items=721, theta_low=-3.5, theta_high=4.3, theta_jitter=0.3, missing=0.01
    ),
}
METRICS = ("max_gap", "top_3_sum", "top_5_sum", "ddm")


def table(rows: list[dict], methods: list[str]) -> str:
    by = {(r["method"], r["metric"]): r for r in rows}
    head = f"{'':22s}" + "".join(f"  {m:^28s}" for m in METRICS)
    sub = f"{'method':22s}" + "".join(f"  {'cover  width  pt-err   plug':>28s}" for _ in METRICS)
    lines = [head, sub]
    for method in methods:
        cells = []
        for metric in METRICS:
            r = by[(method, metric)]
            cells.append(
                f"  {r['coverage']:5.2f} {r['mean_width']:6.3f} {r['point_bias']:+7.3f} "
                f"{r['plugin_bias']:+7.3f}"
            )
        lines.append(f"{method:22s}" + "".join(cells))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--worlds", type=int, default=100)
    ap.add_argument("--replicates", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1, help="seed 0 is the coverage test's")
    ap.add_argument(
        "--shape", nargs="+", default=["ci", "bundled"], help="ci, bundled, around:<b>, fit:<b>"
    )
    ap.add_argument("--trials", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument(
        "--quick", action="store_true", help="ci shape, 100 worlds, laplace vs bootstrap"
    )
    args = ap.parse_args()
    if args.quick:
        args.worlds, args.replicates, args.shape = 100, 39, ["ci"]
        args.methods = ["laplace", "bootstrap"]
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    for shape in args.shape:
        for trials in args.trials if shape in SHAPES else [1]:
            if shape in SHAPES:
                world = World(**{**SHAPES[shape].__dict__, "n_trials": trials})
            else:
                kind, benchmark = shape.split(":", 1)
                world = DataWorld(benchmark, kind)  # type: ignore[assignment]
            started = time.perf_counter()
            res = coverage_experiment(
                world,  # type: ignore[arg-type]
                n_worlds=args.worlds,
                replicates=args.replicates,
                methods=args.methods,
                seed=args.seed,
            )
            took = time.perf_counter() - started
            print(
                f"\n## {shape}: {world.n_models} models × {world.n_items} items, "
                f"{trials} trial(s) per cell — {args.worlds} worlds, {args.replicates} "
                f"replicates/draws, seed {args.seed}, 90% intervals ({took:.0f} s)"
            )
            print("cover: share of worlds covered; width: mean interval width; pt-err / plug:")
            print("mean error of the reported point / of the plug-in T(z-hat), vs the truth.")
            print(table(res.rows, args.methods))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
