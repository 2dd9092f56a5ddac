"""Do the intervals of DDM and the gap metrics cover? Laplace draws vs the bootstrap, and
the gaps stage's self-checked intervals at the shapes users bring.

    nice python benchmarks/bench_intervals.py [--quick] [--worlds N] [--replicates R]
                      [--seed S] [--shape ci bundled around:math-l5 fit:math-l5 ...]
                      [--trials 1 8] [--methods laplace bootstrap ...]
    nice python benchmarks/bench_intervals.py --self-check [--worlds N] [--replicates R]
                      [--check-worlds W] [--shapes 12x164x1 12x1319x1 45x400x10 16x15x4]

``--self-check``: for each shape (models × items × trials) and each truth — ``smooth``
(a 2PL truth, discriminations log-normal with SD 0.3, continuous difficulties: not the
1PL the stage fits, nor the check's own jittered fit) and ``lattice`` (the 1PL fit of
one simulated data set of the world: difficulties tied at its score levels, the truth
issue 29 found the intervals miss) — draws
``--worlds`` benchmarks, runs the gaps stage's interval code on each
(:func:`curation.measure._selfcheck.checked_bootstrap`: ``--replicates`` bootstrap
replicates, ``--check-worlds`` self-check worlds per check truth) and prints, per
metric, how many intervals were printed (not withheld), the mean self-reported coverage
of the printed ones for that kind of truth (the report prints both: "if the truth is
smooth" / "if it sits at the score levels") and the share of them that held the truth.
The bar (issue 29): every printed interval's self-reported coverage within ±0.07 of the
measured one, none covering below 0.80.

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


def truth_world(
    n_models: int, n_items: int, trials: int, kind: str, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """θ, b and a of one ``smooth`` (2PL) or ``lattice`` truth (see the module docstring)."""
    world = World(n_models=n_models, n_items=n_items, n_trials=trials)
    theta, b = world.draw(rng)
    if kind == "lattice":  # the 1PL fit of one data set of the world: b tied at score levels
        mp = fit_map(world.responses(theta, b, rng), "1pl", FitSettings())
        return mp.theta, mp.b, np.ones(n_items)
    return theta, b, np.exp(rng.normal(0.0, 0.3, n_items))


def self_check_rows(
    shape: tuple[int, int, int], kind: str, worlds: int, replicates: int, check: int, seed: int
) -> list[dict]:
    """One row per metric: printed, withheld, mean self-reported and measured coverage."""
    from scipy.special import expit

    from curation.measure._coverage import true_z
    from curation.measure._posterior import METRIC_NAMES, _per_draw
    from curation.measure._selfcheck import checked_bootstrap

    m, n, trials = shape
    acc: dict[str, list[tuple[bool, float, bool]]] = {k: [] for k in METRIC_NAMES}
    for w in range(worlds):
        rng = np.random.default_rng([seed, m, n, trials, kind == "lattice", w])
        theta, b, a = truth_world(m, n, trials, kind, rng)
        mi, ii = (x.ravel() for x in np.meshgrid(np.arange(m), np.arange(n), indexing="ij"))
        k = rng.binomial(trials, expit(a[ii] * (theta[mi] - b[ii]))).astype(np.float64)
        cells = Cells(
            tuple(f"m{j}" for j in range(m)), tuple(f"i{i}" for i in range(n)), mi, ii, k,
            np.full(mi.size, float(trials)),
        )  # fmt: skip
        truth = np.sort(true_z(theta, b))[None, :]
        out, _, _ = checked_bootstrap(
            cells, replicates=replicates, worlds=check, seed=seed * 7919 + w
        )
        for name in METRIC_NAMES:
            iv, sc = getattr(out, name), out.self_check[name]  # type: ignore[index]
            t = float(_per_draw(truth, name, "uniform")[0])
            said = sc.coverage_lattice if kind == "lattice" else sc.coverage_smooth
            acc[name].append((sc.printed, said, iv.low <= t <= iv.high))
    rows = []
    for name, vals in acc.items():
        shown = [v for v in vals if v[0]]
        rows.append(
            {
                "metric": name,
                "printed": len(shown),
                "withheld": len(vals) - len(shown),
                "self": float(np.mean([v[1] for v in shown])) if shown else float("nan"),
                "measured": float(np.mean([v[2] for v in shown])) if shown else float("nan"),
            }
        )
    return rows


def run_self_check(args: argparse.Namespace) -> int:
    shapes = [tuple(int(x) for x in s.split("x")) for s in args.shapes]
    print(
        f"# Self-checked intervals (gaps stage): {args.worlds} worlds per shape and truth, "
        f"{args.replicates} bootstrap replicates, {args.check_worlds} self-check worlds per "
        f"check truth, seed {args.seed}, 90% intervals"
    )
    print(
        "printed/withheld: intervals shown / withheld by the self-check; self: mean "
        "self-reported coverage of the printed; measured: share of them holding the truth"
    )
    header = f"{'shape':>14s} {'truth':8s} {'metric':10s} {'printed':>7s} {'withheld':>8s} "
    header += f"{'self':>6s} {'measured':>8s} {'diff':>6s}  bar"
    print(header)
    failures = 0
    for shape in shapes:
        for kind in ("smooth", "lattice"):
            started = time.perf_counter()
            rows = self_check_rows(
                shape,
                kind,
                args.worlds,
                args.replicates,
                args.check_worlds,
                args.seed,  # type: ignore[arg-type]
            )
            took = time.perf_counter() - started
            for r in rows:
                diff = r["measured"] - r["self"]
                ok = r["printed"] == 0 or (abs(diff) <= 0.07 and r["measured"] >= 0.80)
                failures += not ok
                label = "x".join(str(v) for v in shape)
                print(
                    f"{label:>14s} {kind:8s} {r['metric']:10s} {r['printed']:7d} "
                    f"{r['withheld']:8d} {r['self']:6.2f} {r['measured']:8.2f} {diff:+6.2f}  "
                    f"{'ok' if ok else 'MISS'}"
                )
            print(f"{'':14s} ({took:.0f} s)", flush=True)
    print(f"\n{failures} metric rows outside the bar (|diff| <= 0.07, measured >= 0.80)")
    return 0


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
    ap.add_argument("--self-check", action="store_true", help="the gaps stage's own check")
    ap.add_argument("--check-worlds", type=int, default=50, help="self-check worlds per truth")
    ap.add_argument(
        "--shapes", nargs="+", default=["12x164x1", "12x1319x1", "45x400x10", "16x15x4"],
        help="models x items x trials (--self-check)",
    )  # fmt: skip
    args = ap.parse_args()
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if args.self_check:
        return run_self_check(args)
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
