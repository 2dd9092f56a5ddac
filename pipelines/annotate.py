"""Stage `annotate`: IRT difficulty of every item, with its calibration and diagnostics.

Writes data/difficulty/<b>.parquet (schema `difficulty`), data/difficulty/<b>.draws.npz
(draws of b: the NUTS posterior, or Laplace draws from the MAP fit, labelled as such),
data/calibration/<b>.json, metrics/irt/<b>.json and two figures.

The model (``annotate.model: auto``) is chosen per benchmark among 1PL, 2PL and, when
some item can be guessed, 3PL, by held-out likelihood with BIC beside it; a degenerate
fit is set aside (:func:`curation.irt.choose_model`). The item records
(data/items/<b>.parquet) give each item's guessing floor: 1/options for a listed
multiple-choice item, 0 for a free-response one, unknown for a matrix-only id.
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from curation.errors import InputError
from curation.io.atomic import non_finite_paths, write_json
from curation.io.npz import write_npz
from curation.io.tables import read_table, scan_table, write_table
from curation.irt import Cells, choose_model, encode, fit, floors_of_items, loo_stability
from curation.params_model import ParamsFile
from curation.paths import (
    calibration_path,
    difficulty_path,
    draws_path,
    irt_metrics_path,
    irt_plot_path,
    items_path,
    responses_path,
)
from curation.plots.irt import plot_difficulty_vs_ability, plot_item_curves
from curation.schemas import conform, validate_records
from curation.stage_main import stage_main


def _require_fittable(cells: Cells, *, file: str) -> None:
    """Refuse, before any output is written, a matrix no difficulty can be measured on."""
    if cells.n_models < 2:
        models = sorted(cells.models)
        raise InputError(
            f"difficulty needs responses from at least 2 models; got {len(models)} {models}",
            file=file,
        )
    if cells.n_items < 2:
        raise InputError(
            f"cannot fit difficulty: it needs at least 2 items (z is placed against other "
            f"items); got {cells.n_items}",
            file=file,
        )
    correct = int(cells.k.sum(dtype=np.int64))
    trials = int(cells.n.sum(dtype=np.int64))
    if correct in (0, trials):
        what = "wrong" if correct == 0 else "correct"
        raise InputError(
            f"every one of the {trials} responses is {what}: no difficulty can be measured",
            file=file,
        )


def _encoded(file: Path, benchmark: str, params_file: str) -> Cells:
    """The responses as cells: the table streamed from its file, ids coded as they stream
    (a leaderboard-sized matrix never exists as per-row strings); encoded once, for the
    BIC comparison, the fit and leave-one-model-out alike."""
    lf = scan_table(file, produced_by=f"responses@{benchmark}")
    try:
        return encode(lf, name=str(file))
    except pl.exceptions.PolarsError as exc:
        raise InputError(
            f"not a readable parquet table ({str(exc).strip().splitlines()[0]}); "
            f"run `dvc repro -f responses@{benchmark}`",
            file=str(file),
        ) from None
    except (ValueError, TypeError) as exc:
        raise InputError(
            f"cannot fit difficulty: {exc} (fit settings: {params_file}: annotate)",
            file=str(file),
        ) from None


def _draws(result: Any, *, n: int, seed: int) -> tuple[np.ndarray, str]:
    if result.draws_b is not None:
        return np.asarray(result.draws_b), "posterior"
    rng = np.random.default_rng(seed)
    b = result.items["b"].to_numpy()
    se = result.items["se"].to_numpy()
    return b + se * rng.standard_normal((n, b.size)), "laplace"


def _candidates(floor: np.ndarray) -> tuple[list[str], dict[str, str]]:
    """The models ``auto`` weighs, and those it leaves out with why."""
    if np.all(floor == 0.0):
        return ["1pl", "2pl"], {
            "3pl": "no item can be guessed (every item is free-response): 3PL is 2PL here"
        }
    return ["1pl", "2pl", "3pl"], {}


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `annotate` for one benchmark on the validated params: the line stage_main prints."""
    cfg = params.annotate
    responses_file = responses_path(benchmark)
    responses = _encoded(responses_file, benchmark, params_file)
    _require_fittable(responses, file=str(responses_file))
    items = read_table(items_path(benchmark), produced_by=f"ingest@{benchmark}")
    n_models = responses.n_models
    loo_note = None
    run_loo = cfg.loo
    if run_loo and n_models < 3:
        # dropping one of 2 models leaves a 1-model matrix no scale can be fitted on
        loo_note = (
            f"leave-one-model-out skipped: it needs at least 3 models, the panel has {n_models}"
        )
        run_loo = False
    started = time.perf_counter()
    try:
        cells = encode(responses)
        floor = floors_of_items(items, cells.items)
        candidates, skipped = _candidates(floor)
        if cfg.model != "auto" and cfg.model not in candidates:
            candidates.append(cfg.model)
        choice = choose_model(
            cells,
            candidates=candidates,
            settings=cfg.settings,
            choice=cfg.choice,
            floor=floor,
            seed=cfg.seed,
        )
        model = choice.chosen if cfg.model == "auto" else cfg.model
        result = fit(
            responses,
            model=model,
            method=cfg.method,
            seed=cfg.seed,
            scale=cfg.scale,
            benchmark=benchmark,
            settings=cfg.settings,
            floor=dict(zip(cells.items, floor.tolist(), strict=True)) if model == "3pl" else None,
            fitted=choice.fits.get(model),  # the choice's full-data mode: not solved twice
        )
        fit_seconds = time.perf_counter() - started
        loo = (
            loo_stability(
                responses,
                model=model,
                seed=cfg.seed,
                scale=cfg.scale,
                exact_max_models=cfg.loo_exact_max_models,
                exact_top=cfg.loo_exact_top,
                settings=cfg.settings,
                floor=floor if model == "3pl" else None,
                full=result,
                exact_max_cells=cfg.loo_exact_max_cells,
                approx_max_work=cfg.loo_approx_max_work,
            )
            if run_loo
            else None
        )
    except (ValueError, TypeError) as exc:
        # the fit refuses data (or `annotate.settings`) it cannot identify a scale from
        raise InputError(
            f"cannot fit difficulty: {exc} (fit settings: {params_file}: annotate)",
            file=str(responses_file),
        ) from None
    # everything below (tables, draws, figures, calibration) from the fit as written: the
    # same numbers on every machine (curation.io.precision)
    result = result.as_written()
    diag = result.diagnostics
    cal_file = calibration_path(benchmark)
    table = result.items.with_columns(
        pl.lit(benchmark).alias("benchmark"),
        pl.lit(model).alias("model_type"),
        pl.lit(diag["method"]).alias("method"),
        pl.lit(diag["interval_source"]).alias("interval_source"),
        pl.lit(str(cal_file)).alias("calibration"),
    )
    table = conform(table, "difficulty")
    draws, draws_source = _draws(result, n=cfg.laplace_draws, seed=cfg.seed)

    bics = {c.model: c.bic for c in choice.candidates}
    problems = choice.candidate(model).problems
    choice_record = choice.to_metrics()
    choice_record["skipped"] = skipped
    metrics: dict[str, Any] = {
        "benchmark": benchmark,
        "model": model,
        "model_choice": "heldout" if cfg.model == "auto" else "params",
        "method": diag["method"],
        "requested_method": cfg.method,
        "interval_source": diag["interval_source"],
        "draws_source": draws_source,
        "identification": diag["identification"],
        "scale": cfg.scale,
        "n_models": diag["n_models"],
        "n_items": diag["n_items"],
        "n_all_solved": diag["n_all_solved"],
        "n_none_solved": diag["n_none_solved"],
        "converged": bool(diag["converged"]),
        "bic_1pl": bics["1pl"],
        "bic_2pl": bics["2pl"],
        "bic_3pl": bics.get("3pl"),
        "bic_choice": choice.bic_choice,
        "choice": choice_record,
        "shared_floor": diag.get("shared_floor"),
        "fallback_reason": diag.get("fallback_reason"),
        "nuts": None,
        "loo": None,
    }
    if diag["method"] == "nuts":
        metrics["nuts"] = {
            k: diag[k] for k in ("max_rhat", "min_ess_bulk", "min_ess_tail", "divergences")
        }
    if loo is not None:
        metrics["loo"] = {k: round(v, 6) for k, v in loo["overall"].items()}
        worst = max(loo["per_model"], key=lambda r: r["max_abs_dz"])
        metrics["loo"]["most_influential_model"] = worst["dropped"]
        if loo["mode"] != "exact":  # exact mode: the figures (and bytes) as before
            metrics["loo"]["mode"] = loo["mode"]
            metrics["loo"]["n_exact"] = loo["n_exact"]
            metrics["loo"]["approx_tol"] = loo["approx_tol"]
            err = loo["approx_error"]
            metrics["loo"]["approx_error"] = None if err is None else round(err, 6)
            for key in ("sampled", "n_dropped"):
                if key in loo:
                    metrics["loo"][key] = loo[key]
    validate_records([metrics], "irt_metrics", file=str(irt_metrics_path(benchmark)))
    try:  # every output is checked before the first is written: none or all of them
        json.dumps(metrics, allow_nan=False)
    except ValueError:
        bad = sorted(non_finite_paths(metrics))
        raise InputError(
            f"the fit produced non-finite figures {bad}; the matrix cannot be measured",
            file=str(responses_file),
        ) from None

    fmt = params.plots.format
    plot_item_curves(result, irt_plot_path(benchmark, "icc"), formats=fmt)
    plot_difficulty_vs_ability(result, irt_plot_path(benchmark, "wright"), formats=fmt)
    write_table(table, difficulty_path(benchmark), "difficulty")
    write_npz(
        draws_path(benchmark),
        items=np.array(table["item"].to_list()),
        b=draws,
        z=result.calibration.to_z(draws),
        source=np.array(draws_source),
    )
    result.calibration.save(cal_file)
    write_json(irt_metrics_path(benchmark), metrics)

    z = table["z"].to_numpy()
    text = (
        f"{benchmark}: {model.upper()} {diag['method'].upper()} ({metrics['model_choice']}) "
        f"on {diag['n_models']} models x {diag['n_items']} items in {fit_seconds:.1f}s; "
        f"z median {np.median(z):.3f}, {diag['n_all_solved']} all-solved, "
        f"{diag['n_none_solved']} none-solved"
    )
    if metrics["loo"]:
        loo_mode = (
            "exact refits"
            if "mode" not in metrics["loo"]
            else f"approximate, {metrics['loo']['n_exact']} exact refits"
        )
        text += (
            f"; leave-one-model-out max |dz| {metrics['loo']['max_abs_dz']:.3f} "
            f"({metrics['loo']['most_influential_model']}; {loo_mode})"
        )
    text += f"\n  model: {choice.reason}" if cfg.model == "auto" else ""
    if cfg.model != "auto" and problems:
        text += (
            f"\n  note: annotate.model: {model} looks degenerate ({'; '.join(problems)}); "
            f"auto would choose {choice.chosen.upper()}"
        )
    if diag.get("fallback_reason"):
        text += f"\n  note: {diag['fallback_reason']}"
    if loo_note:
        text += f"\n  note: {loo_note}"
    return text


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.annotate``): validate params once, run, exit 0/2/3."""
    return stage_main("annotate", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
