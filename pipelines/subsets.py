"""Stage `subsets`: calibrated subsets by quantile matching (SPEC §6), the estimation
subsets, and how well each estimates the full score on held-out models (issue 28).

Reads data/difficulty/<b>.parquet, data/calibration/<b>.json and data/responses/<b>.parquet
(plus the responses of the reference benchmarks and the difficulty of benchmark targets);
writes data/subsets/<b>/<target>-<m>.parquet (quantile-matched),
data/subsets/<b>/estimate-<m>.parquet (``subsets.estimation``: chosen to estimate the full
score, with weights), data/subsets/<b>/adaptive-<m>.parquet (the start items of an adaptive
test of m items) and metrics/subsets/<b>.json, where every subset has an ``estimation``
block: leave-models-out error, rank agreement and coverage of the project's estimator
beside random subsets of the same size; ``estimation.recommended`` names, per size, the
estimation subset that did best.
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import time
from dataclasses import replace
from typing import Any

import numpy as np

from curation.errors import ConfigError, InputError
from curation.io.atomic import replaces_dir, write_json
from curation.io.tables import read_table, write_table
from curation.params_model import ParamsFile
from curation.paths import (
    difficulty_path,
    responses_path,
    subset_path,
    subsets_dir,
    subsets_metrics_path,
)
from curation.schemas import validate_records
from curation.stage_main import stage_main
from curation.subsets import (
    Coverage,
    RankAgreement,
    ReferenceRanking,
    SubsetReport,
    SubsetSpec,
    describe,
    estimation_frame,
    estimation_subsets,
    evaluate_subset,
    match_quantiles,
    measured_z,
    model_scores,
    rank_agreement,
    recommend,
    validate_subsets,
)


def _scores_of(benchmark: str) -> dict[str, float]:
    table = read_table(responses_path(benchmark), produced_by=f"responses@{benchmark}")
    return model_scores(table)


def reference_ranking(
    params: ParamsFile, benchmark: str, *, params_file: str
) -> tuple[ReferenceRanking | None, str | None]:
    """The configured reference ranking, or (None, why not)."""
    ref = params.subsets.reference_for(benchmark)
    if ref.kind == "none":
        return None, "reference: none (configured)"
    if ref.kind == "models":
        return ReferenceRanking.from_order(ref.models), None
    if ref.kind == "domain":
        domain = params.benchmark(benchmark, params_file=params_file).domain
        # a benchmark added with `in_domain_reference: false` (the default of `curate
        # benchmark add`) is left out, so adding it never changes another's τ
        others = [
            b
            for b, entry in params.benchmarks.items()
            if b != benchmark and entry.domain == domain and entry.in_domain_reference
        ]
        if not others:
            return None, f"no other benchmark in domain {domain!r} to rank models against"
    else:  # benchmarks: configured ones (ParamsFile checks)
        others = [b for b in ref.benchmarks if b != benchmark]
        if not others:
            return None, "reference benchmarks list only this benchmark"
    return ReferenceRanking.mean_rank({b: _scores_of(b) for b in others}), None


def _check_sizes(params: ParamsFile, benchmark: str, *, n_items: int, params_file: str) -> None:
    """A size set for this benchmark above its item count is an error.

    (A shared ``subsets.sizes`` list may hold sizes only the larger benchmarks reach: those
    are skipped and recorded in the metrics with their reason — all of them for a small
    benchmark, e.g. a 24-item slice tried with a real panel, which then has no subsets
    instead of failing `dvc repro`.)
    """
    too_big = [m for m in params.subsets.sizes_for(benchmark) if m > n_items]
    if too_big and params.subsets.sizes_set_for(benchmark):
        raise ConfigError(
            f"{params_file}: subsets.benchmarks.{benchmark}.sizes: subset size {too_big[0]} "
            f"exceeds the {n_items} items of {benchmark} with a difficulty z; use sizes of at "
            f"most {n_items}"
        )


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:
    """Run `subsets` for one benchmark on the validated params: the line stage_main prints."""
    items, z, n_unmeasured = measured_z(benchmark)
    if not items:
        raise InputError("no item has a difficulty z", file=str(difficulty_path(benchmark)))
    _check_sizes(params, benchmark, n_items=len(items), params_file=params_file)
    responses = read_table(responses_path(benchmark), produced_by=f"responses@{benchmark}")
    full_scores = model_scores(responses)
    reference, why_not = reference_ranking(params, benchmark, params_file=params_file)

    full_cov = Coverage.of(z, "uniform")
    full_tau = (
        rank_agreement(full_scores, reference)
        if reference is not None
        else RankAgreement(None, None, 0, why_not)
    )
    metrics: dict[str, Any] = {
        "benchmark": benchmark,
        "n_items": len(items),
        "n_unmeasured": n_unmeasured,
        "reference": reference.label if reference is not None else None,
        "full": {
            "ddm_uniform": full_cov.ddm_uniform,
            "max_gap": full_cov.max_gap,
            "top_3_sum": full_cov.top_3_sum,
            "top_5_sum": full_cov.top_5_sum,
            "tau": full_tau.to_dict(),
        },
        "subsets": {},
        "skipped": {},
    }

    def load_z(other: str) -> np.ndarray:
        return measured_z(other)[1]

    written: list[str] = []
    lines: list[str] = []
    specs: list[SubsetSpec] = []
    for name, spec, m in params.subsets.names_for(benchmark):
        if m > len(items):
            metrics["skipped"][name] = f"m={m} exceeds the {len(items)} items with a z"
            continue
        target = spec.resolve(load_z)
        subset = match_quantiles(items, z, target=target, m=m)
        report = evaluate_subset(
            subset,
            name=name,
            target=target,
            full_z=z,
            scores=model_scores(responses, subset.items),
            full_scores=full_scores,
            reference=reference,
        )
        if reference is None:
            report = _with_note(report, why_not)
        write_table(
            subset.to_frame(benchmark=benchmark, name=name),
            subset_path(benchmark, name),
            "subset_item",
        )
        written.append(name)
        specs.append(SubsetSpec(name, "quantile", m, target))
        metrics["subsets"][name] = report.to_metrics()
        tau = "n/a" if report.tau.tau is None else f"{report.tau.tau:.2f}"
        full = "n/a" if report.full_tau.tau is None else f"{report.full_tau.tau:.2f}"
        lines.append(
            f"  {name}: DDM({report.target_label}) {report.subset.ddm_target:.3f} "
            f"(full {report.full.ddm_target:.3f}), max gap {report.subset.max_gap:.3f}, "
            f"τ {tau} (full {full})"
        )
    estimation = _estimation(params, benchmark, responses)
    written += list(estimation["subsets"])
    blocks, seconds = validate_subsets(
        responses,
        [*specs, *estimation.pop("specs")],
        params.subsets.estimation,
        irt_model=estimation["irt_model"],
        fit_settings=params.annotate.settings,
        scale=params.annotate.scale,
        benchmark=benchmark,
    )
    for name, block in blocks.items():
        where = metrics["subsets"] if name in metrics["subsets"] else estimation["subsets"]
        where[name]["estimation"] = block
    _write_estimation(
        benchmark, estimation.pop("designs"), blocks, z=dict(zip(items, z, strict=True))
    )
    estimation["recommended"] = recommend(blocks)
    select_seconds = estimation.pop("seconds")
    metrics["estimation"] = estimation
    for name in [*(s.name for s in specs), *estimation["subsets"]]:
        lines.append(f"  {name}: {describe(blocks[name])}")
    for m, name in estimation["recommended"].items():
        lines.append(f"  recommended to estimate a full score from {m} items: {name}")
    lines.append(
        f"  estimation: {len(estimation['subsets'])} subset(s) ({estimation['design']}"
        f"{', adaptive' if params.subsets.estimation.adaptive else ''}), "
        f"{len(blocks)} validated; {select_seconds + seconds:.1f} s (selection "
        f"{select_seconds:.1f} s, validation {seconds:.1f} s)"
    )
    replaces_dir(subsets_dir(benchmark))  # subsets no longer configured go with this run
    # the stage's DVC out is the folder: it exists even when every size was skipped
    subsets_dir(benchmark).mkdir(parents=True, exist_ok=True)
    metrics_file = subsets_metrics_path(benchmark)
    validate_records([metrics], "subsets_metrics", file=str(metrics_file))
    write_json(metrics_file, metrics)
    head = f"{benchmark}: {len(written)} subset(s) -> {subsets_dir(benchmark)}"
    for name, why in {**metrics["skipped"], **estimation["skipped"]}.items():
        lines.append(f"  skipped {name}: {why}")
    if why_not:
        lines.append(f"  τ not computed: {why_not}")
    return "\n".join([head, *lines])


def _estimation(params: ParamsFile, benchmark: str, responses: Any) -> dict[str, Any]:
    """The ``estimate-<m>`` (and ``adaptive-<m>``) designs on the stored calibration;
    their metrics entry (``specs``, ``designs`` and ``seconds`` are popped by the
    caller, which writes the designs once their validation gave the interval scale)."""
    from curation.estimate import ItemBank

    settings = params.subsets.estimation
    started = time.perf_counter()
    bank = ItemBank.load(benchmark)
    designs, skipped = estimation_subsets(bank, responses, settings)
    out: dict[str, Any] = {
        "design": settings.design,
        "estimator": "irt",
        "irt_model": bank.model,
        "sizes": list(settings.sizes_list()),
        "subsets": {},
        "skipped": skipped,
        "specs": [],
        "designs": (bank, designs),
    }
    for name, design in designs.items():
        out["subsets"][name] = {
            "design": design.design,
            "m": design.total,
            "n_items": bank.n_items,
            "weighted": design.weights is not None,
            **({"start": design.m, "block": design.block} if design.adaptive else {}),
        }
        out["specs"].append(SubsetSpec(name, design.design, design.total))  # type: ignore[arg-type]
    out["seconds"] = time.perf_counter() - started  # printed, not in the metrics
    return out


def _write_estimation(
    benchmark: str,
    made: tuple[Any, dict[str, Any]],
    blocks: dict[str, dict[str, Any]],
    *,
    z: dict[str, float],
) -> None:
    """Each estimation design as data/subsets/<b>/<name>.parquet, with the conformal
    interval scale its validation measured (none when it could not be validated)."""
    bank, designs = made
    for name, design in designs.items():
        block = blocks.get(name) or {}
        scale = None if "unavailable" in block else block.get("interval_scale")
        frame = estimation_frame(
            design, bank, benchmark=benchmark, name=name, z=z, interval_scale=scale
        )
        write_table(frame, subset_path(benchmark, name), "estimation_subset_item")


def _with_note(report: SubsetReport, note: str | None) -> SubsetReport:
    none = RankAgreement(None, None, 0, note)
    return replace(report, tau=none, full_tau=none)


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.subsets``): validate params once, run, exit 0/2/3."""
    return stage_main("subsets", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
