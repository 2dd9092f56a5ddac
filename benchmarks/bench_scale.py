"""Leaderboard-sized benchmarks end to end (issue 30): the stages through `dvc repro`, and
the fit beside girth, in one command that prints tables.

    .venv/bin/python benchmarks/bench_scale.py [--sizes 4000x250,4000x30000]
        [--stages responses,annotate] [--fit 4000x30000] [--pairs 3] [--no-girth]
        [--only stages,fit] [--keep DIR] [--project DIR] [--fit-models 1pl,2pl]

1. **Stages.** For each ``--sizes`` entry a matrix-only benchmark is generated (a wide
   CSV, models x items, binary, 10% of cells empty) into a scratch DVC project (this
   checkout's ``dvc.yaml``, ``pipelines/``, ``curation/``, ``schemas/`` and
   ``params.yaml`` with its ``benchmarks`` replaced by the generated one: every other
   param at its default). ``dvc repro`` brings the project up to the first stage
   measured, then each stage of ``--stages`` runs as ``dvc repro -s -f <stage>@<b>``, in
   pipeline order, and its wall, CPU (user + system of DVC and the stage process) and
   peak RSS (the largest process) are printed. ``girth`` whole-process: a fresh
   process that reads the same CSV with polars and runs ``girth.rasch_mml``, measured the
   same way, interleaved with the stages (``--pairs`` rounds), so ratios compare like
   with like on a noisy machine. ``--stages all`` runs every stage of the pipeline.
2. **Fit.** ``--fit MxI``: the same kind of matrix as a long parquet file with string
   ids (what ``curate responses import --out`` writes), fitted by
   ``curation.irt.fit(pl.scan_parquet(file))`` (the public path: ids coded as the file
   streams), by ``fit`` on the same rows held with Enum ids (the categorical path), and
   by girth ``rasch_mml`` / ``twopl_mml`` on the dense matrix, each in its own process,
   alternating, ``--pairs`` rounds; median time and peak RSS, the median of the per-round
   ratios, and the recovery r of b (Pearson, against the generating b) for each.

The generating model is not the fitted one (not circular): abilities from a skewed
mixture (80% N(0, 1), 20% N(-1.5, 0.5^2)), b ~ N(0, 1), discriminations log a ~ N(0,
0.3^2), and a lower asymptote of 0.15 on a third of the items (guessing). Headline r is
against that truth's b.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._env import env_for  # noqa: E402
from benchmarks._table import print_table  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
BENCH = "lb"
MISSING = 0.1
GIRTH_2PL_MAX_CELLS = 1_000_000
"""girth ``twopl_mml`` runs only up to this many cells (300 x 2,000 took over 3 CPU minutes)."""
STAGE_ORDER = ("ingest", "responses", "check", "annotate", "gaps", "subsets", "mirt")
"""The stages a matrix-only benchmark runs (fill, judge, build skip it), in DVC's order."""


# --------------------------------------------------------------------------- data


def truth(n_models: int, n_items: int, seed: int) -> dict[str, np.ndarray]:
    """Generating parameters (see the module docstring): not the 1PL/2PL that is fitted."""
    rng = np.random.default_rng(seed)
    low = rng.random(n_models) < 0.2
    theta = np.where(low, rng.normal(-1.5, 0.5, n_models), rng.normal(0.0, 1.0, n_models))
    b = rng.normal(size=n_items)
    a = np.exp(rng.normal(0.0, 0.3, n_items))
    c = np.where(rng.random(n_items) < 1 / 3, 0.15, 0.0)
    return {"theta": theta, "b": b, "a": a, "c": c}


def blocks(n_models: int, n_items: int, seed: int, rows: int = 256) -> Any:
    """(first model, y, seen) per block of ``rows`` models: y uint8 0/1, seen bool."""
    t = truth(n_models, n_items, seed)
    rng = np.random.default_rng(seed + 1)
    for r0 in range(0, n_models, rows):
        eta = t["a"][None, :] * (t["theta"][r0 : r0 + rows, None] - t["b"][None, :])
        p = t["c"][None, :] + (1 - t["c"][None, :]) / (1 + np.exp(-eta))
        y = (rng.random(eta.shape, dtype=np.float32) < p).astype(np.uint8)
        seen = rng.random(eta.shape, dtype=np.float32) >= MISSING
        yield r0, y, seen


def model_names(n: int) -> list[str]:
    # leaderboard-like names (over 12 bytes: not inlined in polars' string views)
    return [f"org-{j % 97:02d}/model-{j:05d}-instruct" for j in range(n)]


def item_names(n: int) -> list[str]:
    return [f"task/item-{j:06d}" for j in range(n)]


def write_wide_csv(path: Path, n_models: int, n_items: int, seed: int) -> None:
    """The matrix as a wide CSV (first column ``model``), empty where a cell is missing."""
    models, items = model_names(n_models), item_names(n_items)
    with path.open("w") as fh:
        fh.write(",".join(["model", *items]) + "\n")
        for r0, y, seen in blocks(n_models, n_items, seed):
            text = np.where(seen, np.where(y == 1, "1", "0"), "")
            for j, row in enumerate(text):
                fh.write(models[r0 + j] + "," + ",".join(row.tolist()) + "\n")


def write_long_parquet(path: Path, n_models: int, n_items: int, seed: int) -> None:
    """The matrix as the long response table with string ids, sorted by (model, item)."""
    models = pl.Series(model_names(n_models))
    items = pl.Series(item_names(n_items))
    models, items = models.cast(pl.Enum(models)), items.cast(pl.Enum(items))
    frames = []
    for r0, y, seen in blocks(n_models, n_items, seed):
        rows, cols = np.nonzero(seen)
        frames.append(pl.DataFrame({
            "model": models.gather((rows + r0).astype(np.uint32)),
            "item": items.gather(cols.astype(np.uint32)),
            "n_trials": np.ones(rows.size, dtype=np.uint8),
            "n_correct": y[rows, cols],
        }))  # fmt: skip
    lf = pl.concat(frames).lazy()
    del frames
    lf.select(
        pl.col("model", "item").cast(pl.String), pl.col("n_trials", "n_correct").cast(pl.Int64)
    ).sink_parquet(path)


def dense_from_wide(path: Path) -> np.ndarray:
    """girth's input: items x models int, 2 = missing (read with polars, as a user would)."""
    df = pl.read_csv(path, infer_schema_length=0).drop("model")
    out = np.full((df.width, df.height), 2, dtype=np.int64)
    for j, name in enumerate(df.columns):
        col = df.get_column(name)
        present = col.is_not_null().to_numpy()
        out[j, present] = col.filter(col.is_not_null()).cast(pl.Int64).to_numpy()
    return out


def dense_from_long(path: Path, n_models: int, n_items: int) -> np.ndarray:
    df = pl.read_parquet(path)
    mi = df.get_column("model").str.slice(-14, 5).cast(pl.Int64).to_numpy()
    ii = df.get_column("item").str.slice(-6).cast(pl.Int64).to_numpy()
    out = np.full((n_items, n_models), 2, dtype=np.int64)
    out[ii, mi] = df.get_column("n_correct").to_numpy()
    return out


# ------------------------------------------------------------------ measurement


def measured(cmd: list[str], cwd: Path, env: dict[str, str]) -> dict[str, Any]:
    """Run ``cmd``; wall, CPU and peak RSS of it and every process it waited for."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = proc.stdout.read() if proc.stdout else b""
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    text = out.decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{text[-3000:]}")
    return {
        "wall": wall,
        "cpu": ru.ru_utime + ru.ru_stime,
        "rss_gb": ru.ru_maxrss / 2**20,
        "out": text,
    }


# ------------------------------------------------------------------- stages


def make_project(root: Path, n_models: int, n_items: int, seed: int) -> None:
    """A scratch DVC project: this checkout's pipeline, default params, one benchmark."""
    for name in ("pipelines", "curation", "schemas"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("dvc.yaml", "pyproject.toml"):
        shutil.copy(REPO / name, root / name)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    matrix = f"data/raw/{BENCH}.csv"
    params["benchmarks"] = {
        BENCH: {
            "domain": "leaderboard",
            "license": "CC-BY-4.0",
            "source": f"generated by benchmarks/bench_scale.py ({n_models}x{n_items}, seed {seed})",
            "items": {"texts": False, "path": matrix},
            "responses": {"path": matrix, "layout": "wide", "n_trials": 1},
        }
    }
    for key in ("subsets", "gaps"):  # settings naming the bundled benchmarks
        section = params.get(key) or {}
        if "benchmarks" in section:
            section["benchmarks"] = [BENCH]
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (root / "data" / "raw" / BENCH / "imports").mkdir(parents=True)
    (root / "data" / "raw" / BENCH / "imports" / ".gitkeep").touch()
    (root / "releases").mkdir()
    write_wide_csv(root / matrix, n_models, n_items, seed)
    env = env_for(root)
    for cmd in (["git", "init", "-q"], ["dvc", "init", "-q"]):
        subprocess.run(cmd, cwd=root, env=env, check=True)


GIRTH_WIDE = """
import sys, warnings, numpy as np, girth
sys.path.insert(0, {bench!r})
from bench_scale import dense_from_wide
from pathlib import Path
data = girth.tag_missing_data(dense_from_wide(Path({path!r})), [0, 1])
with warnings.catch_warnings(), np.errstate(all="ignore"):
    warnings.simplefilter("ignore")
    girth.rasch_mml(data)
"""


def bench_stages(size: str, stages: list[str], pairs: int, girth_on: bool, seed: int,
                 keep: Path | None, project: Path | None = None) -> list[list[Any]]:  # fmt: skip
    n_models, n_items = (int(x) for x in size.lower().split("x"))
    order = [s for s in STAGE_ORDER if s in stages]
    upstream = STAGE_ORDER[: STAGE_ORDER.index(order[0])]
    if project is not None:  # a kept project (--keep) whose upstream outputs exist
        root = project
        print(f"\n==> {size}: reusing {root} with this checkout's code", flush=True)
        for name in ("pipelines", "curation", "schemas"):
            shutil.rmtree(root / name)
            shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        upstream = ()
    else:
        root = Path(tempfile.mkdtemp(prefix=f"bench_scale_{size}_", dir=keep))
        print(f"\n==> {size}: generating the project in {root}", flush=True)
        make_project(root, n_models, n_items, seed)
    env = env_for(root)
    for stage in ("code", *upstream):
        target = stage if stage == "code" else f"{stage}@{BENCH}"
        print(f"  setting up: dvc repro {target}", flush=True)
        measured(["dvc", "repro", "-s", target], root, env)
    runs: dict[str, list[dict[str, Any]]] = {s: [] for s in order}
    girth_runs: list[dict[str, Any]] = []
    girth_cmd = [sys.executable, "-c", GIRTH_WIDE.format(
        bench=str(REPO / "benchmarks"), path=str(root / f"data/raw/{BENCH}.csv"))]  # fmt: skip
    for rnd in range(pairs):
        for stage in order:
            r = measured(["dvc", "repro", "-s", "-f", f"{stage}@{BENCH}"], root, env)
            runs[stage].append(r)
            print(f"  round {rnd + 1}: {stage:10s} {r['wall']:7.1f} s {r['rss_gb']:5.2f} GB",
                  flush=True)  # fmt: skip
        if girth_on:
            r = measured(girth_cmd, root, env)
            girth_runs.append(r)
            print(f"  round {rnd + 1}: girth      {r['wall']:7.1f} s {r['rss_gb']:5.2f} GB",
                  flush=True)  # fmt: skip
    rows = []
    for stage in order:
        rs = runs[stage]
        pairs_ = zip(rs, girth_runs, strict=True)
        ratio = (
            f"{statistics.median(r['wall'] / g['wall'] for r, g in pairs_):.2f}x"
            if girth_runs
            else "-"
        )
        rows.append([size, stage, *_med(rs), ratio])
    if girth_runs:
        rows.append([size, "girth rasch_mml (read CSV + fit)", *_med(girth_runs), "1x"])
    if keep is None and project is None:
        shutil.rmtree(root, ignore_errors=True)
    return rows


def _med(rs: list[dict[str, Any]]) -> list[str]:
    return [
        f"{statistics.median(r['wall'] for r in rs):.1f}",
        f"{statistics.median(r['cpu'] for r in rs):.1f}",
        f"{max(r['rss_gb'] for r in rs):.2f}",
    ]


# ---------------------------------------------------------------------- fit


def fit_one(method: str, path: Path, n_models: int, n_items: int, seed: int) -> None:
    """One fit in this process; prints a JSON line (seconds, r of b)."""
    b_true = truth(n_models, n_items, seed)["b"]
    t0 = time.perf_counter()
    if method.startswith("girth"):
        import girth

        data = girth.tag_missing_data(dense_from_long(path, n_models, n_items), [0, 1])
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            fn = girth.rasch_mml if method == "girth-1pl" else girth.twopl_mml
            b_hat = np.asarray(fn(data)["Difficulty"], dtype=float)
        order = np.arange(n_items)
    else:
        from curation.irt import fit

        model, source = method.split("-")
        if source == "string":  # the public path: the file, ids coded as it streams
            res = fit(pl.scan_parquet(path), model=model)
        else:  # the categorical path: the same rows held with Enum ids
            df = pl.read_parquet(path, columns=["n_trials", "n_correct"])
            names = (
                pl.scan_parquet(path)
                .select(
                    pl.col("model").cast(pl.Enum(model_names(n_models))),
                    pl.col("item").cast(pl.Enum(item_names(n_items))),
                )
                .collect(engine="streaming")
            )
            df = names.hstack(df.select(pl.all().cast(pl.UInt8)))
            del names
            t0 = time.perf_counter()  # the fit alone: the frame is the caller's
            res = fit(df, model=model)
        b_hat = res.items["b"].to_numpy()
        order = res.items["item"].str.slice(-6).cast(pl.Int64).to_numpy()
    seconds = time.perf_counter() - t0
    b_true = b_true[order]
    r = float(np.corrcoef(b_hat, b_true)[0, 1])
    print(json.dumps({"seconds": seconds, "r": r}))


def bench_fit(
    size: str,
    pairs: int,
    girth_on: bool,
    seed: int,
    girth_2pl_max_cells: int = GIRTH_2PL_MAX_CELLS,
    models: str = "1pl,2pl",
) -> list[list[Any]]:
    n_models, n_items = (int(x) for x in size.lower().split("x"))
    tmp = Path(tempfile.mkdtemp(prefix="bench_scale_fit_"))
    path = tmp / "responses.parquet"
    print(f"\n==> fit {size}: writing {path}", flush=True)
    write_long_parquet(path, n_models, n_items, seed)
    kinds = models.split(",")
    methods = []
    for kind in kinds:
        methods += [f"{kind}-string", f"{kind}-enum"]
        if girth_on and (kind == "1pl" or n_models * n_items <= girth_2pl_max_cells):
            methods.append(f"girth-{kind}")
    env = env_for(REPO)
    got: dict[str, list[dict[str, Any]]] = {m: [] for m in methods}
    for rnd in range(pairs):
        for m in methods:
            cmd = [sys.executable, __file__, "--fit-one", m, str(path), size, "--seed", str(seed)]
            r = measured(cmd, REPO, env)
            r.update(json.loads(r["out"].strip().splitlines()[-1]))
            got[m].append(r)
            print(
                f"  round {rnd + 1}: {m:11s} fit {r['seconds']:6.1f} s, process "
                f"{r['wall']:6.1f} s, {r['rss_gb']:5.2f} GB, r {r['r']:.4f}",
                flush=True,
            )
    shutil.rmtree(tmp, ignore_errors=True)

    def ratio(a: str, b: str) -> str:
        if a not in got or b not in got:
            return "-"
        both = zip(got[a], got[b], strict=True)
        return f"{statistics.median(x['seconds'] / y['seconds'] for x, y in both):.2f}"

    names = {
        "1pl-string": "fit 1PL, scan_parquet (string ids)",
        "1pl-enum": "fit 1PL, frame with Enum ids",
        "girth-1pl": "girth rasch_mml",
        "2pl-string": "fit 2PL, scan_parquet (string ids)",
        "2pl-enum": "fit 2PL, frame with Enum ids",
        "girth-2pl": "girth twopl_mml",
    }
    compare = {
        "1pl-string": ("1pl-enum", "girth-1pl"),
        "2pl-string": ("2pl-enum", "girth-2pl"),
    }
    rows = []
    for m in methods:
        rs = got[m]
        vs_enum, vs_girth = compare.get(m, (None, None))
        rows.append([
            size, names[m],
            f"{statistics.median(r['seconds'] for r in rs):.1f}",
            f"{max(r['rss_gb'] for r in rs):.2f}",
            f"{statistics.median(r['r'] for r in rs):.4f}",
            ratio(m, vs_enum) if vs_enum else "",
            ratio(vs_girth, m) if vs_girth else "",
        ])  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="4000x250,4000x30000")
    ap.add_argument("--stages", default="responses,annotate",
                    help="comma list of stages to measure, or 'all'")  # fmt: skip
    ap.add_argument(
        "--fit",
        default="4000x30000,500x1000",
        help="MxI,... for the fit table (girth twopl_mml only up to GIRTH_2PL_MAX_CELLS)",
    )
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--fit-models", default="1pl,2pl", help="1pl,2pl or either alone")
    ap.add_argument("--girth-2pl-max-cells", type=int, default=GIRTH_2PL_MAX_CELLS,
                    help="girth twopl_mml only up to this many cells")  # fmt: skip
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-girth", action="store_true")
    ap.add_argument("--only", default="stages,fit")
    ap.add_argument("--keep", type=Path, default=None, help="keep the scratch projects here")
    ap.add_argument(
        "--project", type=Path, default=None, help="reuse a kept project (this checkout's code)"
    )
    ap.add_argument("--fit-one", nargs=3, metavar=("METHOD", "FILE", "MxI"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.fit_one:
        method, path, size = args.fit_one
        m, i = (int(x) for x in size.split("x"))
        fit_one(method, Path(path), m, i, args.seed)
        return 0
    only = set(args.only.split(","))
    stages = list(STAGE_ORDER) if args.stages == "all" else args.stages.split(",")
    unknown = [s for s in stages if s not in STAGE_ORDER]
    if unknown:
        ap.error(f"unknown stage(s) {unknown}; a matrix-only benchmark runs {STAGE_ORDER}")
    girth_on = not args.no_girth
    print(f"bench_scale: {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.1f}, "
          f"{os.cpu_count()} cores; pairs {args.pairs}", flush=True)  # fmt: skip
    if "stages" in only:
        rows = []
        for size in args.sizes.split(","):
            rows += bench_stages(size, stages, args.pairs, girth_on, args.seed, args.keep,
                                 args.project)  # fmt: skip
        print_table(
            "Stages through `dvc repro -s -f <stage>@lb`, default params, generated wide CSV "
            f"(binary, {MISSING:.0%} missing); median of {args.pairs} rounds; CPU = DVC + stage; "
            "peak RSS = largest process; ratio = median per-round wall / girth's whole process",
            ["models x items", "stage", "wall s", "CPU s", "peak RSS GB", "vs girth"],
            rows,
        )
    if "fit" in only and args.fit:
        rows = []
        for size in args.fit.split(","):
            rows += bench_fit(size, args.pairs, girth_on, args.seed,
                              args.girth_2pl_max_cells, args.fit_models)  # fmt: skip
        print_table(
            f"curation.irt.fit vs girth, one process each, alternating; median of {args.pairs} "
            "rounds; fit time excludes reading for the Enum path only (its frame is the "
            "caller's); r = Pearson r of b with the generating b; peak RSS includes the data",
            ["models x items", "method", "fit s", "peak RSS GB", "r(b)",
             "time / Enum path", "girth time / this"],
            rows,
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
