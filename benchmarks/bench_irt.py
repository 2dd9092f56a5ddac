"""Speed and recovery of the IRT fits, side by side with girth, in one run.

    .venv/bin/python benchmarks/bench_irt.py [--data DIR] [--repeats N] [--no-girth] [--no-nuts]
    .venv/bin/python benchmarks/bench_irt.py --scale [--sizes 500x5000,1000x10000,...]

Tables printed:
1. a simulated binary 12 × 41,871 matrix (θ, b ~ N(0, 1), the assumptions of girth's
   MML): benchcurate MAP 1PL / 2PL (``curation.irt.fit`` end to end, from the long
   polars frame, validation included), a plain scipy L-BFGS MAP on the same 1PL
   objective (reference), girth ``rasch_mml`` and ``rasch_jml`` (on the dense
   items × models matrix they need). Time = median of repeats; r = Pearson r(b̂, b)
   over all items and over items neither all- nor none-solved.
2. the bundled real matrices (ZeroEval gsm, math-l5, crux; binary, wide CSV).
3. NUTS 1PL on 12 × 500 × 32 trials, 4 chains (time includes JAX compilation).
4. ``--scale``: the leaderboard ladder (500×5k, 1k×10k, 2k×20k, 4k×30k; binary, 10%
   missing, θ, b ~ N(0, 1)): ``fit`` 1PL and 2PL from the long frame (categorical
   names, uint8 counts) and girth ``rasch_mml`` where it fits (≤ 2k×20k), each in its
   own process so that the peak RSS (``ru_maxrss``, the data generation included) is
   that run's; r = Pearson r(b̂, b).

girth is a benchmark-only dependency (extra ``bench``); it runs unmodified on numpy 2.x
here — if its import fails, its rows say why instead of stopping the run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from scipy.optimize import minimize
from scipy.special import expit

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from _table import print_table  # noqa: E402

from curation.irt import fit, loo_stability, simulate_responses  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DATA_CANDIDATES = (REPO / "data/raw/zeroeval", REPO.parent / "shared/data/zeroeval")
BENCHMARKS = ("gsm", "math-l5", "crux")


def timed(fn: Any, repeats: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def corr(x: np.ndarray, y: np.ndarray) -> float:
    ok = np.isfinite(x) & np.isfinite(y)
    return float(np.corrcoef(x[ok], y[ok])[0, 1])


def lbfgs_1pl(k: np.ndarray, n: np.ndarray, sd: float = 3.0) -> np.ndarray:
    """Plain MAP baseline: the same 1PL posterior, L-BFGS with analytic gradient."""
    m, i = k.shape
    prec = sd**-2

    def f(x: np.ndarray) -> tuple[float, np.ndarray]:
        th, b = x[:m], x[m:]
        eta = th[:, None] - b[None, :]
        val = -np.sum(k * eta - n * np.logaddexp(0.0, eta)) + 0.5 * prec * (x @ x)
        r = k - n * expit(eta)
        return val, np.concatenate([-r.sum(1) + prec * th, r.sum(0) + prec * b])

    res = minimize(f, np.zeros(m + i), jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    th = res.x[:m]
    return res.x[m:] - th.mean()


def load_wide(path: Path) -> pl.DataFrame:
    """Wide CSV (rows = models, first column ``model``, 0/1, empty = missing) → long frame."""
    wide = pl.read_csv(path, infer_schema_length=0)
    return (
        wide.unpivot(index="model", variable_name="item", value_name="v")
        .filter(pl.col("v").is_not_null() & (pl.col("v") != ""))
        .select(
            "model",
            "item",
            pl.lit(1, dtype=pl.Int64).alias("n_trials"),
            pl.col("v").cast(pl.Int64).alias("n_correct"),
        )
    )


def bench_simulated(repeats: int, girth_on: bool, seed: int) -> None:
    n_models, n_items = 12, 41_871
    df, truth = simulate_responses(
        n_models=n_models, n_items=n_items, n_trials=1, seed=seed, theta_sd=1.0, b_sd=1.0
    )
    b_true = truth["b"]
    dense = np.zeros((n_models, n_items))
    mi = np.array([int(m.split("-")[1]) for m in df["model"]])
    ii = np.array([int(i.split("-")[1]) for i in df["item"]])
    dense[mi, ii] = df["n_correct"].to_numpy()
    score = dense.sum(0)
    free = (score > 0) & (score < n_models)
    rows: list[list[Any]] = []

    def add(name: str, seconds: float, b_hat: np.ndarray, note: str = "") -> None:
        rows.append([name, f"{seconds:.3f}", f"{corr(b_hat, b_true):.4f}",
                     f"{corr(b_hat[free], b_true[free]):.4f}", note])  # fmt: skip

    # benchcurate (items come back in first-appearance order = item-00000.. here)
    t1, r1 = timed(lambda: fit(df), repeats)
    add("benchcurate MAP 1PL (fit)", t1, r1.items["b"].to_numpy(),
        f"{r1.diagnostics['iterations']} Newton its")  # fmt: skip
    t2, r2 = timed(lambda: fit(df, model="2pl"), repeats)
    add("benchcurate MAP 2PL (fit)", t2, r2.items["b"].to_numpy(),
        f"{r2.diagnostics['iterations']} Newton its after 1PL")  # fmt: skip
    t3, b3 = timed(lambda: lbfgs_1pl(dense, np.ones_like(dense)), max(1, repeats // 2))
    add("scipy L-BFGS 1PL MAP (ref)", t3, b3, "same posterior")
    girth_times: dict[str, float] = {}
    if girth_on:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import girth

                items_by_models = dense.T.astype(int)
                for name in ("rasch_mml", "rasch_jml"):
                    fn = getattr(girth, name)
                    with np.errstate(all="ignore"):
                        t, out = timed(lambda fn=fn: fn(items_by_models), max(1, repeats // 2))
                    girth_times[name] = t
                    b_hat = np.asarray(out["Difficulty"], dtype=float)
                    add(f"girth {name}", t, b_hat, f"girth {version('girth')}")
        except Exception as exc:  # report, don't stop the run
            rows.append(["girth", "-", "-", "-", f"failed: {type(exc).__name__}: {exc}"[:80]])
    if "rasch_mml" in girth_times:
        for r in rows:
            if r[1] != "-":
                r.append(f"{girth_times['rasch_mml'] / float(r[1]):.1f}x")
    header = ["method", "time s", "r(b) all", "r(b) unbounded", "note"]
    if girth_times:
        header.append("vs rasch_mml")
    print_table(
        f"Simulated binary {n_models} x {n_items} (1PL truth, theta,b ~ N(0,1); "
        f"{int((~free).sum())} items all/none-solved); median of {repeats} (girth/L-BFGS: "
        f"{max(1, repeats // 2)})",
        header,
        rows,
    )


def bench_real(data_dir: Path | None, repeats: int) -> None:
    if data_dir is None:
        print("\nReal matrices: not found in " + ", ".join(map(str, DATA_CANDIDATES)))
        return
    rows = []
    for name in BENCHMARKS:
        path = data_dir / f"{name}_responses.csv"
        if not path.exists():
            rows.append([name, "missing", *["-"] * 8])
            continue
        df = load_wide(path)
        t1, r1 = timed(lambda df=df: fit(df), repeats)
        t2, r2 = timed(lambda df=df: fit(df, model="2pl"), repeats)
        d1, d2 = r1.diagnostics, r2.diagnostics
        loo = loo_stability(df)["overall"]
        rows.append([
            name, f"{d1['n_models']}x{d1['n_items']}",
            f"{d1['n_all_solved']}/{d1['n_none_solved']}",
            f"{t1:.3f}", f"{t2:.3f}", f"{d1['iterations']}/{d2['iterations']}",
            "2pl" if d2["bic"] < d1["bic"] else "1pl", f"{d2['bic'] - d1['bic']:.0f}",
            f"{loo['mean_abs_dz']:.4f}/{loo['max_abs_dz']:.3f}",
        ])  # fmt: skip
    print_table(
        f"Real matrices ({data_dir}); binary, median of {repeats}",
        [
            "benchmark",
            "models x items",
            "all/none",
            "1PL s",
            "2PL s",
            "iters 1PL/2PL",
            "BIC choice",
            "dBIC (2PL-1PL)",
            "LOO |dz| mean/max",
        ],  # fmt: skip
        rows,
    )


def bench_nuts(seed: int) -> None:
    df, truth = simulate_responses(n_models=12, n_items=500, n_trials=32, seed=seed)
    t0 = time.perf_counter()
    try:
        res = fit(df, method="nuts", seed=seed)
    except ImportError as exc:
        print(f"\nNUTS: skipped ({exc})")
        return
    seconds = time.perf_counter() - t0
    d = res.diagnostics
    lo, hi = np.quantile(res.draws_b, [0.05, 0.95], axis=0)
    cover = float(np.mean((truth["b"] >= lo) & (truth["b"] <= hi)))
    print_table(
        "NUTS 1PL, 12 x 500 x 32 trials (time includes JIT compilation)",
        ["chains x draws (warmup)", "chain method", "time s", "max R-hat", "min ESS bulk",
         "min ESS tail", "divergences", "90% coverage of b", "r(b)"],  # fmt: skip
        [[f"{d['chains']} x {d['draws']} ({d['warmup']})", d["chain_method"], f"{seconds:.1f}",
          f"{d['max_rhat']:.4f}", f"{d['min_ess_bulk']:.0f}", f"{d['min_ess_tail']:.0f}",
          d["divergences"], f"{cover:.3f}", f"{corr(res.items['b'].to_numpy(), truth['b']):.4f}"]],
    )  # fmt: skip


SCALE_SIZES = "500x5000,1000x10000,2000x20000,4000x30000"
GIRTH_MAX_CELLS = 40_000_000


def scale_data(n_models: int, n_items: int, seed: int) -> tuple[pl.DataFrame, np.ndarray]:
    """Binary 1PL responses, 10% missing, as a compact long frame (model-major order).

    Generated in row blocks (Enum names, uint8 counts), so the data's own peak memory
    is about twice the frame (~6 bytes per cell), not cell-sized int64 index arrays.
    """
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(size=n_models), rng.normal(size=n_items)
    models = pl.Series([f"model-{j:05d}" for j in range(n_models)], dtype=pl.String)
    items = pl.Series([f"item-{j:06d}" for j in range(n_items)], dtype=pl.String)
    models, items = models.cast(pl.Enum(models)), items.cast(pl.Enum(items))
    frames = []
    for r0 in range(0, n_models, 256):
        eta = theta[r0 : r0 + 256, None] - b[None, :]
        y = rng.random(eta.shape) < expit(eta)
        seen = rng.random(eta.shape, dtype=np.float32) >= 0.1
        rows, cols = np.nonzero(seen)
        frames.append(pl.DataFrame({
            "model": models.gather((rows + r0).astype(np.uint32)),
            "item": items.gather(cols.astype(np.uint32)),
            "n_trials": np.ones(rows.size, dtype=np.uint8),
            "n_correct": y[rows, cols].astype(np.uint8),
        }))  # fmt: skip
    df = pl.concat(frames, rechunk=True)
    del frames
    return df, b


def scale_one(n_models: int, n_items: int, method: str, seed: int) -> dict[str, Any]:
    import json
    import resource

    df, b_true = scale_data(n_models, n_items, seed)
    out: dict[str, Any] = {}
    if method == "girth":
        import girth

        dense = np.full((n_items, n_models), 2, dtype=np.int64)  # items x models, 2 = missing
        dense[df["item"].to_physical().to_numpy(), df["model"].to_physical().to_numpy()] = df[
            "n_correct"
        ].to_numpy()
        data = girth.tag_missing_data(dense, [0, 1])
        del df, dense
        t0 = time.perf_counter()
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            b_hat = np.asarray(girth.rasch_mml(data)["Difficulty"], dtype=float)
    else:
        t0 = time.perf_counter()
        res = fit(df, model=method)
        b_hat = res.items["b"].to_numpy()
        order = np.array([int(i.split("-")[1]) for i in res.items["item"]])
        b_true = b_true[order]
        out["iterations"] = res.diagnostics["iterations"]
        out["converged"] = res.diagnostics["converged"]
    out["seconds"] = time.perf_counter() - t0
    out["r"] = corr(b_hat, b_true)
    out["rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(json.dumps(out))
    return out


def bench_scale(sizes: str, girth_on: bool, seed: int) -> None:
    import json
    import subprocess

    rows = []
    for size in sizes.split(","):
        m, i = (int(x) for x in size.lower().split("x"))
        methods = ["1pl", "2pl"] + (["girth"] if girth_on and m * i <= GIRTH_MAX_CELLS else [])
        for method in methods:
            proc = subprocess.run(
                [sys.executable, __file__, "--scale-one", f"{m}x{i}", method, "--seed", str(seed)],
                capture_output=True,
                text=True,
            )
            name = "girth rasch_mml" if method == "girth" else f"benchcurate MAP {method.upper()}"
            if proc.returncode != 0:
                tail = (proc.stderr.strip().splitlines() or ["killed"])[-1]
                rows.append([f"{m}x{i}", name, "-", "-", "-", f"failed: {tail}"[:70]])
                continue
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            note = f"{got['iterations']} Newton its" if "iterations" in got else ""
            rows.append([f"{m}x{i}", name, f"{got['seconds']:.1f}", f"{got['rss_gb']:.2f}",
                         f"{got['r']:.4f}", note])  # fmt: skip
        if girth_on and m * i > GIRTH_MAX_CELLS:
            rows.append([f"{m}x{i}", "girth rasch_mml", "-", "-", "-", "not run (dense ints)"])
    print_table(
        "Scale ladder: binary, 10% missing, theta,b ~ N(0,1); fit from the long frame; "
        "peak RSS includes the data",
        ["models x items", "method", "time s", "peak RSS GB", "r(b)", "note"],
        rows,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=None, help="folder with *_responses.csv")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-girth", action="store_true")
    ap.add_argument("--no-nuts", action="store_true")
    ap.add_argument("--scale", action="store_true", help="only the scale ladder (table 4)")
    ap.add_argument("--sizes", default=SCALE_SIZES, help="MxI,... for --scale")
    ap.add_argument("--scale-one", nargs=2, metavar=("MxI", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.scale_one:
        m, i = (int(x) for x in args.scale_one[0].split("x"))
        scale_one(m, i, args.scale_one[1], args.seed)
        return 0
    if args.scale:
        bench_scale(args.sizes, not args.no_girth, args.seed)
        return 0
    data_dir = args.data or next((p for p in DATA_CANDIDATES if p.is_dir()), None)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, polars {pl.__version__}, "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    bench_simulated(args.repeats, not args.no_girth, args.seed)
    bench_real(data_dir, args.repeats)
    if not args.no_nuts:
        bench_nuts(args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
