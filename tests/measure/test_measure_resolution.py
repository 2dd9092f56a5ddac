"""Resolution and anchoring: levels, score steps, clipped items, resolved gaps and flags."""

from __future__ import annotations

import numpy as np
import pytest

from curation.irt import fit, simulate_responses
from curation.irt._data import encode
from curation.measure import Gap, Panel, Resolution, measure_benchmark, resolution_of_fit

PANEL = Panel(theta_min=-2.0, theta_max=2.0, weakest="weak", strongest="strong", n_models=5)


def lattice(step: float = 0.05) -> Resolution:
    """Items on a lattice with spacing ``step``, one score step apart, one level missing."""
    z = np.array([0.0, 0.0, 0.10, 0.15, 0.20, 0.30, 0.35, 0.40, 1.0])
    return Resolution.from_steps(
        z, np.clip(z - step, 0, 1), np.clip(z + step, 0, 1), panel=PANEL, trials_per_cell=1
    )


def test_counts_levels_and_clipping() -> None:
    r = lattice()
    assert r.n_levels == 8 and r.n_clipped_low == 2 and r.n_clipped_high == 1
    assert r.share_clipped_low == pytest.approx(2 / 9)
    assert r.resolution == pytest.approx(0.05) and r.panel.span == 4.0
    m = r.to_metrics()
    assert m["n_clipped_low"] == 2 and m["panel"]["weakest"] == "weak"


def test_a_gap_of_one_score_step_is_not_resolved() -> None:
    r = lattice()
    assert not r.resolves(Gap(0.10, 0.15))  # consecutive levels
    assert r.resolves(Gap(0.20, 0.30))  # a score level with no item: two steps
    assert r.resolves(Gap(0.40, 1.00))
    assert r.gap_step(Gap(0.40, 1.00)) == pytest.approx(0.05)


def test_flags_use_resolved_gaps_only() -> None:
    """A lattice of spacing 0.12 has a 0.12 Max Gap that is only resolution: not flagged."""
    z = np.round(np.arange(0.0, 1.0 + 1e-9, 0.12), 6)
    r = Resolution.from_steps(
        z, np.clip(z - 0.12, 0, 1), np.clip(z + 0.12, 0, 1), panel=PANEL, trials_per_cell=1
    )
    plain = measure_benchmark(z)
    floored = measure_benchmark(z, resolution=r)
    assert plain.flags.max_gap and not floored.flags.max_gap
    assert floored.blind == () and not any(floored.resolved)
    assert floored.unresolved_blind == len(plain.blind) > 0
    assert r.cannot_resolve(0.10)
    continuous = measure_benchmark(z, resolution=r, resolution_floor=False)
    assert continuous.flags.max_gap and continuous.resolution is r


def test_resolution_of_a_fit_matches_its_score_lattice() -> None:
    """Single trials, complete design: z levels = distinct total scores; clipped at 0 = the
    items with b below the weakest ability; one step ≈ 1 / (information · span)."""
    df, _ = simulate_responses(n_models=15, n_items=400, n_trials=1, seed=8)
    res = fit(df)
    cells = encode(df)
    b = res.items["b"].to_numpy()
    r = resolution_of_fit(cells, res.calibration, b)
    z = res.items["z"].to_numpy()
    k = np.bincount(cells.ii, weights=cells.k, minlength=cells.n_items)
    assert np.allclose(r.z, z)
    assert r.n_levels == np.unique(np.round(z, 9)).size <= np.unique(k).size
    theta = res.models["theta"].to_numpy()
    assert r.n_clipped_low == int(np.sum(b <= theta.min()))
    assert r.n_clipped_high == int(np.sum(b >= theta.max()))
    inside = (z > 0) & (z < 1)
    p = 1 / (1 + np.exp(-(theta[:, None] - b[None, inside])))
    info = (p * (1 - p)).sum(axis=0) + 1 / 9
    approx = np.median(1 / (info * (theta.max() - theta.min())))
    assert r.resolution == pytest.approx(approx, rel=0.1)
    assert r.panel.span == pytest.approx(theta.max() - theta.min())


def test_more_trials_make_the_axis_finer() -> None:
    one = simulate_responses(n_models=10, n_items=300, n_trials=1, seed=9)[0]
    eight = simulate_responses(n_models=10, n_items=300, n_trials=8, seed=9)[0]
    r1 = resolution_of_fit(encode(one), fit(one).calibration, fit(one).items["b"].to_numpy())
    r8 = resolution_of_fit(encode(eight), fit(eight).calibration, fit(eight).items["b"].to_numpy())
    assert r8.n_levels > 3 * r1.n_levels
    assert r8.resolution < r1.resolution / 4
