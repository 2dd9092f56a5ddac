"""The self-check: its rescaling arithmetic on known errors, and its printed coverage
against the coverage achieved in worlds it does not simulate (a 2PL truth under the 1PL
fit: not circular)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from curation.irt import Cells
from curation.measure import Interval
from curation.measure._coverage import World, true_z
from curation.measure._posterior import _per_draw
from curation.measure._selfcheck import check_interval, checked_bootstrap


def _errors(rng: np.random.Generator, sd: float, shift: float = 0.0, n: int = 200) -> np.ndarray:
    return rng.normal(shift, sd, n)


def test_an_interval_whose_coverage_is_in_band_is_left_alone() -> None:
    rng = np.random.default_rng(0)
    iv = Interval(mean=0.5, low=0.5 - 1.645 * 0.02, high=0.5 + 1.645 * 0.02, estimate=0.5)
    errors = {"smooth": _errors(rng, 0.02), "lattice": _errors(rng, 0.02)}
    out, check = check_interval(0.5, iv, errors)
    assert check.status == "ok" and out == iv
    assert 0.85 <= check.coverage <= 0.95  # a normal ±1.645 SD interval


def test_a_too_narrow_interval_is_widened_to_the_nominal_level_held_out() -> None:
    rng = np.random.default_rng(1)
    iv = Interval(mean=0.5, low=0.49, high=0.51, estimate=0.5)  # ±0.5 SD of the errors
    errors = {"smooth": _errors(rng, 0.02), "lattice": _errors(rng, 0.02)}
    out, check = check_interval(0.5, iv, errors)
    assert check.status == "widened" and check.raw_coverage < 0.5
    # The equal-tailed 90% interval of N(0, 0.02) is ±0.033: the factor is about 3.3.
    assert 2.5 < check.scale_low < 4.5 and 2.5 < check.scale_high < 4.5
    assert out.low < 0.475 and out.high > 0.525
    # The printed coverage is held out; a fresh set of errors agrees with it.
    fresh = 0.5 - _errors(np.random.default_rng(2), 0.02, n=4000)
    achieved = float(np.mean((out.low <= fresh) & (fresh <= out.high)))
    assert abs(achieved - check.coverage) < 0.06
    assert achieved >= 0.85


def test_a_one_sided_miss_widens_only_that_side() -> None:
    rng = np.random.default_rng(3)
    iv = Interval(mean=0.1, low=0.08, high=0.12, estimate=0.1)
    lattice = _errors(rng, 0.01, shift=-0.05)  # the truth sits ~0.05 above the plug-in
    errors = {"smooth": _errors(rng, 0.01), "lattice": lattice}
    out, check = check_interval(0.1, iv, errors)
    assert check.status == "widened"
    assert check.scale_high > 2.5 > check.scale_low
    assert out.high > 0.16 and out.low > 0.07


def test_an_interval_that_needs_more_than_max_widening_is_withheld_with_a_reason() -> None:
    rng = np.random.default_rng(4)
    iv = Interval(mean=0.1, low=0.099, high=0.101, estimate=0.1)
    errors = {"smooth": _errors(rng, 0.05), "lattice": _errors(rng, 0.05)}
    out, check = check_interval(0.1, iv, errors, max_widening=8.0)
    assert check.status == "withheld" and not check.printed
    assert check.reason is not None and "8× wider" in check.reason


def _two_pl_cells(rng: np.random.Generator, m: int, n: int, trials: int):
    theta, b = World(n_models=m, n_items=n, n_trials=trials).draw(rng)
    a = np.exp(rng.normal(0.0, 0.3, n))
    mi, ii = (x.ravel() for x in np.meshgrid(np.arange(m), np.arange(n), indexing="ij"))
    k = rng.binomial(trials, expit(a[ii] * (theta[mi] - b[ii]))).astype(np.float64)
    cells = Cells(
        tuple(f"m{j}" for j in range(m)), tuple(f"i{i}" for i in range(n)), mi, ii, k,
        np.full(mi.size, float(trials)),
    )  # fmt: skip
    return cells, theta, b


@pytest.mark.long(seconds=40)
def test_printed_coverage_matches_the_coverage_achieved_on_a_2pl_truth() -> None:
    """40 benchmarks of 12 models × 100 items, 4 trials, a 2PL truth (not the 1PL fitted,
    nor either self-check truth): DDM and Max Gap intervals that are printed hold the
    truth about as often as they say (within 0.12: 40 worlds, binomial SD ≈ 0.05)."""
    said: dict[str, list[float]] = {"ddm": [], "max_gap": []}
    held: dict[str, list[float]] = {"ddm": [], "max_gap": []}
    for w in range(40):
        rng = np.random.default_rng([29, w])
        cells, theta, b = _two_pl_cells(rng, 12, 100, 4)
        out, _, _ = checked_bootstrap(cells, replicates=39, worlds=30, seed=w)
        truth = np.sort(true_z(theta, b))[None, :]
        for name in said:
            check = out.self_check[name]  # type: ignore[index]
            if not check.printed:
                continue
            iv = getattr(out, name)
            t = float(_per_draw(truth, name, "uniform")[0])
            said[name].append(check.coverage_smooth)
            held[name].append(float(iv.low <= t <= iv.high))
    for name in said:
        assert len(said[name]) >= 30, name  # most intervals are printed at this shape
        achieved = float(np.mean(held[name]))
        assert achieved >= 0.80, (name, achieved)
        assert abs(achieved - float(np.mean(said[name]))) <= 0.12, name


def test_self_check_and_panel_reach_the_metrics_report_and_card() -> None:
    """One small benchmark through the real functions: the gaps record validates against
    schemas/gaps_metrics.schema.json, and the report and the card print the coverage, the
    other-panel sentence and the leave-one-out figure."""
    from dataclasses import replace

    from curation.irt import leave_one_model_out_z, panel_bootstrap
    from curation.measure import measure_benchmark, render_gaps_report
    from curation.measure._panel import panel_uncertainty
    from curation.publish._card_uncertainty import uncertainty_lines
    from curation.schemas import validate_records

    cells, _, _ = _two_pl_cells(np.random.default_rng(5), 8, 60, 4)
    out, z, _ = checked_bootstrap(cells, replicates=19, worlds=12, seed=0)
    panel = panel_uncertainty(
        z,
        cells.models,
        resampled=panel_bootstrap(cells, replicates=12, seed=0),
        loo=leave_one_model_out_z(cells),
    )
    out = replace(out, panel=panel)
    m = measure_benchmark(z, name="tiny", intervals=out)
    record = m.to_metrics()
    validate_records([record], "gaps_metrics", file="metrics/gaps.json")
    check = record["intervals"]["ddm"]["self_check"]
    assert check["worlds"] == 12 and check["status"] in ("ok", "widened", "narrowed", "withheld")
    report = render_gaps_report([m], title="t")
    assert "## Panel uncertainty" in report
    assert "another panel of 8 similar models would give DDM in [" in report
    assert f"covers {check['coverage_smooth']:.2f} / {check['coverage_lattice']:.2f}" in report
    assert "85–95%" not in report
    card = "\n".join(uncertainty_lines(record["intervals"]))
    assert "Another panel of 8 similar models would give DDM in [" in card
    assert record["intervals"]["panel"]["loo"]["most_influential_model"] in card
