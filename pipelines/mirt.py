"""Stage `mirt`: multidimensional IRT jointly over all benchmarks.

Reads data/responses/<b>.parquet for every benchmark, fits d = 1..d_max, chooses d
by held-out likelihood (BIC reported), rotates, and writes metrics/mirt.json,
reports/mirt.md, reports/mirt-models.html (every model's abilities, searchable),
plots/mirt/{loadings,models,selection}.png and data/mirt/loadings.parquet. Settings:
``params.mirt`` (all optional). A leaderboard's report and model figure summarise the
panel (:mod:`curation.report.panel`); the HTML page keeps every model.

A project that cannot support a joint fit — one benchmark (or one with responses), a
panel too small for ``min_models_per_item`` — is skipped: the same outputs, with the
reason in metrics/mirt.json (schema ``skipped_stage``) and reports/mirt.md, so a small
trial setup does not fail `dvc repro`. A pool listed in ``mirt.benchmarks`` is fitted
as listed, and fails loudly if it cannot be.
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
import time

import polars as pl

from curation.errors import InputError
from curation.io.atomic import atomic_path, replaces_dir, write_json, write_text
from curation.io.precision import round_frame
from curation.io.tables import read_table
from curation.irt.mirt import (
    build_report,
    loadings_frame,
    pool_responses,
    render_mirt_markdown,
    render_models_html,
    select_dimension,
)
from curation.params_model import ParamsFile
from curation.paths import (
    MIRT_LOADINGS,
    MIRT_METRICS,
    MIRT_MODELS_PAGE,
    MIRT_PLOT_DIR,
    MIRT_REPORT,
    responses_path,
)
from curation.plots.mirt import plot_mirt_loadings, plot_mirt_models, plot_mirt_selection
from curation.schemas import validate_records
from curation.stage_main import stage_main

METRICS_PATH = MIRT_METRICS
REPORT_PATH = MIRT_REPORT
PLOT_DIR = MIRT_PLOT_DIR
LOADINGS_PATH = MIRT_LOADINGS


MIN_COMMON_MODELS = 2
"""A common-models fit needs at least this many models that answered every benchmark."""


def left_out(model_sets: dict[str, set[str]]) -> dict[str, str]:
    """Benchmarks a common-models fit leaves out, each with its one-line reason.

    A benchmark that shares (almost) no models with the others would empty the common
    set and fail the whole fit; it is dropped instead (the newest first on ties, so
    adding a benchmark never changes the fit of the ones already there)."""
    kept = list(model_sets)
    out: dict[str, str] = {}

    def common(names: list[str]) -> set[str]:
        return set.intersection(*(model_sets[n] for n in names))

    while len(kept) > 2 and len(common(kept)) < MIN_COMMON_MODELS:
        drop = max(reversed(kept), key=lambda b: len(common([k for k in kept if k != b])))
        kept.remove(drop)
        shared = len(model_sets[drop] & common(kept))
        out[drop] = (
            f"{drop}: left out of the joint fit: "
            + (f"only {shared} model(s)" if shared else "no model")
            + f" in common with {', '.join(kept)} (mirt.common_models: false pools it)"
        )
    return out


def run(params: ParamsFile, *, params_file: str = "params.yaml") -> str:  # noqa: ARG001 (stage_main passes params_file)
    """Run `mirt` over all benchmarks on the validated params: the line stage_main prints."""
    s = params.mirt
    pool = s.pool(params.benchmarks)  # ParamsFile checked that every listed one is configured
    listed = bool(s.benchmarks)
    t_start = time.perf_counter()
    tables = {b: read_table(responses_path(b), produced_by=f"responses@{b}") for b in pool}
    skipped: dict[str, str] = {}
    if not listed:
        # the default pool (every benchmark): one without responses, or without shared
        # models, is left out; a pool the user listed is fitted as listed (and fails if it
        # cannot be)
        skipped = {
            b: f"{b}: left out of the joint fit: no responses"
            for b, t in tables.items()
            if not t.height
        }
        tables = {b: t for b, t in tables.items() if b not in skipped}
        if len(tables) < 2:
            return write_skipped(
                "a joint fit needs at least two benchmarks with responses, have "
                + (", ".join(tables) or "none"),
                pool,
                skipped,
            )
        if s.common_models:
            skipped |= left_out(
                {b: set(t.get_column("model").to_list()) for b, t in tables.items()}
            )
            tables = {b: t for b, t in tables.items() if b not in skipped}
    try:
        data = pool_responses(
            tables,
            common_models=s.common_models,
            min_models_per_item=s.min_models_per_item,
            drop_constant_items=s.drop_constant_items,
        )
    except ValueError as exc:
        if listed:
            raise InputError(
                str(exc), file=", ".join(str(responses_path(b)) for b in pool)
            ) from None
        models = set.union(*(set(t.get_column("model").to_list()) for t in tables.values()))
        return write_skipped(
            f"{exc}: {len(models)} model(s) over {', '.join(tables)}, "
            f"mirt.min_models_per_item: {s.min_models_per_item}",
            pool,
            skipped,
        )
    t_pool = time.perf_counter()
    selection = select_dimension(
        data,
        d_max=s.d_max,
        holdout=s.holdout,
        seed=s.seed,
        priors=s.priors,
        select=s.select,
        se_rule=s.se_rule,
        max_cells=s.selection_max_cells,
    )
    t_fit = time.perf_counter()
    timings = {
        "read+pool": t_pool - t_start,
        "fits (d = 1..d_max, held-out + full)": t_fit - t_pool,
    }
    report = build_report(
        data,
        selection,
        rotation=s.rotation,
        loading_share=s.loading_share,
        n_flips=s.n_flips,
        n_flip_items=s.n_flip_items,
    )
    metrics = report.metrics()
    validate_records([metrics], "mirt_metrics", file=str(METRICS_PATH))
    fmt = params.plots.format
    replaces_dir(PLOT_DIR)  # the folder holds this run's figures alone
    plot_mirt_loadings(report, PLOT_DIR / "loadings.png", formats=fmt)
    plot_mirt_models(report, PLOT_DIR / "models.png", formats=fmt)
    plot_mirt_selection(report, PLOT_DIR / "selection.png", formats=fmt)
    frame = round_frame(loadings_frame(report.fit, data))
    with atomic_path(LOADINGS_PATH) as tmp:
        frame.write_parquet(tmp, statistics=True)
    notes = "".join(f"- {why}\n" for why in skipped.values())
    write_text(REPORT_PATH, render_mirt_markdown(report) + (f"\n{notes}" if notes else ""))
    write_text(MIRT_MODELS_PAGE, render_models_html(report))
    write_json(METRICS_PATH, metrics)
    rows = ", ".join(f"d={r.d} {r.heldout_loglik:.4f}" for r in selection.rows)
    loads = "; ".join(
        f"{p.benchmark}: dim {'/'.join(map(str, p.loads_on)) or '-'}"
        for p in report.profiles[report.analysis_d]
    )
    return (
        f"mirt: {data.n_models} models x {data.n_items} items over {len(data.benchmarks)} "
        "benchmarks; "
        f"held-out loglik/cell {rows}; chosen d = {selection.chosen} (held-out "
        f"{selection.d_heldout}, "
        f"BIC {selection.d_bic}); d = {report.analysis_d} {s.rotation} loadings: {loads}; "
        f"{time.perf_counter() - t_start:.1f} s ("
        + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        + ")"
        + "".join(f"\n{why}" for why in skipped.values())
    )


def write_skipped(reason: str, pool: list[str], left: dict[str, str]) -> str:
    """Write every declared output of a skipped fit and return its one-line summary.

    A small or partial project (one benchmark, a 2-model panel) cannot support a joint
    fit; that is a fact to report, not an error that should fail `dvc repro`. DVC still
    needs each declared output, so they stand in: the reason in metrics and report, an
    empty loadings table, an empty plot folder (stale figures of an earlier fit removed).
    """
    record = {"stage": "mirt", "skipped": True, "reason": reason, "benchmarks": pool}
    validate_records([record], "skipped_stage", file=str(METRICS_PATH))
    PLOT_DIR.mkdir(parents=True, exist_ok=True)
    replaces_dir(PLOT_DIR)  # figures of an earlier fit go when the stage commits
    with atomic_path(LOADINGS_PATH) as tmp:
        pl.DataFrame(schema=SKIPPED_LOADINGS).write_parquet(tmp)
    notes = "".join(f"- {why}\n" for why in left.values())
    write_text(
        REPORT_PATH,
        f"# Multidimensional IRT\n\nSkipped: {reason}.\n" + (f"\n{notes}" if notes else ""),
    )
    write_text(MIRT_MODELS_PAGE, skipped_page(reason))
    write_json(METRICS_PATH, record)
    return f"mirt: skipped: {reason}" + "".join(f"\n{why}" for why in left.values())


def skipped_page(reason: str) -> str:
    """The models page of a skipped fit: the reason, no table."""
    from curation.report.blocks import Heading, Paragraph
    from curation.report.html import page

    return page(
        [Heading(1, "MIRT model abilities"), Paragraph(f"Skipped: {reason}.")],
        "MIRT model abilities",
    )


SKIPPED_LOADINGS = {
    "benchmark": pl.String,
    "item": pl.String,
    "difficulty": pl.Float64,
    "communality": pl.Float64,
    "primary_dimension": pl.Int64,
    "n_models": pl.Int64,
    "rotation": pl.String,
    "d": pl.Int64,
}
"""The loadings table's columns without a fit (no a1..ad: there is no dimension)."""


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.mirt``): validate params once, run, exit 0/2/3."""
    return stage_main("mirt", run, argv, per_benchmark=False, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
