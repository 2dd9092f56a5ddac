"""Bootstrap estimates and intervals: closed forms, the point-inside guarantee, the split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from curation.measure import Interval, bootstrap_interval, ddm, max_gap, summarize_bootstrap
from curation.measure import top_k_sum as tks


def test_constant_error_is_removed_exactly() -> None:
    """If every replicate overstates by 0.04, the estimate is the plug-in minus 0.04."""
    iv = bootstrap_interval(0.30, np.full(50, 0.04), level=0.9)
    assert iv.point == pytest.approx(0.26) and iv.low == pytest.approx(0.26)
    assert iv.high == pytest.approx(0.26)


def test_basic_interval_reflects_the_error_quantiles() -> None:
    errors = np.linspace(-0.01, 0.09, 99)  # i/(R+1) positions: 5% = 5th, 95% = 95th value
    q05, q50, q95 = errors[4], errors[49], errors[94]
    iv = bootstrap_interval(0.5, errors, level=0.9)
    assert iv.low == pytest.approx(0.5 - q95) and iv.high == pytest.approx(0.5 - q05)
    assert iv.point == pytest.approx(0.5 - q50)
    plain = bootstrap_interval(0.5, errors, level=0.9, bias_correct=False)
    assert plain.point == 0.5
    assert plain.low == pytest.approx(0.5 - (q95 - q50))
    assert plain.high == pytest.approx(0.5 - (q05 - q50))


def test_few_replicates_still_cover_an_exchangeable_error() -> None:
    """Ground truth: if the real error is one more draw from the replicates' distribution,
    the interval holds it with probability ≈ level, even with R = 39 replicates (the
    i/(R+1) plotting position; linear interpolation would give ≈ 0.86)."""
    rng = np.random.default_rng(0)
    hits = []
    for _ in range(4000):
        errors = rng.standard_normal(40)
        iv = bootstrap_interval(0.5, 0.05 * errors[1:], level=0.9)
        hits.append(iv.low <= 0.5 - 0.05 * errors[0] <= iv.high)
    assert np.mean(hits) == pytest.approx(0.9, abs=0.015)


def test_values_are_clipped_to_the_metric_range() -> None:
    iv = bootstrap_interval(0.02, np.array([0.05, 0.06, 0.07]))
    assert iv.low == iv.point == 0.0 and 0.0 <= iv.high


@settings(max_examples=200, deadline=None)
@given(
    point=st.floats(0.0, 1.0),
    errors=st.lists(st.floats(-1.0, 1.0), min_size=2, max_size=40),
    level=st.floats(0.5, 0.99),
    correct=st.booleans(),
)
def test_the_point_is_always_inside_its_interval(point, errors, level, correct) -> None:
    iv = bootstrap_interval(point, np.array(errors), level, bias_correct=correct)
    assert iv.low <= iv.point <= iv.high


def test_an_interval_that_excludes_its_point_is_rejected() -> None:
    """The failure the issue found in a report (DDM 0.361 [0.345, 0.351]) cannot be built."""
    with pytest.raises(ValueError, match="outside its own interval"):
        Interval(mean=0.361, low=0.345, high=0.351)


def _expected(point: float, errors: np.ndarray, level: float) -> tuple[float, float, float]:
    """(point, low, high) by the documented rule, computed independently."""
    tail = (1 - level) / 2
    lo, mid, hi = np.quantile(errors, [tail, 0.5, 1 - tail], method="weibull")
    if abs(mid) > 2.0 * np.std(errors, ddof=1):  # a clear bias: the basic interval
        return point - mid, point - hi, point - lo
    # else: the plug-in, the plug-in-centred interval widened by |mid| beyond its noise
    shift = max(abs(mid) - 1.2533 * np.std(errors, ddof=1) / np.sqrt(errors.size), 0.0)
    return point, point - (hi - mid) - shift, point - (lo - mid) + shift


def test_summarize_bootstrap_matches_the_scalar_metrics() -> None:
    rng = np.random.default_rng(2)
    z_hat = rng.random(60)
    z_true = np.clip(z_hat + rng.normal(0, 0.02, (30, 60)), 0, 1)
    z_refit = np.clip(z_true + rng.normal(0, 0.02, (30, 60)), 0, 1)
    out = summarize_bootstrap(z_hat, z_true, z_refit, level=0.8)
    assert out.method == "bootstrap" and out.n_draws == 30 and out.target == "uniform"
    for name, fn in (("max_gap", max_gap), ("top_3_sum", lambda z: tks(z, 3)), ("ddm", ddm)):
        errors = np.array([fn(a) - fn(b) for a, b in zip(z_refit, z_true, strict=True)])
        point, low, high = _expected(fn(z_hat), errors, 0.8)
        iv = getattr(out, name)
        assert (iv.point, iv.low, iv.high) == pytest.approx((point, low, high)), name
    lattice = np.round(z_hat * 8) / 8  # a coarse plug-in: its large gap bias is removed
    fixed = summarize_bootstrap(lattice, z_true, z_refit + 0.0, level=0.8)
    assert fixed.max_gap.point <= max_gap(lattice)


def test_the_bias_rule_corrects_only_a_bias_large_against_the_noise() -> None:
    rng = np.random.default_rng(3)
    noise = rng.standard_normal(200)
    small = bootstrap_interval(0.3, 0.01 * noise + 0.01, bias_correct=None)  # bias 1 SD
    large = bootstrap_interval(0.3, 0.01 * noise + 0.05, bias_correct=None)  # bias 5 SD
    zero = bootstrap_interval(0.3, 0.01 * (noise - np.median(noise)), bias_correct=None)
    assert small.point == 0.3
    plain = bootstrap_interval(0.3, 0.01 * noise + 0.01, bias_correct=False)
    # A 1 SD bias is kept in the point but widens the interval on both sides ...
    assert small.low < plain.low and small.high > plain.high
    # ... by itself less its noise (SE of the median, 0.089 SD at R = 200).
    width = (small.high - small.low) - (plain.high - plain.low)
    assert width == pytest.approx(2 * (abs(np.median(0.01 * noise + 0.01)) - 0.00089), abs=2e-4)
    # No bias: no widening.
    flat = bootstrap_interval(0.3, 0.01 * (noise - np.median(noise)), bias_correct=False)
    assert (zero.low, zero.high) == pytest.approx((flat.low, flat.high))
    assert large.point == pytest.approx(0.3 - 0.05 - 0.01 * np.median(noise), abs=1e-3)


def test_summarize_bootstrap_checks_shapes() -> None:
    with pytest.raises(ValueError, match="replicates"):
        summarize_bootstrap(np.zeros(3), np.zeros((2, 3)), np.zeros((3, 3)))
