"""Measuring a benchmark's difficulty distribution (SPEC §2, §7).

* :func:`ddm` — W1 distance of the items' z to a target (uniform, :class:`Beta`,
  :class:`Histogram`, or another benchmark's :class:`Sample`), computed exactly.
* :func:`gaps`, :func:`max_gap`, :func:`top_k_sum`, :func:`largest_gaps` — coverage gaps
  as intervals, the ends of [0, 1] included.
* :func:`summarize_draws`, :func:`summarize_posterior` — the same metrics over posterior
  draws of z, with intervals; :func:`summarize_bootstrap` — bias-corrected estimates and
  intervals from parametric-bootstrap replicates (:func:`curation.irt.parametric_bootstrap`).
* :class:`Resolution`, :func:`resolution_of_fit` — distinct z levels, the score step, items
  clipped at either end and the panel's span: what the data can resolve.
* :class:`FittedBenchmark` — a stored fit reloaded with its responses: resolution and
  bootstrap intervals from the annotate stage's outputs.
* :func:`coverage_experiment` — simulated worlds with a known truth: do intervals cover?
* :func:`link_panels` — two panels on common items: mean–sigma linking and drift of z.
* :func:`certify`, :func:`certify_pairs` — rank certificates (Theorem 2.1).
* :func:`blind_intervals` — where progress of width w is invisible (Theorem 2.3).
* :func:`progress_test` — stratified randomisation test for "B is better than A";
  :func:`power_curve` — the Theorem 2.3 power simulation.
* :func:`measure_benchmark`, :func:`render_gaps_report`, :func:`render_gaps_html` — what
  the ``gaps`` stage computes and writes.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.measure._blind import BlindInterval, blind_intervals
    from curation.measure._bootstrap import (
        bootstrap_interval,
        monte_carlo_se,
        summarize_bootstrap,
    )
    from curation.measure._certify import Certificate, certify, certify_pairs, top_pair_certificates
    from curation.measure._coverage import CoverageResult, World, coverage_experiment
    from curation.measure._ddm import ddm
    from curation.measure._fitted import FittedBenchmark
    from curation.measure._gaps import Gap, gaps, largest_gaps, max_gap, top_k_sum
    from curation.measure._linking import PanelLinking, link_panels
    from curation.measure._posterior import (
        Interval,
        MetricIntervals,
        PosteriorSummary,
        summarize_draws,
        summarize_posterior,
    )
    from curation.measure._power import contrast_widths, power_curve, power_table, touched_items
    from curation.measure._progress import ProgressResult, StratumEffect, progress_test
    from curation.measure._report import render_gaps_html, render_gaps_report
    from curation.measure._resolution import Panel, Resolution, resolution_of_fit
    from curation.measure._settings import (
        BENCHMARK_PREFIX,
        GapsSettings,
        IntervalSettings,
        ThresholdSettings,
    )
    from curation.measure._summary import (
        BenchmarkMeasures,
        Flags,
        TargetDDM,
        Thresholds,
        measure_benchmark,
    )
    from curation.measure._targets import (
        UNIFORM,
        Beta,
        Histogram,
        Sample,
        Target,
        TargetLike,
        parse_target,
        target_cdf,
        target_key,
        target_label,
    )
    from curation.measure._validate import as_unit_sample

_EXPORTS = {
    "BENCHMARK_PREFIX": "_settings",
    "GapsSettings": "_settings",
    "IntervalSettings": "_settings",
    "ThresholdSettings": "_settings",
    "UNIFORM": "_targets",
    "BenchmarkMeasures": "_summary",
    "Beta": "_targets",
    "BlindInterval": "_blind",
    "Certificate": "_certify",
    "CoverageResult": "_coverage",
    "FittedBenchmark": "_fitted",
    "Flags": "_summary",
    "Gap": "_gaps",
    "Histogram": "_targets",
    "Interval": "_posterior",
    "MetricIntervals": "_posterior",
    "Panel": "_resolution",
    "PanelLinking": "_linking",
    "PosteriorSummary": "_posterior",
    "ProgressResult": "_progress",
    "Resolution": "_resolution",
    "Sample": "_targets",
    "StratumEffect": "_progress",
    "Target": "_targets",
    "TargetLike": "_targets",
    "TargetDDM": "_summary",
    "Thresholds": "_summary",
    "World": "_coverage",
    "as_unit_sample": "_validate",
    "blind_intervals": "_blind",
    "bootstrap_interval": "_bootstrap",
    "certify": "_certify",
    "certify_pairs": "_certify",
    "contrast_widths": "_power",
    "coverage_experiment": "_coverage",
    "ddm": "_ddm",
    "gaps": "_gaps",
    "largest_gaps": "_gaps",
    "link_panels": "_linking",
    "max_gap": "_gaps",
    "measure_benchmark": "_summary",
    "parse_target": "_targets",
    "power_curve": "_power",
    "power_table": "_power",
    "progress_test": "_progress",
    "resolution_of_fit": "_resolution",
    "render_gaps_html": "_report",
    "render_gaps_report": "_report",
    "summarize_bootstrap": "_bootstrap",
    "monte_carlo_se": "_bootstrap",
    "summarize_draws": "_posterior",
    "summarize_posterior": "_posterior",
    "target_cdf": "_targets",
    "target_key": "_targets",
    "target_label": "_targets",
    "top_k_sum": "_gaps",
    "top_pair_certificates": "_certify",
    "touched_items": "_power",
}

__all__ = [
    "BENCHMARK_PREFIX",
    "GapsSettings",
    "IntervalSettings",
    "ThresholdSettings",
    "UNIFORM",
    "BenchmarkMeasures",
    "Beta",
    "BlindInterval",
    "Certificate",
    "CoverageResult",
    "FittedBenchmark",
    "Flags",
    "Gap",
    "Histogram",
    "Interval",
    "MetricIntervals",
    "Panel",
    "PanelLinking",
    "PosteriorSummary",
    "ProgressResult",
    "Resolution",
    "Sample",
    "StratumEffect",
    "Target",
    "TargetLike",
    "TargetDDM",
    "Thresholds",
    "World",
    "as_unit_sample",
    "blind_intervals",
    "bootstrap_interval",
    "certify",
    "certify_pairs",
    "contrast_widths",
    "coverage_experiment",
    "ddm",
    "gaps",
    "largest_gaps",
    "link_panels",
    "max_gap",
    "measure_benchmark",
    "parse_target",
    "power_curve",
    "power_table",
    "progress_test",
    "resolution_of_fit",
    "render_gaps_html",
    "render_gaps_report",
    "summarize_bootstrap",
    "monte_carlo_se",
    "summarize_draws",
    "summarize_posterior",
    "target_cdf",
    "target_key",
    "target_label",
    "top_k_sum",
    "top_pair_certificates",
    "touched_items",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
