"""Stage `gaps`: DDM, coverage gaps, certificates and blind intervals of every benchmark.

One stage over all benchmarks, because the one-page report compares them side by side
(and a target may be another benchmark's difficulties). Writes metrics/gaps.json,
reports/gaps.md and .html, plots/gaps/<b>-{ecdf,strip}.png and plots/gaps-data/ecdf.csv
(ECDFs on a common grid, for `dvc plots`). Intervals come from a parametric bootstrap of
the stored MAP fit (``gaps.intervals``), and the axis resolution and anchoring from the
responses and the calibration (:class:`curation.measure.FittedBenchmark`).
"""

from __future__ import annotations

import curation.blas_kernel  # noqa: F401  (first: OpenBLAS picks its kernels as numpy loads)

# isort: split
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from curation.errors import ConfigError, InputError
from curation.io.atomic import atomic_path, write_json, write_text
from curation.io.tables import read_table
from curation.irt import Calibration
from curation.measure import (
    FittedBenchmark,
    IntervalSettings,
    MetricIntervals,
    PanelLinking,
    Sample,
    link_panels,
    measure_benchmark,
    parse_target,
    render_gaps_html,
    render_gaps_report,
    summarize_posterior,
)
from curation.params_model import ParamsFile, legacy_mapping
from curation.paths import (
    GAPS_ECDF_DATA,
    GAPS_METRICS,
    GAPS_REPORT_HTML,
    GAPS_REPORT_MD,
    calibration_path,
    difficulty_path,
    draws_path,
    gaps_plot_path,
    responses_path,
)
from curation.plots._style import plot_settings
from curation.plots.measure import plot_ecdf, plot_gap_strip
from curation.schemas import validate_records
from curation.settings import parse_section
from curation.stage_main import stage_main

DEFAULTS: dict[str, Any] = {
    "targets": ["uniform"],
    "lipschitz": 1.0,
    "blind_width": 0.10,
    "k_gaps": 5,
    "n_pairs": 5,
    "level": 0.9,
    "thresholds": {"ddm": 0.10, "max_gap": 0.10, "top_5_sum": 0.30},
    "intervals": {"method": "bootstrap", "replicates": 200, "seed": 0},
    "resolution_floor": True,
}
GRID = np.linspace(0.0, 1.0, 501)


def _settings(params: dict[str, Any]) -> dict[str, Any]:
    section = {**DEFAULTS, **(params.get("gaps") or {})}
    unknown = sorted(set(section) - set(DEFAULTS))
    if unknown:
        raise ConfigError(
            f"params.yaml: gaps: unknown setting(s) {unknown}; valid: {sorted(DEFAULTS)}"
        )
    iv = parse_section(IntervalSettings, section["intervals"], where="params.yaml: gaps.intervals")
    if not isinstance(section["resolution_floor"], bool):
        raise ConfigError("params.yaml: gaps.resolution_floor: expected true or false")
    return {**section, "intervals": iv}


def _targets(specs: list[Any], z_by_benchmark: dict[str, np.ndarray]) -> list[Any]:
    """Parse targets; ``benchmark:<name>`` is another benchmark's z as a sample target."""
    out: list[Any] = []
    for spec in specs:
        if isinstance(spec, str) and spec.startswith("benchmark:"):
            other = spec.split(":", 1)[1]
            if other not in z_by_benchmark:
                raise ConfigError(f"params.yaml: gaps.targets: no benchmark {other!r}")
            out.append(Sample(tuple(z_by_benchmark[other]), name=other))
            continue
        try:
            out.append(parse_target(spec))
        except ValueError as exc:
            raise ConfigError(f"params.yaml: gaps.targets: {exc}") from None
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
    cfg: dict[str, Any], benchmark: str, fitted: FittedBenchmark, target: Any
) -> MetricIntervals | None:
    """The configured intervals: bootstrap of a MAP fit, else the annotate stage's draws."""
    iv: IntervalSettings = cfg["intervals"]
    level = float(cfg["level"])
    if iv.method == "none":
        return None
    if iv.method == "bootstrap" and fitted.method == "map":
        out, _ = fitted.bootstrap(
            target=target, level=level, replicates=iv.replicates, seed=iv.seed
        )
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


def run(params: ParamsFile, *, params_file: str = "params.yaml") -> str:
    raw = legacy_mapping(params)
    cfg = _settings(raw)
    names = list(params.benchmarks)
    tables = {b: read_table(difficulty_path(b), produced_by=f"annotate@{b}") for b in names}
    z_by = {b: t["z"].to_numpy() for b, t in tables.items()}
    targets = _targets(list(cfg["targets"]), z_by)
    th = cfg["thresholds"]
    fmt = plot_settings(raw, where=params_file).format
    measures = []
    fitted = {
        b: FittedBenchmark.load(
            read_table(responses_path(b), produced_by=f"responses@{b}"),
            Calibration.load(calibration_path(b)),
            tables[b],
        )
        for b in names
    }
    for b in names:
        # Intervals and resolution are in the fit's item order: measure z in that order too.
        z_by[b] = fitted[b].z
        m = measure_benchmark(
            z_by[b],
            name=b,
            targets=targets,
            model_scores=_model_scores(b),
            lipschitz=float(cfg["lipschitz"]),
            width=float(cfg["blind_width"]),
            intervals=_intervals(cfg, b, fitted[b], targets[0]),
            resolution=fitted[b].resolution(),
            resolution_floor=bool(cfg["resolution_floor"]),
            level=float(cfg["level"]),
            k_gaps=int(cfg["k_gaps"]),
            n_pairs=int(cfg["n_pairs"]),
            ddm_threshold=float(th["ddm"]),
            max_gap_threshold=float(th["max_gap"]),
            top5_threshold=float(th["top_5_sum"]),
        )
        measures.append(replace(m, linkings=_linkings(b, fitted, tables)))
        plot_ecdf(z_by[b], gaps_plot_path(b, "ecdf"), target=targets[0], name=b, formats=fmt)
        plot_gap_strip(
            z_by[b], gaps_plot_path(b, "strip"), k=int(cfg["k_gaps"]), name=b, formats=fmt
        )

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
    return stage_main("gaps", run, argv, per_benchmark=False, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
