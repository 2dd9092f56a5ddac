"""Subsets as full-score estimators on held-out models: every design and estimator beside
random subsets of the same size (issue 28).

    nice python benchmarks/bench_subsets.py [--project DIR] [-b gsm8k ...] [--sizes 25 50 100 200]
                      [--folds 5] [--random-draws 20] [--draws 2000] [--seed 0] [--repeats 5]

For every benchmark (default: every one in the project's params.yaml with a response
matrix in data/responses/; the project folder defaults to this checkout) and size m:
leave-models-out cross-validation (``curation.estimate.validate``): K folds over the
panel's models; each fold calibrates the benchmark on the other models (the benchmark's
IRT model from data/calibration/<b>.json, its annotate settings and scale), selects m
items from that calibration, then estimates each held-out model's full-benchmark score
(its mean success rate over every item) from its responses on the m items alone.

Designs: ``quantile`` (the project's calibrated subsets: uniform quantile match of z),
``anchor`` (cluster medoids, weighted), ``stratified`` (on b, weighted), ``information``
(greedy Fisher information), ``adaptive`` (an adaptive test: 20 stratified start items,
then blocks of 10 chosen for each held-out model from its answers so far, as ``curate
estimate --next`` does); ``random`` is the median over ``--random-draws`` random
subsets per fold. Estimators: ``irt`` (observed + IRT prediction of the unseen items, the
project's), ``raw`` (plain subset accuracy), ``weighted`` (the design's weights). Per row:
mean / 90th-percentile / max absolute error (pp, pooled over held-out models), Spearman ρ
and Kendall τ against the true full scores (pooled), coverage of the 90% intervals, the
random subsets' mean error with the same estimator (``raw`` for ``weighted``), the
Bernoulli floor (mean over held-out models of sqrt(Σ_unseen p(1-p))/N), the ideal MAE
(the same design and estimator when the held-out models' responses are redrawn from the
fold's own bank at their abilities, ``ideal_folds``: the IRT model is the truth and the
calibration exact, so what is left is the subset's own sampling noise, the error no
estimator of the IRT family beats with that subset) and seconds per fold (calibration +
selection + estimation).

Intervals are the ones a user gets: the IRT posterior's, widened by the cross-conformal
scale of the other folds' held-out models.

The verdict per benchmark at m = 100 (or the largest size; issue 28's "done when"): the
recommended estimation subset (as the subsets stage recommends: of the fixed design,
``subsets.estimation.design``' default stratified, and the adaptive test, the one with the
lower held-out MAE) with ``irt``: MAE ≤ max(2.0 pp,
1.25 × floor), beating random-m ``irt`` (median over draws, pooled folds), ρ ≥ 0.95,
coverage in [0.85, 0.95]; then the ideal MAE of the design and of random items, and the
smallest size tried that meets the error bar.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from benchmarks._table import print_table  # noqa: E402
from curation.estimate import (  # noqa: E402
    EstimationSettings,
    Fold,
    Metrics,
    Validation,
    ideal_folds,
    make_folds,
    random_baseline,
    validate,
)
from curation.params_model import read_params  # noqa: E402

DESIGNS = ("quantile", "anchor", "stratified", "information", "adaptive")


def _fmt(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def _row(b: str, m: int, design: str, est: str, mine: Metrics, rand: Metrics | None,
         floor: float, secs: float, ideal: Metrics | None = None) -> list[str]:  # fmt: skip
    return [
        b, str(m), design, est,
        _fmt(mine.mae_pp), _fmt(mine.p90_ae_pp), _fmt(mine.max_ae_pp),
        _fmt(mine.spearman, 3), _fmt(mine.kendall, 3), _fmt(mine.coverage),
        _fmt(rand.mae_pp) if rand is not None else "-",
        ("yes" if mine.mae_pp < rand.mae_pp else "no") if rand is not None else "-",
        _fmt(floor), _fmt(ideal.mae_pp) if ideal is not None else "-", _fmt(secs, 3),
    ]  # fmt: skip


HEADER = [
    "benchmark", "m", "design", "estimator", "MAE pp", "p90 pp", "max pp", "rho", "tau",
    "cover90", "random MAE", "beats", "floor pp", "ideal MAE", "s/fold",
]  # fmt: skip


def _panel(project: Path, name: str) -> tuple[pl.DataFrame, str]:
    """The benchmark's response matrix and the IRT model its calibration chose."""
    responses = pl.read_parquet(project / "data" / "responses" / f"{name}.parquet")
    irt_model = json.loads((project / "data" / "calibration" / f"{name}.json").read_text())["model"]
    return responses, irt_model


def _folds(
    responses: pl.DataFrame, irt_model: str, name: str, params_file: Path,
    args: argparse.Namespace, seed: int,
) -> tuple[EstimationSettings, list[Fold]]:  # fmt: skip
    """The settings at ``seed`` and the folds, calibrated with the benchmark's annotate
    settings and scale."""
    cfg = read_params(params_file).annotate
    s = EstimationSettings(
        folds=args.folds, random_draws=args.random_draws, draws=args.draws, seed=seed
    )
    folds = make_folds(
        responses, model=irt_model, folds=s.folds, seed=s.seed, fit_settings=cfg.settings,
        benchmark=name, scale=cfg.scale,
    )  # fmt: skip
    return s, folds


def _verdict_size(sizes: list[int]) -> int:
    """The size the issue's bar is stated at: m = 100, else the largest size run."""
    return 100 if 100 in sizes else max(sizes)


def bench(project: Path, name: str, params_file: Path, args: argparse.Namespace) -> dict:
    responses, irt_model = _panel(project, name)
    s, folds = _folds(responses, irt_model, name, params_file, args, args.seed)
    ideal = ideal_folds(folds, seed=s.seed)
    n_models = responses["model"].n_unique()
    n_items = len(folds[0].bank.items)
    print(
        f"\n{name}: {n_models} models x {n_items} items ({irt_model.upper()}), {len(folds)} "
        f"folds of ~{n_models // len(folds)} held-out models, random baseline = median of "
        f"{s.random_draws} draws",
        flush=True,
    )
    rows: list[list[str]] = []
    out: dict = {"models": n_models, "items": n_items, "irt_model": irt_model, "sizes": {}}
    for m in args.sizes:
        if m > n_items:
            continue
        started = time.perf_counter()
        base = random_baseline(folds, m, s)
        rand_secs = (time.perf_counter() - started) / (s.random_draws * len(folds))
        got: dict[str, Validation] = {}
        for design in DESIGNS:
            got[design] = validate(
                responses, m, design=design, settings=s, folds=folds, baseline=base,
                benchmark=name,
            )  # fmt: skip
        # the same designs in the exact-IRT world (ideal_folds): the subset's own noise
        ideal_base = random_baseline(ideal, m, s)
        in_ideal = {
            design: validate(
                responses, m, design=design, settings=s, folds=ideal, baseline=ideal_base,
                benchmark=name,
            ).estimators
            for design in DESIGNS
        }  # fmt: skip
        floor = got["anchor"].floor_pp
        for est, metrics in base.items():
            rows.append(_row(name, m, "random", est, metrics, None, floor, rand_secs,
                             ideal_base.get(est)))  # fmt: skip
        for design, v in got.items():
            for est, metrics in v.estimators.items():
                rand = v.random.get(est if est != "weighted" else "raw")
                rows.append(_row(name, m, design, est, metrics, rand, v.floor_pp,
                                 v.seconds_per_fold, in_ideal[design].get(est)))  # fmt: skip
        out["sizes"][m] = {"random": base, **got}
        out.setdefault("ideal", {})[m] = {"random": ideal_base["irt"]} | {
            d: e["irt"] for d, e in in_ideal.items()
        }
    print_table(f"{name}: held-out models' full-score estimates", HEADER, rows)
    return out


def repeats(project: Path, name: str, params_file: Path, args: argparse.Namespace) -> None:
    """The same comparison at the verdict's size over ``--repeats`` fold splits and design
    seeds: one seed's table is one draw of the folds and of each design, and on panels of
    ~40 models designs differ from random by less than that draw's noise."""
    responses, irt_model = _panel(project, name)
    m = _verdict_size(args.sizes)
    got: dict[str, list[tuple[Metrics, Metrics]]] = {}
    for rep in range(args.repeats):
        s, folds = _folds(responses, irt_model, name, params_file, args, args.seed + rep)
        base = random_baseline(folds, m, s)
        got.setdefault("random", []).append((base["irt"], base["irt"]))
        for design in DESIGNS:
            v = validate(responses, m, design=design, settings=s, folds=folds, baseline=base,
                         benchmark=name)  # fmt: skip
            got.setdefault(design, []).append((v.estimators["irt"], base["irt"]))
    fixed = EstimationSettings().design
    got["recommended"] = [
        min((f, a), key=lambda p: p[0].mae_pp)
        for f, a in zip(got[fixed], got["adaptive"], strict=True)
    ]
    rows = []
    for design, pairs in got.items():
        mae = [a.mae_pp for a, _ in pairs]
        wins = f"{sum(a.mae_pp < r.mae_pp for a, r in pairs)}/{len(pairs)}"
        rows.append([
            name, str(m), design, _fmt(float(np.mean(mae))), _fmt(float(np.std(mae))),
            _fmt(float(np.mean([r.mae_pp for _, r in pairs]))),
            "-" if design == "random" else wins,
            _fmt(float(np.mean([a.coverage for a, _ in pairs]))),
            _fmt(float(np.mean([a.spearman or 0.0 for a, _ in pairs])), 3),
        ])  # fmt: skip
    print_table(
        f"{name}: irt estimator at m={m} over {args.repeats} fold splits and design seeds "
        f"(seeds {args.seed}..{args.seed + args.repeats - 1}; random = median of "
        f"{args.random_draws} draws per split)",
        ["benchmark", "m", "design", "mean MAE", "sd MAE", "random MAE", "beats random",
         "cover90", "rho"],
        rows,
    )  # fmt: skip


def recommended(result: dict, fixed: str) -> str:
    """The design the subsets stage would recommend at the verdict's size: the fixed
    design or the adaptive test, whichever estimated the held-out models better."""
    m = _verdict_size(list(result["sizes"]))
    return min((fixed, "adaptive"), key=lambda d: result["sizes"][m][d].estimators["irt"].mae_pp)


def verdict(name: str, result: dict, design: str) -> tuple[str, bool]:
    m = _verdict_size(list(result["sizes"]))
    v: Validation = result["sizes"][m][design]
    irt = v.estimators["irt"]
    rand = v.random["irt"]
    bar = max(2.0, 1.25 * v.floor_pp)
    checks = {
        f"MAE {irt.mae_pp:.2f} <= {bar:.2f} pp": irt.mae_pp <= bar,
        f"beats random-{m} irt ({rand.mae_pp:.2f})": irt.mae_pp < rand.mae_pp,
        f"rho {_fmt(irt.spearman, 3)} >= 0.95": (irt.spearman or 0.0) >= 0.95,
        f"coverage {irt.coverage:.2f} in [0.85, 0.95]": 0.85 <= irt.coverage <= 0.95,
    }
    text = ", ".join(f"{k}: {'ok' if ok else 'NO'}" for k, ok in checks.items())
    ideal = result["ideal"][m]
    text += (
        f"; in the exact-IRT world this design reaches {ideal[design].mae_pp:.2f} pp, random-{m} "
        f"{ideal['random'].mae_pp:.2f} pp"
    )
    meets = [k for k in sorted(result["sizes"]) if
             result["sizes"][k][design].estimators["irt"].mae_pp <= bar]  # fmt: skip
    text += f"; smallest size within {bar:.2f} pp: {meets[0] if meets else 'none tried'}"
    return (
        f"{name} m={m} {design}/irt (floor {v.floor_pp:.2f} pp): {text}",
        irt.mae_pp < rand.mae_pp,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--project", type=Path, default=REPO, help="project folder (built data/)")
    ap.add_argument("--benchmark", "-b", action="append", help="default: every one with data")
    ap.add_argument("--sizes", type=int, nargs="+", default=[25, 50, 100, 200])
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--random-draws", type=int, default=20)
    ap.add_argument("--draws", type=int, default=2000, help="Monte Carlo draws per estimate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--repeats", type=int, default=0,
        help="also repeat the m=100 comparison over this many fold splits and design seeds",
    )  # fmt: skip
    args = ap.parse_args()
    project = args.project.resolve()
    params_file = project / "params.yaml"
    names = args.benchmark or [
        b
        for b in read_params(params_file).benchmarks
        if (project / "data" / "responses" / f"{b}.parquet").is_file()
    ]
    if not names:
        print(f"no data/responses/<b>.parquet under {project}: run `dvc repro` or pass --project")
        return 2
    fixed = EstimationSettings().design
    started = time.perf_counter()
    results = {b: bench(project, b, params_file, args) for b in names}
    lines = [verdict(b, r, recommended(r, fixed)) for b, r in results.items()]
    print(
        f"\nverdict (the recommended estimation subset: '{fixed}' or 'adaptive', whichever "
        "did better; project estimator irt):"
    )
    for text, _ in lines:
        print(f"  {text}")
    wins = sum(beat for _, beat in lines)
    print(f"  beats random on {wins}/{len(lines)} benchmarks (bar: >= 2 of 3)")
    for b in names if args.repeats > 1 else []:
        repeats(project, b, params_file, args)
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
