"""DDM is exact: checked against independent quadrature and scipy's W1."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats

from curation.measure import UNIFORM, Beta, Histogram, Sample, ddm, parse_target

GRID_M = 2_000_000
GRID = (np.arange(GRID_M) + 0.5) / GRID_M
"""Midpoints of a fine uniform grid: W1(grid, Unif) = 1/(4M) = 1.25e-7."""

rng = np.random.default_rng(20240501)
CASES = {
    "random-50": rng.random(50),
    "random-400": rng.random(400),
    "beta-skewed": rng.beta(0.6, 3.0, 120),
    "ties": np.repeat([0.1, 0.35, 0.35, 0.8], 7),
    "single": np.array([0.3]),
    "all-zero": np.zeros(9),
    "all-one": np.ones(5),
    "ends": np.array([0.0, 0.0, 1.0]),
}


def _ecdf(zs: np.ndarray):
    zs = np.sort(zs)
    return lambda x: np.searchsorted(zs, x, side="right") / zs.size


def _quad_pieces(zs: np.ndarray, integrand, extra_breaks=()) -> float:
    """∫₀¹ integrand over pieces between the sorted z and any extra break points."""
    pts = np.unique(np.concatenate([[0.0, 1.0], zs, np.asarray(extra_breaks, dtype=float)]))
    pts = pts[(pts >= 0) & (pts <= 1)]
    total = 0.0
    for lo, hi in zip(pts[:-1], pts[1:], strict=True):
        val, _ = integrate.quad(integrand, lo, hi, epsabs=1e-15, epsrel=1e-13, limit=200)
        total += val
    return total


def _quad_uniform(z: np.ndarray) -> float:
    """∫|F_n(x) − x|dx by quadrature; the kinks at x = i/n are added as break points."""
    f = _ecdf(z)
    n = z.size
    return _quad_pieces(z, lambda x: abs(f(x) - x), np.arange(n + 1) / n)


@pytest.mark.parametrize("name", sorted(CASES))
def test_uniform_matches_quadrature(name: str) -> None:
    z = CASES[name]
    assert ddm(z) == pytest.approx(_quad_uniform(z), abs=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_uniform_matches_scipy_on_fine_grid(name: str) -> None:
    z = CASES[name]
    assert abs(ddm(z) - stats.wasserstein_distance(z, GRID)) < 1e-6


@pytest.mark.parametrize("z0", [0.0, 0.3, 0.5, 1.0])
def test_single_item_closed_form(z0: float) -> None:
    assert ddm([z0]) == pytest.approx(0.5 * z0**2 + 0.5 * (1 - z0) ** 2, abs=1e-15)


def test_all_at_an_end_is_one_half() -> None:
    assert ddm(np.zeros(13)) == pytest.approx(0.5, abs=1e-15)
    assert ddm(np.ones(13)) == pytest.approx(0.5, abs=1e-15)


def test_evenly_spread_items_hit_the_minimum() -> None:
    # Items at (i - 1/2)/n are the W1-optimal n-point quantisation: DDM = 1/(4n).
    n = 37
    z = (np.arange(n) + 0.5) / n
    assert ddm(z) == pytest.approx(1 / (4 * n), abs=1e-15)


def _beta_quad(z: np.ndarray, a: float, b: float) -> float:
    """Quadrature of |F_n − I_x(a, b)| with the crossings found by bracketing (brentq)."""
    zs = np.sort(z)
    f = _ecdf(zs)
    pts = np.unique(np.concatenate([[0.0, 1.0], zs]))
    crossings = []
    for lo, hi in zip(pts[:-1], pts[1:], strict=True):
        c = f(lo)
        g = lambda x, c=c: special.betainc(a, b, x) - c  # noqa: E731
        if g(lo) < 0 < g(hi):
            crossings.append(optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15))
    return _quad_pieces(zs, lambda x: abs(f(x) - special.betainc(a, b, x)), crossings)


@pytest.mark.parametrize("ab", [(2.0, 5.0), (0.5, 0.5), (5.0, 1.5), (1.0, 3.0), (30.0, 30.0)])
@pytest.mark.parametrize("name", ["random-50", "beta-skewed", "ties", "single", "all-one"])
def test_beta_matches_quadrature(ab: tuple[float, float], name: str) -> None:
    z = CASES[name]
    assert ddm(z, Beta(*ab)) == pytest.approx(_beta_quad(z, *ab), abs=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_beta_one_one_is_uniform(name: str) -> None:
    assert ddm(CASES[name], Beta(1, 1)) == pytest.approx(ddm(CASES[name]), abs=1e-13)


HISTOGRAMS = [
    Histogram((0.0, 0.25, 0.5, 1.0), (1.0, 3.0, 2.0)),
    Histogram((0.2, 0.5, 0.9), (2.0, 1.0)),
    Histogram((0.0, 0.3, 0.31, 1.0), (0.0, 5.0, 1.0)),
    Histogram((0.0, 1.0), (7.0,)),
]


@pytest.mark.parametrize("hist", HISTOGRAMS, ids=lambda h: str(h.edges))
@pytest.mark.parametrize("name", ["random-50", "random-400", "ties", "single", "all-zero"])
def test_histogram_matches_quadrature(hist: Histogram, name: str) -> None:
    z = CASES[name]
    f = _ecdf(z)
    g = hist.cdf
    # The crossings of a piecewise-linear CDF with a level c: add every level's preimage.
    levels = np.unique(f(np.concatenate([[0.0], z])))
    xs, cum = hist.knots
    crossings = [np.interp(c, cum, xs) for c in levels if 0 < c < 1]
    expected = _quad_pieces(z, lambda x: abs(f(x) - g(x)), list(xs) + crossings)
    assert ddm(z, hist) == pytest.approx(expected, abs=1e-12)


def test_one_bin_histogram_is_uniform() -> None:
    z = CASES["random-400"]
    assert ddm(z, Histogram((0.0, 1.0), (3.0,))) == pytest.approx(ddm(z), abs=1e-15)
    assert ddm(z, UNIFORM) == ddm(z, "uniform")


@pytest.mark.parametrize("other", ["random-50", "ties", "single", "all-one", "ends"])
@pytest.mark.parametrize("name", ["random-400", "beta-skewed", "all-zero", "single"])
def test_sample_matches_scipy_exactly(name: str, other: str) -> None:
    z, y = CASES[name], CASES[other]
    expected = stats.wasserstein_distance(z, y)
    assert ddm(z, y) == pytest.approx(expected, abs=1e-12)
    assert ddm(z, Sample(tuple(y))) == pytest.approx(expected, abs=1e-12)
    assert ddm(y, z) == pytest.approx(expected, abs=1e-12)


def test_distance_to_itself_is_zero() -> None:
    z = CASES["random-50"]
    assert ddm(z, z) == 0.0


@pytest.mark.parametrize(
    ("z", "message"),
    [
        ([], "empty"),
        ([0.2, np.nan], "NaN"),
        ([0.2, 1.5], "outside"),
        ([-0.1], "outside"),
        ([[0.1, 0.2]], "shape"),
        (0.5, "scalar"),
    ],
)
def test_bad_z_is_a_clear_error(z, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ddm(z)


@pytest.mark.parametrize(
    "target",
    ["normal", {"kind": "beta", "a": 1}, {"kind": "gauss"}, [], [2.0]],
    ids=["unknown-name", "missing-key", "unknown-kind", "empty-sample", "bad-sample"],
)
def test_bad_target_is_a_clear_error(target) -> None:
    with pytest.raises(ValueError):
        ddm([0.5], target)


def test_target_validation() -> None:
    with pytest.raises(ValueError, match="Beta.a"):
        Beta(0, 1)
    with pytest.raises(ValueError, match="increasing"):
        Histogram((0.0, 0.5, 0.5), (1.0, 1.0))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        Histogram((0.0, 1.5), (1.0,))
    with pytest.raises(ValueError, match="weights"):
        Histogram((0.0, 0.5, 1.0), (1.0,))


def test_parse_target_forms() -> None:
    assert parse_target("uniform") == UNIFORM
    assert parse_target("Beta(2, 5)") == Beta(2, 5)
    assert parse_target("beta:0.5,0.5") == Beta(0.5, 0.5)
    assert parse_target({"kind": "beta", "a": 2, "b": 3}) == Beta(2, 3)
    h = parse_target({"kind": "histogram", "edges": [0, 0.5, 1], "weights": [1, 3]})
    assert isinstance(h, Histogram) and h.probabilities.tolist() == [0.25, 0.75]
    s = parse_target({"kind": "sample", "values": [0.1, 0.2], "name": "AIME 24"})
    assert isinstance(s, Sample) and s.key == "sample_aime_24"
    assert Beta(0.5, 2).key == "beta_0p5_2"
