"""BenchFill in simulation on the bundled benchmarks: gap reduction, closeness, cost.

    .venv/bin/python benchmarks/bench_fill.py [--benchmark gsm8k ...] [--no-fixed] [--seed N]
                                              [--eta 0.7] [--sigma 0.25]

Needs the pipeline's outputs (``dvc repro``: data/items, data/difficulty,
data/calibration). For each benchmark the real search runs offline — the simulated
rewriter (params ``fill.simulation``) and the simulated panel (the calibration's own
models at their fitted abilities), every call through ``curation.llm`` and its
cache (a fresh one in a temp folder, so nothing is reused) — with 3 insertions and
the params' settings otherwise, and prints per method:

* Top-3 reduction %, and BenchFill's as a share of the oracle's;
* target dev: mean |z − z*| of the inserted items as calibrated (the paper's figure),
  and, because the simulation knows it, the true one (|z_latent − z*|);
* rewriter calls, panel trials, trials per inserted item and their share of the fixed
  budget (rounds × children × panel size × 32).

The bars: mean BenchFill reduction ≥ 90% of the oracle's; target dev ≤ 0.01; trials per
item ≤ ⅓ of the fixed budget. Then BenchFill again with the adaptive allocation off
(every valid child gets 32 trials from every model, the paper's fixed k), to show
what the allocation changed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import polars as pl  # noqa: E402

from curation.fill import FillResult, afill, fill_settings, select_panel  # noqa: E402
from curation.irt import Calibration  # noqa: E402
from curation.llm import CompletionCache, collect_settings, llm_settings  # noqa: E402
from curation.params import load_params  # noqa: E402
from curation.paths import calibration_path, difficulty_path, items_path  # noqa: E402

BENCHMARKS = ("gsm8k", "math-l5", "crux")


def run_one(
    name: str,
    params: dict,
    *,
    adaptive: bool,
    baseline: bool,
    seed: int | None,
    simulation: dict[str, float],
):
    settings = fill_settings(params)
    rule = dataclasses.replace(settings.adaptive, enabled=adaptive)
    sim = dataclasses.replace(settings.simulation, **simulation)
    settings = dataclasses.replace(
        settings,
        backend="simulate",
        insertions=3,
        targets="largest",
        adaptive=rule,
        simulation=sim,
        baseline=baseline,
        oracle=baseline,
        seed=settings.seed if seed is None else seed,
    )
    items = pl.read_parquet(REPO / items_path(name))
    difficulty = pl.read_parquet(REPO / difficulty_path(name))
    cal_file = calibration_path(name)
    calibration = Calibration.load(REPO / cal_file)
    panel = select_panel(settings, calibration, None, benchmark=name)
    with tempfile.TemporaryDirectory(prefix="bench-fill-") as tmp:

        async def main() -> FillResult:
            with CompletionCache(Path(tmp) / "cache.sqlite") as cache:
                return await afill(
                    benchmark=name,
                    items=items,
                    difficulty=difficulty,
                    calibration=calibration,
                    calibration_file=str(cal_file),
                    settings=settings,
                    panel=panel,
                    collect=collect_settings(params),
                    llm=llm_settings(params),
                    cache=cache,
                    workdir=Path(tmp) / "fill",
                )

        t0 = time.perf_counter()
        result = asyncio.run(main())
        return result, time.perf_counter() - t0


def _f(x, fmt):
    return "-" if x is None else format(x, fmt)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--benchmark", action="append", help="default: gsm8k, math-l5, crux")
    ap.add_argument("--no-fixed", action="store_true", help="skip the fixed-k comparison")
    ap.add_argument("--seed", type=int, default=None, help="fill.seed (default: params)")
    ap.add_argument("--eta", type=float, help="fill.simulation.eta (default: params)")
    ap.add_argument("--sigma", type=float, help="fill.simulation.sigma (default: params)")
    args = ap.parse_args(argv)
    simulation = {k: v for k, v in (("eta", args.eta), ("sigma", args.sigma)) if v is not None}
    params = load_params(REPO / "params.yaml")
    names = args.benchmark or list(BENCHMARKS)

    header = (
        f"{'benchmark':9} {'method':9} {'Top-3 red.%':>11} {'/oracle':>7} {'dev':>7} "
        f"{'true dev':>8} {'rounds':>7} {'rewrites':>8} {'trials':>8} {'trials/item':>11} "
        f"{'% fixed':>7}"
    )
    print(header)
    print("-" * len(header))
    results: dict[str, dict] = {}
    for name in names:
        result, seconds = run_one(
            name, params, adaptive=True, baseline=True, seed=args.seed, simulation=simulation
        )
        m = result.metrics
        results[name] = {"adaptive": m, "seconds": seconds}
        oracle = m["methods"]["oracle"]["top_3_reduction_pct"]
        for method in ("benchfill", "baseline", "oracle"):
            x = m["methods"][method]
            share = x["top_3_reduction_pct"] / oracle if oracle else None
            pct = None if x["trials_vs_fixed"] is None else 100 * x["trials_vs_fixed"]
            print(
                f"{name:9} {method:9} {x['top_3_reduction_pct']:11.2f} {_f(share, '7.3f')} "
                f"{_f(x['target_dev'], '7.4f')} {_f(x['true_target_dev'], '8.4f')} "
                f"{','.join(map(str, x['rounds'])):>7} {x['rewriter_calls']:8d} "
                f"{x['panel_trials']:8d} {_f(x['trials_per_insertion'], '11.0f')} "
                f"{_f(pct, '7.2f')}"
            )
        print(
            f"{'':9} panel {m['panel_size']} models, fixed budget "
            f"{m['fixed_budget_per_insertion']:,} trials per item, {seconds:.1f} s"
        )

    bf = [results[n]["adaptive"]["methods"]["benchfill"] for n in names]
    orc = [results[n]["adaptive"]["methods"]["oracle"] for n in names]
    mean_bf = sum(x["top_3_reduction_pct"] for x in bf) / len(bf)
    mean_or = sum(x["top_3_reduction_pct"] for x in orc) / len(orc)
    dev = max(x["target_dev"] for x in bf)
    share = max(x["trials_vs_fixed"] for x in bf)
    print()
    print(
        f"BenchFill mean Top-3 reduction {mean_bf:.2f}% vs oracle {mean_or:.2f}% "
        f"({100 * mean_bf / mean_or:.1f}% of the oracle; bar >= 90%): "
        f"{'PASS' if mean_bf >= 0.9 * mean_or else 'FAIL'}"
    )
    print(
        f"target dev, worst benchmark {dev:.4f} (bar <= 0.01): {'PASS' if dev <= 0.01 else 'FAIL'}"
    )
    print(
        f"panel trials per inserted item, worst benchmark {100 * share:.2f}% of the fixed "
        f"budget (bar <= 33.3%): {'PASS' if share <= 1 / 3 else 'FAIL'}"
    )
    if args.no_fixed:
        return 0

    print()
    print("Adaptive allocation vs the fixed k (BenchFill only, same search otherwise):")
    head = (
        f"{'benchmark':9} {'allocation':10} {'Top-3 red.%':>11} {'dev':>7} {'true dev':>8} "
        f"{'rounds':>7} {'trials/item':>11} {'% fixed':>7} {'trials/child':>12} {'s':>6}"
    )
    print(head)
    print("-" * len(head))
    for name in names:
        fixed, seconds = run_one(
            name, params, adaptive=False, baseline=False, seed=args.seed, simulation=simulation
        )
        for label, m, s in (
            ("adaptive", results[name]["adaptive"], results[name]["seconds"]),
            ("fixed k", fixed.metrics, seconds),
        ):
            x = m["methods"]["benchfill"]
            annotated = sum(v for k, v in x["by_status"].items() if k in ("calibrated", "inserted"))
            print(
                f"{name:9} {label:10} {x['top_3_reduction_pct']:11.2f} "
                f"{_f(x['target_dev'], '7.4f')} {_f(x['true_target_dev'], '8.4f')} "
                f"{','.join(map(str, x['rounds'])):>7} {x['trials_per_insertion']:11.0f} "
                f"{100 * x['trials_vs_fixed']:7.2f} {x['panel_trials'] / max(annotated, 1):12.0f} "
                f"{s:6.1f}"
            )
        a = results[name]["adaptive"]["methods"]["benchfill"]["panel_trials"]
        f = fixed.metrics["methods"]["benchfill"]["panel_trials"]
        print(f"{'':9} adaptive used {a:,} of the fixed k's {f:,} trials ({100 * a / f:.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
