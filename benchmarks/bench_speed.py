"""Where users wait (issue 20): BLAS threads, leave-one-model-out, imports — side by side.

    .venv/bin/python benchmarks/bench_speed.py [--repeats N] [--responses DIR] [--before REV]

Tables printed (every comparison is interleaved in the same run; times are medians):

1. annotate's parts per bundled benchmark (the stage's BIC choice, its fit, LOO, its two
   figures as png + svg), with BLAS left at its default thread count vs pinned to one thread
   (``curation.irt._threads.KERNEL_THREADS``), wall and CPU seconds.
2. a simulated 500 × 5,000 1PL fit (the matrix-free leaderboard path), BLAS default
   vs pinned.
3. leave-one-model-out: warm-started refits (the default) vs cold refits from scratch
   (``method="refit"``, the reference): CPU time and the largest
   difference in any per-model metric.
4. import times (fresh processes): ``import curation.irt``, ``from curation.irt import
   fit`` (what a fit really loads) and ``curate --help``; with ``--before REV`` also
   for that revision (exported with ``git archive``).
5. with ``--before REV``: max |Δb|, |Δz| and LOO metric changes of the stage's fit vs
   that revision run in its own process with the machine's default BLAS threads.

Input: ``--responses DIR`` with the responses stage's ``<benchmark>.parquet`` (default
``data/responses`` when it exists), else the raw wide CSVs named in params.yaml.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from _table import print_table  # noqa: E402

from curation.irt import _threads, bic_compare, fit, loo_stability  # noqa: E402


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


def load_benchmarks(responses: Path | None, root: Path = REPO) -> dict[str, pl.DataFrame]:
    params = yaml.safe_load((root / "params.yaml").read_text())
    out = {}
    for name, spec in params["benchmarks"].items():
        if responses is not None and (responses / f"{name}.parquet").exists():
            df = pl.read_parquet(responses / f"{name}.parquet")
        else:
            df = load_wide(root / spec["responses"]["path"])
        out[name] = df.select("model", "item", "n_trials", "n_correct")
    return out


def _clock(fn: Any) -> tuple[float, float, Any]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


PARTS = ("bic", "fit", "loo", "plots")


def _plots(result: Any) -> None:
    """The stage's two figures (png + svg, the default formats) into a scratch folder."""
    from curation.plots.irt import plot_difficulty_vs_ability, plot_item_curves

    with tempfile.TemporaryDirectory() as tmp:
        plot_item_curves(result, Path(tmp) / "icc", formats=("png", "svg"))
        plot_difficulty_vs_ability(result, Path(tmp) / "wright", formats=("png", "svg"))


def annotate_parts(df: pl.DataFrame) -> dict[str, tuple[float, float]]:
    """The annotate stage's work on ``df``: BIC choice, the fit, LOO stability, figures."""
    t_bic = _clock(lambda: bic_compare(df))
    model = t_bic[2]["choice"]
    t_fit = _clock(lambda: fit(df, model=model))
    t_loo = _clock(lambda: loo_stability(df, model=model))
    t_plots = _clock(lambda: _plots(t_fit[2]))
    return {"bic": t_bic[:2], "fit": t_fit[:2], "loo": t_loo[:2], "plots": t_plots[:2]}


def bench_threads(data: dict[str, pl.DataFrame], repeats: int) -> None:
    rows = []
    for name, df in data.items():
        runs: dict[str, list[dict[str, tuple[float, float]]]] = {"default": [], "pinned": []}
        for _ in range(repeats):
            for label, limit in (("default", None), ("pinned", 1)):
                _threads.KERNEL_THREADS = limit
                runs[label].append(annotate_parts(df))
        _threads.KERNEL_THREADS = 1
        med = {
            label: {
                part: tuple(statistics.median(r[part][k] for r in rs) for k in (0, 1))
                for part in PARTS
            }
            for label, rs in runs.items()
        }
        for label in ("default", "pinned"):
            m = med[label]
            total = [sum(m[p][k] for p in m) for k in (0, 1)]
            rows.append(
                [name, label]
                + [f"{m[p][0]:.3f}/{m[p][1]:.3f}" for p in m]
                + [f"{total[0]:.2f}/{total[1]:.2f}"]
            )
        dflt = sum(med["default"][p][0] for p in med["default"])
        pin = sum(med["pinned"][p][0] for p in med["pinned"])
        rows.append([name, "ratio (wall)", "", "", "", "", f"{dflt / pin:.1f}x"])
    blas = [f"{i['internal_api']} {i['version']} ({i['num_threads']} threads)" for i in _blas()]
    print_table(
        f"annotate parts, BLAS default vs pinned to 1 thread; wall/CPU s, median of {repeats}; "
        f"{os.cpu_count()} CPUs; " + ", ".join(blas),
        ["benchmark", "BLAS", "bic_compare", "fit", "loo_stability", "plots", "total"],
        rows,
    )


def bench_big(repeats: int) -> None:
    """The leaderboard path (>= 256 models: matrix-free, its own 2 threads) pinned or not."""
    from curation.irt import simulate_responses

    df, _ = simulate_responses(n_models=500, n_items=5000, n_trials=1, missing=0.1, seed=0)
    times: dict[str, list[tuple[float, float]]] = {"default": [], "pinned": []}
    layout = ""
    for _ in range(repeats):
        for label, limit in (("default", None), ("pinned", 1)):
            _threads.KERNEL_THREADS = limit
            w, c, r = _clock(lambda: fit(df, model="1pl"))
            times[label].append((w, c))
            layout = r.diagnostics["layout"]
    _threads.KERNEL_THREADS = 1
    med = {k: [statistics.median(x[i] for x in v) for i in (0, 1)] for k, v in times.items()}
    print_table(
        f"simulated 500 x 5,000 1PL fit ({layout} layout), BLAS default vs pinned; "
        f"median of {repeats}",
        ["BLAS", "wall s", "CPU s"],
        [[k, f"{v[0]:.2f}", f"{v[1]:.2f}"] for k, v in med.items()]
        + [["ratio (wall)", f"{med['default'][0] / med['pinned'][0]:.1f}x", ""]],
    )


def _blas() -> list[dict[str, Any]]:
    from threadpoolctl import threadpool_info

    return [i for i in threadpool_info() if i["user_api"] == "blas"]


def bench_loo(data: dict[str, pl.DataFrame], repeats: int) -> None:
    rows = []
    for name, df in data.items():
        for model in ("1pl", "2pl"):
            tw, tc = [], []
            for _ in range(repeats):
                w = _clock(lambda df=df, model=model: loo_stability(df, model=model))
                c = _clock(
                    lambda df=df, model=model: loo_stability(df, model=model, method="refit")
                )
                tw.append(w[1])
                tc.append(c[1])
            warm, cold = w[2], c[2]
            diff = {
                key: max(
                    abs(a[key] - b[key])
                    for a, b in zip(warm["per_model"], cold["per_model"], strict=True)
                )
                for key in warm["per_model"][0]
                if key not in ("dropped", "n_items")
            }
            worst = max(diff, key=lambda k: diff[k])
            same = warm["overall"]["max_abs_dz"] == cold["overall"]["max_abs_dz"]
            rows.append([
                name, model, f"{statistics.median(tw):.2f}", f"{statistics.median(tc):.2f}",
                f"{statistics.median(tc) / statistics.median(tw):.1f}x",
                f"{diff[worst]:.1e} ({worst})", f"{warm['overall']['max_abs_dz']:.6f}",
                "yes" if same else "no",
            ])  # fmt: skip
    print_table(
        f"leave-one-model-out: warm-started vs cold refits (pinned); CPU s, median of {repeats}",
        [
            "benchmark",
            "model",
            "warm s",
            "cold s",
            "speed-up",
            "max |diff| per-model metric",
            "max |dz|",
            "max |dz| bit-equal",
        ],  # fmt: skip
        rows,
    )


IMPORTS = {
    "import curation.irt": ["-c", "import curation.irt"],
    "from curation.irt import fit": ["-c", "from curation.irt import fit"],
    "curate --help": ["-m", "curation.cli", "--help"],
}


def _wall(args: list[str], root: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(root)}
    t = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, cwd=root, check=True, capture_output=True)
    return time.perf_counter() - t


def bench_imports(repeats: int, before: Path | None) -> None:
    roots = {"now": REPO} | ({"before": before} if before else {})
    rows = []
    for label, args in IMPORTS.items():
        times: dict[str, list[float]] = {k: [] for k in roots}
        for _ in range(repeats):
            for k, root in roots.items():
                times[k].append(_wall(args, root))
        row = [label] + [f"{statistics.median(times[k]):.3f}" for k in roots]
        if before:
            row.append(
                f"{statistics.median(times['before']) / statistics.median(times['now']):.1f}x"
            )
        rows.append(row)
    floor = statistics.median(_wall(["-c", "pass"], REPO) for _ in range(repeats))
    rows.append(["python -c pass (floor)", f"{floor:.3f}"] + (["", ""] if before else []))
    print_table(
        f"import times: whole process wall s, median of {repeats} (interleaved)",
        ["what", "now"] + (["before", "ratio"] if before else []),
        rows,
    )


STAGE_FIT = r"""
import json, sys
import numpy as np, polars as pl
sys.path.insert(0, sys.argv[1])
from curation.irt import bic_compare, fit, loo_stability
out = {}
for name in sys.argv[3:]:
    df = pl.read_parquet(f"{sys.argv[2]}/{name}.parquet")
    model = bic_compare(df)["choice"]
    r = fit(df, model=model)
    loo = loo_stability(df, model=model)
    out[name] = {"model": model, "item": r.items["item"].to_list(), "b": r.items["b"].to_list(),
                 "z": r.items["z"].to_list(), "loo": loo["overall"]}
print(json.dumps(out))
"""


def bench_before(data: dict[str, pl.DataFrame], before: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, df in data.items():
            df.write_parquet(f"{tmp}/{name}.parquet")
        got = {}
        for label, root in (("now", REPO), ("before", before)):
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["PYTHONPATH"] = str(root)
            proc = subprocess.run(
                [sys.executable, "-c", STAGE_FIT, str(root), tmp, *data],
                env=env, cwd=root, capture_output=True, text=True, check=True,
            )  # fmt: skip
            got[label] = json.loads(proc.stdout.strip().splitlines()[-1])
    rows = []
    for name in data:
        now, old = got["now"][name], got["before"][name]
        assert now["item"] == old["item"]
        db = float(np.max(np.abs(np.array(now["b"]) - np.array(old["b"]))))
        dz = float(np.max(np.abs(np.array(now["z"]) - np.array(old["z"]))))
        dloo = {k: abs(now["loo"][k] - old["loo"][k]) for k in now["loo"]}
        worst = max(dloo, key=lambda k: dloo[k])
        rows.append([
            name, now["model"], f"{db:.1e}", f"{dz:.1e}",
            f"{max(v for k, v in dloo.items() if 'dz' in k):.1e}",
            f"{dloo[worst]:.1e} ({worst})",
        ])  # fmt: skip
    print_table(
        "now vs before (each in its own process, BLAS at the machine's default threads): "
        "the stage's fit and LOO on the same input",
        ["benchmark", "model", "max |db|", "max |dz|", "LOO |dz| metrics", "LOO max change"],
        rows,
    )


def export_revision(rev: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--responses", type=Path, default=None)
    ap.add_argument("--before", default=None, help="git revision to compare with")
    ap.add_argument("--only", default="threads,big,loo,imports,before")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    responses = args.responses or (REPO / "data/responses")
    data = load_benchmarks(responses if responses.is_dir() else None)
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}; input: "
          f"{responses if responses.is_dir() else 'raw wide CSVs (params.yaml)'}")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        before = export_revision(args.before, Path(tmp)) if args.before else None
        if "threads" in only:
            bench_threads(data, args.repeats)
        if "big" in only:
            bench_big(args.repeats)
        if "loo" in only:
            bench_loo(data, args.repeats)
        if "imports" in only:
            bench_imports(max(5, args.repeats), before)
        if "before" in only and before is not None:
            bench_before(data, before)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
