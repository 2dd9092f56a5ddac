"""Subsets as full-score estimators (issue 28): the ``estimate-<m>`` subsets and the
leave-models-out validation of every published subset.

* :func:`estimation_subsets` — on the benchmark's stored calibration, the design of
  ``subsets.estimation`` (:func:`curation.estimate.select`) at each size: the items and
  the weights that rebuild the full score (:func:`estimation_frame`: the
  ``estimation_subset_item`` records of ``data/subsets/<b>/estimate-<m>.parquet``).
* :func:`validate_subsets` — K folds over the panel's models (calibrate on the rest,
  select the subset from that calibration, estimate the held-out models' full scores from
  their responses on it alone; :func:`curation.estimate.validate`): the project's
  estimator (irt) beside random subsets of the same size (median over draws). A
  quantile-matched subset is validated as design ``quantile`` with its target, so each
  fold re-matches it on the fold's own calibration (the held-out models never choose the
  items they are scored on); an estimation subset as its design.
  :func:`estimation_block` is the figures the metrics, the report and the card show.

Only the response matrix and the calibration are read: matrix-only benchmarks (no item
texts) get the same subsets and figures.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import polars as pl

from curation.subsets._settings import (
    ADAPTIVE_PREFIX,
    CALIBRATED_PREFIX,
    ESTIMATE_PREFIX,
    SubsetEstimationSettings,
)

if TYPE_CHECKING:
    from curation.estimate import Design, DesignName, ItemBank, Metrics, Validation
    from curation.irt import FitSettings
    from curation.measure import TargetLike

ESTIMATOR: Final = "irt"
"""The project's estimator: observed successes + the IRT prediction of the unseen items."""


def estimation_name(m: int) -> str:
    """The subset (file and HF config) name of the estimation subset of size m."""
    return f"{ESTIMATE_PREFIX}-{m}"


def adaptive_name(m: int) -> str:
    """The subset (file and HF config) name of the adaptive test of m items."""
    return f"{ADAPTIVE_PREFIX}-{m}"


def calibrated_config(name: str) -> str:
    """The HF config of the quantile-matched subset ``name`` (``<target>-<m>``)."""
    return f"{CALIBRATED_PREFIX}{name}"


@dataclass(frozen=True)
class SubsetSpec:
    """A published subset, as the validation re-selects it in each fold."""

    name: str
    design: DesignName
    m: int
    target: TargetLike = "uniform"
    """What a ``quantile`` subset matches."""


def estimation_subsets(
    bank: ItemBank, responses: pl.DataFrame, settings: SubsetEstimationSettings
) -> tuple[dict[str, Design], dict[str, str]]:
    """(name -> design, name -> why skipped) for every size of ``settings``: the fixed
    ``estimate-<m>`` and, with ``settings.adaptive``, the adaptive test ``adaptive-<m>``
    (its start items). A size at or above the bank's items is skipped (the full
    benchmark needs no estimate)."""
    from curation.estimate import select

    made: dict[str, Design] = {}
    skipped: dict[str, str] = {}
    for m in settings.sizes_list():
        names = [(estimation_name(m), settings.design)]
        if settings.adaptive:
            names.append((adaptive_name(m), "adaptive"))
        for name, design in names:
            if m >= bank.n_items:
                skipped[name] = (
                    f"m={m} is not below the {bank.n_items} calibrated items (the full "
                    "benchmark is its own score)"
                )
                continue
            made[name] = select(
                design,
                bank,
                m,
                seed=settings.seed,
                responses=responses,
                embedding=settings.embedding,
                strata=settings.strata,
                start=settings.adaptive_start,
                block=settings.adaptive_block,
            )
    return made, skipped


def estimation_frame(
    design: Design,
    bank: ItemBank,
    *,
    benchmark: str,
    name: str,
    z: Mapping[str, float],
    interval_scale: float | None = None,
) -> pl.DataFrame:
    """Rows of the ``estimation_subset_item`` record type (validated): the subset's items
    (an adaptive test's start items), its size, step and the conformal interval scale
    its validation measured (``curate estimate --subset`` applies it)."""
    from curation.schemas import conform, validate_frame

    m = design.m
    weights = design.weights if design.weights is not None else (1.0 / m,) * m
    index = bank.index()
    frame = pl.DataFrame(
        {
            "benchmark": [benchmark] * m,
            "subset": [name] * m,
            "design": [design.design] * m,
            "m": [design.total] * m,
            "block": [design.block] * m,
            "interval_scale": [interval_scale] * m,
            "k": list(range(1, m + 1)),
            "item": list(design.items),
            "b": [float(bank.b[index[i]]) for i in design.items],
            "z": [z.get(i) for i in design.items],
            "weight": [float(w) for w in weights],
        },
        schema_overrides={"z": pl.Float64, "block": pl.Int64, "interval_scale": pl.Float64},
    )
    frame = conform(frame, "estimation_subset_item")
    validate_frame(frame, "estimation_subset_item", file=f"{benchmark} subset {name}")
    return frame


def _figures(m: Metrics) -> dict[str, Any]:
    return {
        "mae_pp": m.mae_pp,
        "p90_ae_pp": m.p90_ae_pp,
        "max_ae_pp": m.max_ae_pp,
        "rmse_pp": m.rmse_pp,
        "spearman": m.spearman,
        "kendall": m.kendall,
        "coverage": m.coverage,
        "model_coverage": m.model_coverage,
        "interval_scale": m.interval_scale,
    }


def estimation_block(v: Validation) -> dict[str, Any]:
    """The figures of one subset's validation (metrics/subsets/<b>.json ``estimation``):
    the irt estimator's, the plain subset accuracy's (``subset_accuracy``), the weighted
    accuracy's when the design has weights, and random subsets' of the same size."""
    irt = v.estimators[ESTIMATOR]
    weighted = v.estimators.get("weighted")
    return {
        "design": v.design,
        "estimator": ESTIMATOR,
        "m": v.m,
        "folds": v.folds,
        "n_models": v.n_models,
        "level": v.level,
        **_figures(irt),
        "subset_accuracy": _figures(v.estimators["raw"]),
        "weighted": None if weighted is None else _figures(weighted),
        "random": {**_figures(v.random[ESTIMATOR]), "draws": v.random_draws},
        "beats_random": bool(v.beats_random(ESTIMATOR)),
        "floor_pp": v.floor_pp,
    }  # no timing: the metrics are in git, and rerunning must not change them


def recommend(blocks: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """Size m -> the estimation subset (``estimate-<m>`` or ``adaptive-<m>``) whose
    held-out error was lowest: what the card and ``curate estimate`` point a user to."""
    best: dict[int, tuple[float, str]] = {}
    for name, block in blocks.items():
        if not name.startswith((f"{ESTIMATE_PREFIX}-", f"{ADAPTIVE_PREFIX}-")):
            continue
        if "unavailable" in block or block.get("mae_pp") is None:
            continue
        m, mae = int(block["m"]), float(block["mae_pp"])
        if m not in best or mae < best[m][0]:
            best[m] = (mae, name)
    return {str(m): best[m][1] for m in sorted(best)}


def unavailable(reason: str) -> dict[str, Any]:
    """The ``estimation`` block of a subset that could not be validated."""
    return {"unavailable": reason}


def min_models(settings: SubsetEstimationSettings) -> int:
    """Panel models the validation needs: each fold calibrates on at least 2 models."""
    return settings.folds + 2


def validate_subsets(
    responses: pl.DataFrame,
    specs: Sequence[SubsetSpec],
    settings: SubsetEstimationSettings,
    *,
    irt_model: str,
    fit_settings: FitSettings | None = None,
    scale: str = "panel",
    benchmark: str | None = None,
) -> tuple[dict[str, dict[str, Any]], float]:
    """(subset name -> its ``estimation`` block, seconds taken): one set of folds and one
    random baseline per size, shared by every subset. A panel too small for the folds,
    or a fold that cannot be calibrated or selected from, gives ``{"unavailable": why}``."""
    from curation.estimate import make_folds, random_baseline, validate

    started = time.perf_counter()
    if not specs:
        return {}, 0.0
    n_models = responses["model"].n_unique()
    need = min_models(settings)
    if n_models < need:
        why = (
            f"leave-models-out validation with {settings.folds} folds needs at least {need} "
            f"panel models, the panel has {n_models} (subsets.estimation.folds)"
        )
        return {s.name: unavailable(why) for s in specs}, time.perf_counter() - started
    try:
        folds = make_folds(
            responses,
            model=irt_model,  # type: ignore[arg-type]
            folds=settings.folds,
            seed=settings.seed,
            fit_settings=fit_settings,
            benchmark=benchmark,
            scale=scale,  # type: ignore[arg-type]
            max_test_models=settings.max_test_models,
        )
    except ValueError as exc:
        why = f"the folds could not be calibrated: {exc}"
        return {s.name: unavailable(why) for s in specs}, time.perf_counter() - started
    out: dict[str, dict[str, Any]] = {}
    baselines: dict[int, Mapping[str, Metrics]] = {}
    for spec in specs:
        try:
            if spec.m not in baselines:
                baselines[spec.m] = random_baseline(folds, spec.m, settings)
            v = validate(
                responses,
                spec.m,
                design=spec.design,
                settings=settings,
                folds=folds,
                baseline=baselines[spec.m],
                benchmark=benchmark,
                target=spec.target,
            )
        except ValueError as exc:
            out[spec.name] = unavailable(f"validation failed: {exc}")
            continue
        out[spec.name] = estimation_block(v)
        if v.n_models < n_models:  # a sample of the held-out models (max_test_models)
            out[spec.name]["sampled"] = sampled_block(v, n_models)
    return out, time.perf_counter() - started


def sampled_block(v: Validation, n_models: int) -> dict[str, Any]:
    """What scoring a sample of the held-out models costs in precision: the standard
    error of the irt estimator's mean absolute error (points)."""
    import numpy as np

    ae = np.array([100.0 * abs(r.estimate - r.true) for r in v.rows])
    se = float(ae.std(ddof=1) / np.sqrt(ae.size)) if ae.size > 1 else 0.0
    return {"scored": v.n_models, "of": n_models, "mae_se_pp": se}


def describe(block: Mapping[str, Any]) -> str:
    """One line of a subset's held-out figures (the stage's output and the report)."""
    if "unavailable" in block:
        return f"not validated: {block['unavailable']}"
    r = block["random"]

    def rho(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.3f}"

    verdict = "beats random" if block["beats_random"] else "NOT better than random"
    sampled = block.get("sampled")
    scored = (
        f"{sampled['scored']} of {sampled['of']} models scored, MAE ± {sampled['mae_se_pp']:.2f}"
        if sampled
        else f"{block['n_models']} models"
    )
    return (
        f"held-out {block['estimator']} MAE {block['mae_pp']:.2f} pp "
        f"(p90 {block['p90_ae_pp']:.2f}, max {block['max_ae_pp']:.2f}), "
        f"ρ {rho(block['spearman'])}, τ {rho(block['kendall'])}, "
        f"cover{100 * block['level']:g} {block['coverage']:.2f}; "
        f"random-{block['m']} MAE {r['mae_pp']:.2f} pp (p90 {r['p90_ae_pp']:.2f}), "
        f"ρ {rho(r['spearman'])}: {verdict}; plain accuracy MAE "
        f"{block['subset_accuracy']['mae_pp']:.2f} pp; floor {block['floor_pp']:.2f} pp "
        f"({scored}, {block['folds']} folds)"
    )
