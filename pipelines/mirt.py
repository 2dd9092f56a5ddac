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
    ROTATIONS,
    SELECT_RULES,
    Priors,
    build_report,
    loadings_frame,
    pool_responses,
    render_mirt_markdown,
    select_dimension,
)
from curation.params import benchmark_names
from curation.paths import (
    MIRT_LOADINGS,
    MIRT_METRICS,
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

DEFAULTS: dict[str, Any] = {
    "benchmarks": None,  # None: every benchmark in params['benchmarks']
    "d_max": 4,
    "holdout": 0.1,
    "seed": 0,
    "select": "heldout",
    "se_rule": 1.0,
    "rotation": "varimax",
    "common_models": True,
    "min_models_per_item": 5,
    "drop_constant_items": True,
    "priors": {"theta_sd": 1.0, "a_sd": 0.25, "b_sd": 3.0},
    "loading_share": 0.2,
    "n_flips": 3,
    "n_flip_items": 10,
}


def settings_from_params(
    params: dict[str, Any], *, params_file: str = "params.yaml"
) -> dict[str, Any]:
    """``params['mirt']`` over the defaults, checked (a typo is an error, not a default)."""
    where = f"{params_file}: mirt"
    raw = params.get("mirt") or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"{where}: unknown setting(s) {unknown}; valid: {sorted(DEFAULTS)}")
    s = {**DEFAULTS, **{k: v for k, v in raw.items() if v is not None}}
    priors_raw = raw.get("priors") or {}
    if not isinstance(priors_raw, dict) or set(priors_raw) - set(DEFAULTS["priors"]):
        raise ConfigError(
            f"{where}.priors: expected a mapping with keys {sorted(DEFAULTS['priors'])}"
        )
    s["priors"] = {**DEFAULTS["priors"], **priors_raw}

    def _num(
        key: str, kind: type, lo: float, hi: float | None = None, *, open_lo: bool = False
    ) -> None:
        v = s[key]
        if isinstance(v, bool) or not isinstance(v, (int, float) if kind is float else int):
            raise ConfigError(f"{where}.{key}: expected {kind.__name__}, got {v!r}")
        if (v <= lo if open_lo else v < lo) or (hi is not None and v >= hi):
            bound = f"> {lo}" if open_lo else f">= {lo}"
            raise ConfigError(
                f"{where}.{key}: must be {bound}"
                + (f" and < {hi}" if hi is not None else "")
                + f", got {v}"
            )

    _num("d_max", int, 1)
    _num("holdout", float, 0, 1, open_lo=True)
    _num("seed", int, 0)
    _num("se_rule", float, 0)
    _num("min_models_per_item", int, 1)
    _num("loading_share", float, 0, 1)
    _num("n_flips", int, 0)
    _num("n_flip_items", int, 1)
    for key in ("common_models", "drop_constant_items"):
        if not isinstance(s[key], bool):
            raise ConfigError(f"{where}.{key}: expected true or false, got {s[key]!r}")
    if s["rotation"] not in ROTATIONS:
        raise ConfigError(f"{where}.rotation: {s['rotation']!r} is not one of {ROTATIONS}")
    if s["select"] not in SELECT_RULES:
        raise ConfigError(f"{where}.select: {s['select']!r} is not one of {SELECT_RULES}")
    for key, v in s["priors"].items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
            raise ConfigError(f"{where}.priors.{key}: must be a number > 0, got {v!r}")
    configured = benchmark_names(params)
    chosen = s["benchmarks"] or configured
    if not isinstance(chosen, list) or not all(isinstance(b, str) for b in chosen):
        raise ConfigError(f"{where}.benchmarks: expected a list of benchmark names")
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
    plot_mirt_loadings(report, PLOT_DIR / "loadings.png")
    plot_mirt_models(report, PLOT_DIR / "models.png")
    plot_mirt_selection(report, PLOT_DIR / "selection.png")
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
