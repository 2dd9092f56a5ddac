"""Stage `check`: response-matrix diagnostics -> metrics/check/<b>.json, reports/check/<b>.md."""

from __future__ import annotations

import curation.stage_start  # noqa: F401  (first: BLAS kernels before numpy; one-line Ctrl-C)

# isort: split

from curation.io.atomic import write_json, write_text
from curation.io.tables import read_table
from curation.params_model import ParamsFile
from curation.paths import (
    check_metrics_path,
    check_plot_path,
    check_report_path,
    responses_path,
)
from curation.plots.check import plot_check_overview
from curation.responses import check_matrix, render_check_markdown, summary_line
from curation.schemas import validate_records
from curation.stage_main import stage_main


def run(params: ParamsFile, benchmark: str, *, params_file: str = "params.yaml") -> str:  # noqa: ARG001 (stage_main passes params_file)
    """Run `check` for one benchmark on the validated params: the line stage_main prints."""
    settings = params.check
    list_limit = settings.list_limit
    responses = read_table(responses_path(benchmark), produced_by=f"responses@{benchmark}")
    report = check_matrix(responses, benchmark=benchmark, warn=settings.warn)
    metrics = report.metrics(list_limit=list_limit)
    metrics_file = check_metrics_path(benchmark)
    validate_records([metrics], "check_metrics", file=str(metrics_file))
    plot_check_overview(report, check_plot_path(benchmark), formats=params.plots.format)
    write_text(check_report_path(benchmark), render_check_markdown(report, list_limit=list_limit))
    write_json(metrics_file, metrics)
    text = summary_line(report)
    for warning in report.warnings:
        text += f"\n  warning: {warning}"
    return text


def main(argv: list[str] | None = None) -> int:
    """Console entry (``python -m pipelines.check``): validate params once, run, exit 0/2/3."""
    return stage_main("check", run, argv, per_benchmark=True, description=__doc__)


if __name__ == "__main__":
    raise SystemExit(main())
