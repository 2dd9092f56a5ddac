"""Stage `gaps`: DDM, coverage gaps, certificates and blind intervals of every benchmark.

One stage over all benchmarks, because the one-page report compares them side by side
(and a target may be another benchmark's difficulties). Writes metrics/gaps.json,
reports/gaps.md and .html, plots/gaps/<b>-{ecdf,strip}.png and plots/gaps-data/ecdf.csv
(ECDFs on a common grid, for `dvc plots`). Intervals come from a parametric bootstrap of
the stored MAP fit (``gaps.intervals``), and the axis resolution and anchoring from the
responses and the calibration (:class:`curation.measure.FittedBenchmark`).
"""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from curation.errors import InputError
from curation.io.atomic import atomic_path, replaces_dir, write_json, write_text
from curation.io.tables import read_table
from curation.irt import Calibration
from curation.measure import (
    BENCHMARK_PREFIX,
    FittedBenchmark,
    GapsSettings,
    MetricIntervals,
    PanelLinking,
    Sample,
    Target,
    link_panels,
    measure_benchmark,
    parse_target,
    render_gaps_html,
    render_gaps_report,
    summarize_posterior,
)
from curation.params_model import ParamsFile
from curation.paths import (
    GAPS_ECDF_DATA,
    GAPS_METRICS,
    GAPS_PLOT_DIR,
    GAPS_REPORT_HTML,
    GAPS_REPORT_MD,
    calibration_path,
    difficulty_path,
    draws_path,
    gaps_plot_path,
    responses_path,
)
from curation.plots.measure import plot_ecdf, plot_gap_strip
from curation.schemas import validate_records
from curation.stage_main import stage_main

GRID = np.linspace(0.0, 1.0, 501)


def _targets(settings: GapsSettings, z_by_benchmark: dict[str, np.ndarray]) -> list[Target]:
    """The configured targets (checked by :class:`GapsSettings` and ``ParamsFile``);
    ``benchmark:<name>`` is another benchmark's z as a sample target."""
    out: list[Target] = []
    for spec in settings.targets:
        if isinstance(spec, str) and spec.startswith(BENCHMARK_PREFIX):
            other = spec.removeprefix(BENCHMARK_PREFIX)
            out.append(Sample(tuple(z_by_benchmark[other]), name=other))
        else:
            out.append(parse_target(spec))
    return out


def _model_scores(benchmark: str) -> dict[str, float]:
    responses = read_table(responses_path(benchmark), produced_by=f"responses@{benchmark}")
    scores = responses.group_by("model").agg(
        (pl.col("n_correct").sum() / pl.col("n_trials").sum()).alias("score")
    )
    return dict(scores.iter_rows())


def _z_draws(benchmark: str, items: list[str]) -> tuple[np.ndarray | None, str | None]:
    """Draws of z aligned with ``items`` and what they are (posterior or laplace)."""
    path = draws_path(benchmark)
    if not path.is_file():
        return None, None
    try:
        with np.load(path) as data:
            if list(data["items"]) != items:
                return None, None
            return np.asarray(data["z"]), str(data["source"])
    except (OSError, ValueError, KeyError) as exc:  # not an npz annotate wrote
        raise InputError(
            f"not readable draws ({exc}); run `dvc repro -f annotate@{benchmark}`", file=str(path)
        ) from None


def _intervals(
    settings: GapsSettings, benchmark: str, fitted: FittedBenchmark, target: Target
) -> MetricIntervals | None:
    """The configured intervals: bootstrap of a MAP fit, else the annotate stage's draws."""
    iv = settings.intervals
    level = settings.level
    if iv.method == "none":
        return None
    if iv.method == "bootstrap" and fitted.method == "map":
        budget = iv.budget_for(int(fitted.cells.k.size), fitted.cells.n_models)
        check = iv.self_check
        out, _ = fitted.bootstrap(
            target=target,
            level=level,
            replicates=budget.replicates,
            seed=iv.seed,
            requested=iv.replicates,
            worlds=budget.worlds,
            band=(check.low, check.high),
            max_widening=check.max_widening,
        )
        skipped = None
        if budget.panel == 0 and iv.panel.replicates > 0:
            skipped = "max_refit_cells leaves too few refits for the panel bootstrap"
        if budget.panel or budget.loo or skipped:  # a skipped part is said, not left out
            panel = fitted.panel(
                target=target,
                level=level,
                replicates=budget.panel,
                loo=budget.loo,
                seed=iv.seed,
                skipped=skipped,
                within=out,
            )
            out = replace(out, panel=panel)
        return out
    z_draws, source = _z_draws(benchmark, list(fitted.items))  # NUTS posterior, or laplace
    if z_draws is None:
        return None
    return summarize_posterior(z_draws, target=target, level=level, method=str(source))


def _linkings(
    name: str, fitted: dict[str, FittedBenchmark], tables: dict[str, pl.DataFrame]
) -> tuple[PanelLinking, ...]:
    """Linking of every other benchmark that shares items with ``name`` (panel dependence)."""
    out = []
    here = fitted[name]
    for other, there in fitted.items():
        if other == name or not set(here.items) & set(there.items):
            continue
        bounded = {
            str(i)
            for t in (tables[name], tables[other])
            for i, bound in zip(t["item"], t["bound"], strict=True)
            if bound is not None
        }
        link = link_panels(
            dict(zip(here.items, here.b.tolist(), strict=True)),
            dict(zip(there.items, there.b.tolist(), strict=True)),
            to_z_a=here.calibration.to_z,
            to_z_b=there.calibration.to_z,
            theta_a=here.calibration.theta,
            theta_b=there.calibration.theta,
            names=(name, other),
            bounded=bounded,
        )
        if link is not None:
            out.append(link)
    return tuple(out)


def _ecdf_on_grid(z: np.ndarray) -> np.ndarray:
    return np.searchsorted(np.sort(z), GRID, side="right") / z.size


def run(params: ParamsFile, *, params_file: str = "params.yaml") -> str:  # noqa: ARG001 (stage_main passes params_file)
    """Run `gaps` over all benchmarks on the validated params: the line stage_main prints."""
    cfg = params.gaps
    names = list(params.benchmarks)
    tables = {b: read_table(difficulty_path(b), produced_by=f"annotate@{b}") for b in names}
    z_by = {b: t["z"].to_numpy() for b, t in tables.items()}
    targets = _targets(cfg, z_by)
    th = cfg.thresholds
    fmt = params.plots.format
    measures = []
    fitted = {
        b: FittedBenchmark.load(
            read_table(responses_path(b), produced_by=f"responses@{b}"),
            Calibration.load(calibration_path(b)),
            tables[b],
        )
        for b in names
    }
    replaces_dir(GAPS_PLOT_DIR)  # figures of benchmarks no longer configured go too
    for b in names:
        # Intervals and resolution are in the fit's item order: measure z in that order too.
        z_by[b] = fitted[b].z
        m = measure_benchmark(
            z_by[b],
            name=b,
            targets=targets,
            model_scores=_model_scores(b),
            lipschitz=cfg.lipschitz,
            width=cfg.blind_width,
            intervals=_intervals(cfg, b, fitted[b], targets[0]),
            resolution=fitted[b].resolution(),
            resolution_floor=cfg.resolution_floor,
            level=cfg.level,
            k_gaps=cfg.k_gaps,
            n_pairs=cfg.n_pairs,
            ddm_threshold=th.ddm,
            max_gap_threshold=th.max_gap,
            top5_threshold=th.top_5_sum,
        )
        measures.append(replace(m, linkings=_linkings(b, fitted, tables)))
        plot_ecdf(z_by[b], gaps_plot_path(b, "ecdf"), target=targets[0], name=b, formats=fmt)
        plot_gap_strip(z_by[b], gaps_plot_path(b, "strip"), k=cfg.k_gaps, name=b, formats=fmt)

    metrics = {m.name: m.to_metrics() for m in measures}
    validate_records(list(metrics.values()), "gaps_metrics", file=str(GAPS_METRICS))
    figures = {
        b: [str(Path("..") / gaps_plot_path(b, k)) for k in ("ecdf", "strip")] for b in names
    }
    md = render_gaps_report(measures, title="Gap analysis", figures=figures)
    html = render_gaps_html(measures, title="Gap analysis", figures=figures)
    grid = pl.DataFrame({"z": GRID, "uniform": GRID, **{b: _ecdf_on_grid(z_by[b]) for b in names}})
    with atomic_path(GAPS_ECDF_DATA) as tmp:
        grid.write_csv(tmp, float_precision=6)
    write_text(GAPS_REPORT_MD, md)
    write_text(GAPS_REPORT_HTML, html)
    write_json(GAPS_METRICS, metrics)
    return gaps_table(measures)


def gaps_table(measures: list[Any]) -> str:
    """The per-benchmark table printed at the end of the stage."""
    header = ("benchmark", "n", "DDM", "Max Gap", "interval", "Top-3", "Top-5", "flags")
    rows = [header]
    for m in measures:
        g = m.max_gap
        rows.append(
            (
                m.name,
                str(m.n),
                f"{m.primary_ddm:.3f}",
                f"{g.width:.3f}",
                f"[{g.z_left:.3f}, {g.z_right:.3f}]",
                f"{m.top_3_sum:.3f}",
                f"{m.top_5_sum:.3f}",
                ", ".join(m.flag_reasons()) or "-",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.gaps``): validate params once, run, exit 0/2/3."""
    return stage_main("gaps", run, argv, per_benchmark=False, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
