"""Stage `mirt`: multidimensional IRT jointly over all benchmarks.

Reads data/responses/<b>.parquet for every benchmark, fits d = 1..d_max, chooses d
by held-out likelihood (BIC reported), rotates, and writes metrics/mirt.json,
reports/mirt.md, plots/mirt/{loadings,models,selection}.png and
data/mirt/loadings.parquet. Settings: ``params['mirt']`` (all optional).
"""

from __future__ import annotations

import time
from typing import Any

from curation.errors import ConfigError, InputError
from curation.io.atomic import atomic_path, write_json, write_text
from curation.io.tables import read_table
from curation.irt.mirt import (
    Priors,
    build_report,
    loadings_frame,
    pool_responses,
    render_mirt_markdown,
    select_dimension,
)
from curation.params import benchmark_names
from curation.params_model import MirtSettings
from curation.paths import (
    MIRT_LOADINGS,
    MIRT_METRICS,
    MIRT_PLOT_DIR,
    MIRT_REPORT,
    responses_path,
)
from curation.plots._style import plot_settings
from curation.plots.mirt import plot_mirt_loadings, plot_mirt_models, plot_mirt_selection
from curation.schemas import validate_records
from curation.settings import parse_section
from curation.stage_main import stage_main

METRICS_PATH = MIRT_METRICS
REPORT_PATH = MIRT_REPORT
PLOT_DIR = MIRT_PLOT_DIR
LOADINGS_PATH = MIRT_LOADINGS


def settings_from_params(
    params: dict[str, Any], *, params_file: str = "params.yaml"
) -> dict[str, Any]:
    """``params['mirt']`` over the defaults, checked (a typo is an error, not a default)."""
    where = f"{params_file}: mirt"
    raw = params.get("mirt") or {}
    if isinstance(raw, dict):  # an explicit null means "the default"
        raw = {k: v for k, v in raw.items() if v is not None}
    s = parse_section(MirtSettings, raw, where=where).model_dump()
    configured = benchmark_names(params)
    chosen = s["benchmarks"] or configured
    missing = [b for b in chosen if b not in configured]
    if missing:
        raise ConfigError(f"{where}.benchmarks: not configured in `benchmarks`: {missing}")
    if len(chosen) < 2:
        raise ConfigError(
            f"{where}.benchmarks: a joint fit needs at least two benchmarks, got {chosen}"
        )
    s["benchmarks"] = list(chosen)
    return s


def run(params: dict[str, Any], *, params_file: str = "params.yaml") -> str:
    s = settings_from_params(params, params_file=params_file)
    t_start = time.perf_counter()
    tables = {
        b: read_table(responses_path(b), produced_by=f"responses@{b}") for b in s["benchmarks"]
    }
    try:
        data = pool_responses(
            tables,
            common_models=s["common_models"],
            min_models_per_item=s["min_models_per_item"],
            drop_constant_items=s["drop_constant_items"],
        )
    except ValueError as exc:
        raise InputError(
            str(exc), file=", ".join(str(responses_path(b)) for b in s["benchmarks"])
        ) from None
    t_pool = time.perf_counter()
    selection = select_dimension(
        data,
        d_max=s["d_max"],
        holdout=s["holdout"],
        seed=s["seed"],
        priors=Priors(**s["priors"]),
        select=s["select"],
        se_rule=s["se_rule"],
    )
    t_fit = time.perf_counter()
    timings = {
        "read+pool": t_pool - t_start,
        "fits (d = 1..d_max, held-out + full)": t_fit - t_pool,
    }
    report = build_report(
        data,
        selection,
        rotation=s["rotation"],
        loading_share=s["loading_share"],
        n_flips=s["n_flips"],
        n_flip_items=s["n_flip_items"],
        settings=s,
    )
    metrics = report.metrics()
    validate_records([metrics], "mirt_metrics", file=str(METRICS_PATH))
    fmt = plot_settings(params, where=params_file).format
    plot_mirt_loadings(report, PLOT_DIR / "loadings.png", formats=fmt)
    plot_mirt_models(report, PLOT_DIR / "models.png", formats=fmt)
    plot_mirt_selection(report, PLOT_DIR / "selection.png", formats=fmt)
    frame = loadings_frame(report.fit, data)
    with atomic_path(LOADINGS_PATH) as tmp:
        frame.write_parquet(tmp, statistics=True)
    write_text(REPORT_PATH, render_mirt_markdown(report))
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
        f"BIC {selection.d_bic}); d = {report.analysis_d} {s['rotation']} loadings: {loads}; "
        f"{time.perf_counter() - t_start:.1f} s ("
        + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        + ")"
    )


def main(argv: list[str] | None = None) -> int:
    return stage_main("mirt", run, argv, per_benchmark=False, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
