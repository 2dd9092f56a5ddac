"""The guessing floor (3PL) and the identified 2PL scale (issue 29), against known truth."""

from __future__ import annotations

import numpy as np
import pytest

from curation.irt import FitSettings
from curation.irt._checks import spearman
from curation.irt._data import Cells
from curation.irt._floor import equivalent_b, fit_map_3pl, item_floors
from curation.irt._guess import floor_loglik, floor_terms
from curation.irt._map import fit_map_1pl, fit_map_2pl
from curation.irt._threads import kernel_threads


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """The solvers called directly (the public fits pin BLAS themselves)."""
    with kernel_threads():
        yield


def _cells(k: np.ndarray, n: np.ndarray | None = None) -> Cells:
    m, i = k.shape
    mi, ii = np.nonzero(np.ones((m, i)))
    n = np.ones((m, i)) if n is None else n
    return Cells(
        tuple(f"m{j}" for j in range(m)),
        tuple(f"i{j}" for j in range(i)),
        mi.astype(np.int32),
        ii.astype(np.int32),
        k[mi, ii].astype(np.float64),
        n[mi, ii].astype(np.float64),
    )


def _world(
    m: int, i: int, *, c: float, seed: int, log_a_sd: float = 0.3
) -> tuple[Cells, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, 1.5, m)
    theta -= theta.mean()
    b = rng.normal(0.5, 1.5, i)
    a = np.exp(rng.normal(0.0, log_a_sd, i))
    p = c + (1.0 - c) / (1.0 + np.exp(-a * (theta[:, None] - b)))
    return _cells((rng.random((m, i)) < p).astype(float)), theta, b, a


def test_floor_terms_are_the_derivatives_of_the_floor_likelihood():
    rng = np.random.default_rng(0)
    eta = rng.normal(0, 3, 200)
    n = rng.integers(1, 5, 200).astype(float)
    k = np.floor(rng.random(200) * (n + 1))
    c = rng.choice([0.0, 0.2, 0.5], 200)
    h = 1e-5

    def ll(e: np.ndarray) -> np.ndarray:
        return np.array([floor_loglik(k[j], n[j], e[j], c[j]) for j in range(e.size)])

    score = (ll(eta + h) - ll(eta - h)) / (2 * h)
    curv = -(ll(eta + h) - 2 * ll(eta) + ll(eta - h)) / h**2
    w_obs, r = floor_terms(k, n, eta, c, observed=True)
    w_fisher, r2 = floor_terms(k, n, eta, c, observed=False)
    np.testing.assert_allclose(r, score, atol=1e-6)
    np.testing.assert_allclose(r2, r)
    np.testing.assert_allclose(w_obs, curv, atol=1e-4)
    # Fisher: the expectation of the observed curvature over k ~ Binomial(n, P)
    p = c + (1 - c) / (1 + np.exp(-eta))
    expected = sum(
        floor_terms(np.full(200, kk), n, eta, c, observed=True)[0]
        * np.where(kk <= n, _binom_pmf(kk, n, p), 0.0)
        for kk in range(5)
    )
    np.testing.assert_allclose(w_fisher, expected, atol=1e-10)
    # without a floor: the logistic model's k - n p and n p (1 - p)
    zero = np.zeros(200)
    w0, r0 = floor_terms(k, n, eta, zero, observed=True)
    s = 1 / (1 + np.exp(-eta))
    np.testing.assert_allclose(r0, k - n * s, atol=1e-12)
    np.testing.assert_allclose(w0, n * s * (1 - s), atol=1e-12)


def _binom_pmf(k: int, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    from scipy.stats import binom

    return binom.pmf(k, n, p)


def test_2pl_scale_is_identified_when_models_outnumber_items():
    """2,000 models x 100 items: N(0, 3^2) theta and N(0, 0.5^2) log a priors alone shrank
    the abilities to 0.62 of the truth's scale and inflated every a by e^0.51 (the
    issue's leaderboard mechanism); with mean log a = 0 the scale is the truth's."""
    rng = np.random.default_rng(3)
    m, i = 2000, 100
    theta = rng.normal(0, 1.5, m)
    theta -= theta.mean()
    b = rng.normal(0, 1.5, i)
    a = np.exp(rng.normal(0, 0.4, i))
    a /= np.exp(np.log(a).mean())  # the truth on the identified scale
    p = 1 / (1 + np.exp(-a * (theta[:, None] - b)))
    cells = _cells((rng.random((m, i)) < p).astype(float))
    fit = fit_map_2pl(cells, FitSettings())
    assert fit.converged and fit.a is not None
    assert abs(float(np.mean(np.log(fit.a)))) < 1e-9
    slope = float(np.polyfit(theta, fit.theta, 1)[0])
    assert 0.95 < slope < 1.05, slope  # abilities on the true scale, not squeezed
    assert np.corrcoef(np.log(fit.a), np.log(a))[0, 1] > 0.9
    assert fit.a.max() < 1.5 * a.max()


@pytest.mark.parametrize("layout", ["dense", "chunked"])
def test_3pl_recovers_a_guessing_world(layout: str):
    cells, theta, b, _ = _world(400, 150, c=0.2, seed=5)
    s = FitSettings(layout=layout)
    fit = fit_map_3pl(cells, s, np.full(150, 0.2))
    assert fit.converged and fit.c is not None and np.all(fit.c == 0.2)
    assert spearman(fit.theta, theta) > 0.95
    assert np.corrcoef(fit.b, b)[0, 1] > 0.95
    two = fit_map_2pl(cells, s)
    assert fit.loglik > two.loglik + 50  # the floor is in the data


def test_dense_and_matrix_free_3pl_find_the_same_mode():
    cells, *_ = _world(300, 80, c=0.25, seed=8)
    floor = np.full(80, 0.25)
    dense = fit_map_3pl(cells, FitSettings(layout="dense"), floor)
    big = fit_map_3pl(cells, FitSettings(layout="chunked"), floor)
    assert dense.converged and big.converged
    np.testing.assert_allclose(big.b, dense.b, atol=1e-6)
    np.testing.assert_allclose(big.theta, dense.theta, atol=1e-6)


def test_unknown_floors_share_one_estimated_floor():
    cells, theta, *_ = _world(500, 120, c=0.2, seed=11)
    floor = np.full(120, np.nan)
    floor[:20] = 0.2  # known for a few items: held fixed
    fit = fit_map_3pl(cells, FitSettings(), floor)
    assert fit.converged and fit.c is not None
    np.testing.assert_array_equal(fit.c[:20], 0.2)
    shared = fit.c[20:]
    assert np.all(shared == shared[0]) and abs(shared[0] - 0.2) < 0.03, shared[0]
    # the floor is the joint mode: refitting with it fixed changes nothing
    fixed = fit_map_3pl(cells, FitSettings(), fit.c)
    np.testing.assert_allclose(fixed.b, fit.b, atol=1e-6)


def test_no_guessing_world_gives_a_small_shared_floor():
    """A 2PL truth (no floor): the estimated shared floor stays near zero, pulled only
    by its Beta prior, and the 3PL's likelihood is no better than the 2PL's."""
    cells, *_ = _world(500, 100, c=0.0, seed=13)
    fit = fit_map_3pl(cells, FitSettings(), np.full(100, np.nan))
    assert fit.c is not None and fit.c[0] < 0.06
    two = fit_map_2pl(cells, FitSettings())
    assert fit.loglik - two.loglik < 10


def test_equivalent_b_is_the_1pl_location_with_the_same_panel_score():
    rng = np.random.default_rng(2)
    theta = rng.normal(0, 1.5, 50)
    b = rng.normal(0, 1.5, 30)
    a = np.exp(rng.normal(0, 0.4, 30))
    c = np.full(30, 0.2)
    eq = equivalent_b(theta, b, a, c)
    target = c[:, None] + (1 - c[:, None]) / (1 + np.exp(-a[:, None] * (theta - b[:, None])))
    got = (1 / (1 + np.exp(-(theta - eq[:, None])))).sum(axis=1)
    np.testing.assert_allclose(got, target.sum(axis=1), rtol=1e-10)
    # a 1PL item is its own equivalent; a floor makes an item easier to this panel
    np.testing.assert_allclose(equivalent_b(theta, b, None, None), b, atol=1e-9)
    assert np.all(eq < equivalent_b(theta, b, a, np.zeros(30)))


def test_item_floors_from_records():
    floors = item_floors(
        ["mc", "mc-no-list", "free", "unknown"],
        {"mc": ["A", "B", "C", "D", "E"], "mc-no-list": None, "free": None},
        {"mc": "choice", "mc-no-list": "choice", "free": "numeric"},
    )
    assert floors[0] == 0.2 and floors[2] == 0.0
    assert np.isnan(floors[1]) and np.isnan(floors[3])


def test_1pl_unchanged_by_the_floor_machinery():
    """A 3PL with every floor 0 is the 2PL (same mode)."""
    cells, *_ = _world(60, 40, c=0.0, seed=1)
    two = fit_map_2pl(cells, FitSettings())
    zero = fit_map_3pl(cells, FitSettings(), np.zeros(40))
    np.testing.assert_allclose(zero.b, two.b, atol=1e-8)
    assert fit_map_1pl(cells, FitSettings()).a is None


def test_a_3pl_fit_flows_through_the_stored_fit_bootstrap_and_resolution():
    """The gaps stage's path for a 3PL calibration: the stored z is reproduced by the
    bootstrap's refit (floors held), every replicate is on the 1PL-equivalent axis, and
    the score steps bracket each item's location."""
    import polars as pl

    from curation.irt import fit
    from curation.measure._fitted import FittedBenchmark

    cells, *_ = _world(40, 60, c=0.2, seed=21)
    responses = pl.DataFrame(
        {
            "model": [cells.models[j] for j in cells.mi],
            "item": [cells.items[i] for i in cells.ii],
            "n_trials": cells.n.astype(int),
            "n_correct": cells.k.astype(int),
        }
    )
    floor = {item: 0.2 for item in cells.items[:50]}  # the last 10: unknown, shared floor
    result = fit(responses, model="3pl", floor=floor).as_written()
    items = result.items
    assert items["c"].null_count() == 0
    known = items["item"].is_in(list(floor))
    assert (items.filter(known)["c"] == 0.2).all()
    shared = items.filter(~known)["c"].to_numpy()
    assert shared.size == 10
    np.testing.assert_allclose(shared, float(result.diagnostics["shared_floor"]), atol=1e-9)
    # b is the axis location: z maps it, and a floor makes an item easier than its curve
    np.testing.assert_allclose(items["z"], result.calibration.to_z(items["b"].to_numpy()))
    free = items.filter(pl.col("bound").is_null())
    assert (free["b"] < free["b_curve"]).mean() > 0.9
    stored = FittedBenchmark.load(responses, result.calibration, items)
    intervals, z_hat = stored.bootstrap(replicates=8, seed=0)  # raises if z is not reproduced
    np.testing.assert_allclose(z_hat, stored.z, atol=1e-6)
    res = stored.resolution()
    inside = (stored.z > 0) & (stored.z < 1)
    assert np.all(res.step_up[inside] >= 0) and np.all(res.step_down[inside] >= 0)
    # one expected correct answer of 40 moves an item by a fraction of the panel range
    assert 0 < res.resolution < 0.2


def test_new_items_land_where_a_refit_puts_them_on_a_3pl_scale():
    """Online calibration of held-back items against the bank's abilities agrees with
    the full 3PL fit that included them (abilities barely move with 5 items of 125)."""
    import polars as pl

    from curation.irt import calibrate_items, fit

    cells, *_ = _world(300, 125, c=0.2, seed=17)
    frame = pl.DataFrame(
        {
            "model": [cells.models[j] for j in cells.mi],
            "item": [cells.items[i] for i in cells.ii],
            "n_trials": cells.n.astype(int),
            "n_correct": cells.k.astype(int),
        }
    )
    new = list(cells.items[-5:])
    floor = dict.fromkeys(cells.items, 0.2)
    full = fit(frame, model="3pl", floor=floor)
    bank = fit(frame.filter(~pl.col("item").is_in(new)), model="3pl", floor=floor)
    assert bank.calibration.settings["new_item_floor"] == 0.2
    got = calibrate_items(
        frame.filter(pl.col("item").is_in(new)), bank.calibration, model="3pl"
    ).sort("item")
    want = full.items.filter(pl.col("item").is_in(new)).sort("item")
    assert got["c"].to_list() == [0.2] * 5
    np.testing.assert_allclose(got["z"], want["z"], atol=0.02)
    np.testing.assert_allclose(got["b_curve"], want["b_curve"], atol=0.15)
    np.testing.assert_allclose(
        got["z"], bank.calibration.to_z(got["b"].to_numpy())
    )  # b is the axis location
