"""BenchFill scored on the truth, in the project's simulated world and in harsher ones.

    python benchmarks/bench_fill.py [--benchmark gsm8k ...] [--world bias+ ...]
                                    [--seeds 10] [--quick] [--out FILE]

Needs the pipeline's outputs (data/items, data/difficulty, data/calibration). For each
benchmark, world and seed, the real search (params.yaml ``fill``, 3 insertions at the
largest gap) runs offline in a :class:`curation.calibrate.SimulatedWorld` drawn around
the fitted calibration (true θ, a 2PL, true b of the originals, model × item effects:
``fill.world``) with a simulated rewriter (``fill.simulation``), while calibration
stays the fitted 1PL: the truth is not what the method fits. The panel's answers are
drawn directly (``direct_panel``: the same seeded draws, no prompts/cache/grading). The
seed changes the world, the rewriter and the panel.

Worlds (:data:`WORLDS`; each changes one thing of the project's, params.yaml ``fill``):
``project`` as params.yaml says; ``bias+`` / ``bias-`` a rewriter that makes every
child 0.5 logit harder / easier than asked; ``a-sd`` true discriminations with log-SD
0.5; ``theta`` true abilities 0.5 (SD) off the fitted ones; ``inter`` model × item
effects of SD 1.0. Rewriter skill ``good`` in every world, and ``none`` (no pull towards
the target) in the project's: the skill contrast says whether the rewriter or the
search's selection does the work (``--skill weak`` adds the middle preset).

Per cell, over the seeds (mean and 90% interval of the per-seed figures):

* est/or — BenchFill's Top-3 reduction on the ESTIMATED z (the confirmation estimates,
  plug-in) as a share of the oracle's estimated one;
* post/or — the posterior median of the reduction (``top_3_reduction.estimate``) as a
  share of the oracle's on the true z;
* true/or — the reduction on the TRUE z of the inserted items (the benchmark's items
  at their calibrated z in the true panel's frame, the axis the targets are set on)
  as a share of the oracle's; base/or — the budget-matched baseline's;
* cover — seeds whose 90% interval of the reduction (``top_3_reduction.low/high``)
  holds the true reduction; item cov — inserted items whose 90% interval holds their
  true z;
* true dev — BenchFill's mean |z_true − z*_true|; wins — seeds on which BenchFill's true
  reduction beats the baseline's; trials/item — panel trials per inserted item.

Bars (issue 29): with "good", in every world, BenchFill reaches >= 0.80 of the oracle on
the true z and beats the baseline on >= 9 of 10 seeds; the reduction's 90% interval
covers the truth in >= 85% of all runs. ``--quick``: 3 seeds, math-l5, the project's
world, unless given.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from curation.calibrate import PanelSetup, select_panel  # noqa: E402
from curation.fill import SKILLS, FillResult, RewriteSimulationSettings, afill  # noqa: E402
from curation.irt import Calibration  # noqa: E402
from curation.llm import CompletionCache  # noqa: E402
from curation.params_model import ParamsFile, read_params  # noqa: E402
from curation.paths import calibration_path, difficulty_path, items_path  # noqa: E402

BENCHMARKS = ("gsm8k", "math-l5", "crux")


@dataclass(frozen=True)
class World:
    """One simulated world: changes to ``fill.world`` and ``fill.simulation``."""

    label: str
    world: dict[str, float] = field(default_factory=dict)
    simulation: dict[str, float] = field(default_factory=dict)
    skills: tuple[str, ...] = ("good",)


WORLDS: dict[str, World] = {
    "project": World("params.yaml fill.world", skills=("none", "good")),
    "bias+": World("rewriter bias +0.5 logit", simulation={"bias": 0.5}),
    "bias-": World("rewriter bias -0.5 logit", simulation={"bias": -0.5}),
    "a-sd": World("discrimination log-SD 0.5", world={"a_sd": 0.5}),
    "theta": World("ability noise SD 0.5", world={"theta_sd": 0.5}),
    "inter": World("model x item SD 1.0", world={"interaction_sd": 1.0}),
}


def run_result(
    name: str, params: ParamsFile, *, skill: str, seed: int, world: World | None = None
) -> FillResult:
    """One offline fill run (BenchFill, baseline, oracle) in ``world``: the whole result.

    ``seed`` seeds the rewriter and the world (``fill.seed``) and the panel
    (``calibrate.seed``), as the shipped params.yaml gives both the same value."""
    world = world or WORLDS["project"]
    simulation = RewriteSimulationSettings.model_validate(
        {
            "skill": skill,
            "free_sigma": params.fill.simulation.free_sigma,
            "bias": params.fill.simulation.bias,
            **world.simulation,
        }
    )  # the preset sets eta and sigma
    settings = params.fill.model_copy(
        update={
            "seed": seed,
            "insertions": 3,
            "targets": "largest",
            "simulation": simulation,
            "world": params.fill.world.model_copy(update=world.world),
            "judge": None,
            "baseline": True,
            "oracle": True,
        }
    )
    measuring = params.calibrate.model_copy(update={"backend": "simulate", "seed": seed})
    items = pl.read_parquet(REPO / items_path(name))
    difficulty = pl.read_parquet(REPO / difficulty_path(name))
    cal_file = calibration_path(name)
    calibration = Calibration.load(REPO / cal_file)
    setup = PanelSetup(
        benchmark=name,
        settings=measuring,
        backend="simulate",
        llm=params.llm,
        collect=params.collect,
        grading=params.benchmarks[name].grading,
        calibration=calibration,
        calibration_file=cal_file,
        panel=select_panel(measuring, calibration, None, backend="simulate", benchmark=name),
    )
    with tempfile.TemporaryDirectory(prefix="bench-fill-") as tmp:

        async def main() -> FillResult:
            with CompletionCache(Path(tmp) / "cache.sqlite") as cache:
                return await afill(
                    benchmark=name,
                    items=items,
                    difficulty=difficulty,
                    setup=setup,
                    settings=settings,
                    cache=cache,
                    workdir=Path(tmp) / "fill",
                    direct_panel=True,
                )

        return asyncio.run(main())


def run_one(
    name: str, params: ParamsFile, *, skill: str, seed: int, world: World | None = None
) -> dict[str, Any]:
    """One offline fill run's metrics."""
    return run_result(name, params, skill=skill, seed=seed, world=world).metrics


def _share(x: float | None, oracle: float | None) -> float:
    """x / oracle; a missing x is no reduction (0), a zero oracle is an error."""
    if not oracle:
        raise ValueError("the oracle reduced nothing: no share can be computed")
    return (x or 0.0) / oracle


def _ci(xs: list[float]) -> tuple[float, float, float]:
    a = np.asarray(xs, dtype=float)
    lo, hi = np.quantile(a, [0.05, 0.95])
    return float(a.mean()), float(lo), float(hi)


def _fmt(xs: list[float]) -> str:
    m, lo, hi = _ci(xs)
    return f"{m:4.2f} [{lo:4.2f},{hi:4.2f}]"


@dataclass
class Cell:
    """One (benchmark, world, skill) over the seeds."""

    est: list[float] = field(default_factory=list)
    post: list[float] = field(default_factory=list)
    true: list[float] = field(default_factory=list)
    base: list[float] = field(default_factory=list)
    reduction_true: list[float] = field(default_factory=list)
    covered: list[bool] = field(default_factory=list)
    items_covered: list[bool] = field(default_factory=list)
    tdev: list[float] = field(default_factory=list)
    trials: list[float] = field(default_factory=list)
    wins: int = 0

    def add(self, metrics: dict[str, Any]) -> None:
        ms = metrics["methods"]
        bf, bl, orc = ms["benchfill"], ms["baseline"], ms["oracle"]
        t_bf, t_or = bf["true_top_3_reduction_pct"], orc["true_top_3_reduction_pct"]
        self.est.append(_share(bf["top_3_reduction_pct"], orc["top_3_reduction_pct"]))
        self.true.append(_share(t_bf, t_or))
        self.base.append(_share(bl["true_top_3_reduction_pct"], t_or))
        self.reduction_true.append(t_bf or 0.0)
        interval = bf.get("top_3_reduction") or {}
        if interval.get("estimate") is not None:
            self.post.append(_share(interval["estimate"], t_or))
            self.covered.append(interval["low"] <= (t_bf or 0.0) <= interval["high"])
        for row in bf["inserted"]:
            if row.get("true_z") is not None and row.get("z_low") is not None:
                self.items_covered.append(row["z_low"] <= row["true_z"] <= row["z_high"])
        self.wins += (t_bf or 0.0) > (bl["true_top_3_reduction_pct"] or 0.0)
        self.tdev.append(bf["true_target_dev"] or 0.0)
        self.trials.append(bf["trials_per_insertion"] or 0.0)


def _rate(xs: list[bool]) -> str:
    return f"{np.mean(xs):4.2f}" if xs else "  - "


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--benchmark", action="append", help="default: gsm8k, math-l5, crux")
    ap.add_argument("--world", action="append", choices=list(WORLDS), help="default: all")
    ap.add_argument("--skill", action="append", choices=list(SKILLS), help="default: per world")
    ap.add_argument("--seeds", type=int, default=None, help="default 10 (--quick: 3)")
    ap.add_argument("--quick", action="store_true", help="3 seeds, math-l5, project world")
    ap.add_argument("--out", type=Path, help="also write the printed table to this file")
    args = ap.parse_args(argv)
    params = read_params(REPO / "params.yaml")
    base_seed = params.fill.seed
    seeds = args.seeds or (3 if args.quick else 10)
    names = args.benchmark or (["math-l5"] if args.quick else list(BENCHMARKS))
    worlds = args.world or (["project"] if args.quick else list(WORLDS))
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    head = (
        f"{'benchmark':9} {'world':7} {'skill':5} {'est/or (90%)':>17} {'post/or (90%)':>17} "
        f"{'true/or (90%)':>17} {'base/or (90%)':>17} {'cover':>5} {'item cov':>8} "
        f"{'true dev':>8} {'wins':>5} {'trials/item':>11}"
    )
    say(
        f"{seeds} seeds per cell (fill.seed {base_seed} + 0..{seeds - 1}); est = estimated z, "
        "true = the simulated world's true z"
    )
    for key in worlds:
        say(f"  {key:7} {WORLDS[key].label}")
    say(head)
    say("-" * len(head))
    t_all = time.perf_counter()
    verdicts: list[str] = []
    cells: dict[tuple[str, str, str], Cell] = {}
    for name in names:
        for key in worlds:
            world = WORLDS[key]
            for skill in args.skill or world.skills:
                cell = cells[name, key, skill] = Cell()
                for k in range(seeds):
                    cell.add(run_one(name, params, skill=skill, seed=base_seed + k, world=world))
                say(
                    f"{name:9} {key:7} {skill:5} {_fmt(cell.est):>17} "
                    f"{_fmt(cell.post) if cell.post else '-':>17} {_fmt(cell.true):>17} "
                    f"{_fmt(cell.base):>17} {_rate(cell.covered):>5} "
                    f"{_rate(cell.items_covered):>8} {np.mean(cell.tdev):8.4f} "
                    f"{cell.wins:2d}/{seeds:<2d} {np.mean(cell.trials):11,.0f}"
                )
                if skill == "good":
                    t_m = float(np.mean(cell.true))
                    ok = t_m >= 0.8 and cell.wins >= int(np.ceil(0.9 * seeds))
                    verdicts.append(
                        f"{name} {key}: true/oracle {t_m:.2f} (bar >= 0.80), beats the baseline "
                        f"on {cell.wins}/{seeds} seeds (bar >= 90%): {'PASS' if ok else 'FAIL'}"
                    )
    say()
    for v in verdicts:
        say(v)
    covered = [c for cell in cells.values() for c in cell.covered]
    items = [c for cell in cells.values() for c in cell.items_covered]
    if covered:
        rate = float(np.mean(covered))
        say(
            f"reduction 90% intervals cover the true reduction in {sum(covered)}/{len(covered)} "
            f"runs = {rate:.2f} (bar >= 0.85): {'PASS' if rate >= 0.85 else 'FAIL'}; "
            f"per-item 90% intervals cover the true z in {np.mean(items):.2f} of "
            f"{len(items)} insertions"
        )
    for name in names:
        good, none = cells.get((name, "project", "good")), cells.get((name, "project", "none"))
        if good is None or none is None:
            continue
        diff = np.asarray(good.true) - np.asarray(none.true)
        wins = int(np.sum(np.asarray(good.reduction_true) > np.asarray(none.reduction_true)))
        se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")
        lo, hi = diff.mean() - 1.645 * se, diff.mean() + 1.645 * se
        verdict = (
            "the rewriter's skill matters"
            if lo > 0
            else "no clear difference: the search's selection does the work"
        )
        say(
            f"{name} skill contrast (project world): good - none = {diff.mean():+.2f} of the "
            f"oracle [{lo:+.2f}, {hi:+.2f}] (90%, paired over seeds), good ahead on "
            f"{wins}/{diff.size} seeds: {verdict}"
        )
    say(f"\n{time.perf_counter() - t_all:.0f} s")
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
