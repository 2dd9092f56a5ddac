"""Multidimensional IRT: recovery, choice of d, rotations, flip attribution, the stage."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from scipy.optimize import approx_fprime
from scipy.special import expit

from curation.errors import ConfigError
from curation.irt.mirt import (
    MirtData,
    MirtFit,
    MirtPriorSettings,
    benchmark_profiles,
    build_report,
    congruence,
    find_flips,
    fit_loglik,
    fit_mirt,
    flip_attribution,
    holdout_mask,
    item_contributions,
    oblimin,
    pool_responses,
    procrustes,
    render_mirt_markdown,
    rotate_fit,
    select_dimension,
    simulate_mirt,
    varimax,
)
from curation.irt.mirt._fit import _Objective
from curation.schemas import validate_record
from tests.conftest import minimal_benchmark, params_of

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def sim2():
    """40 models x 2,000 items x 2 dimensions, 4 trials per cell."""
    sim = simulate_mirt(40, 2000, 2, seed=7, n_trials=4)
    return sim, fit_mirt(sim.data, 2)


def _long(models, items, k, n):
    rows = [
        (m, it, int(n[j, i]), int(k[j, i]))
        for j, m in enumerate(models)
        for i, it in enumerate(items)
        if n[j, i] > 0
    ]
    return pl.DataFrame(rows, schema=["model", "item", "n_trials", "n_correct"], orient="row")


def _random_orthogonal(d, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))
    return q


# --------------------------------------------------------------------------- fit


def test_gradient_is_analytic_and_right():
    sim = simulate_mirt(6, 15, 2, seed=1, n_trials=3, missing_share=0.2)
    obj = _Objective(sim.data, 2, MirtPriorSettings())
    x = np.random.default_rng(2).normal(0, 0.7, size=6 * 2 + 15 * 2 + 15)
    f, g = obj(x)
    num = approx_fprime(x, lambda z: obj(z)[0], 1e-7)
    assert np.allclose(g, num, atol=1e-6, rtol=1e-4)
    assert np.isfinite(f)


def test_recovery_congruence_after_procrustes(sim2):
    sim, fit = sim2
    assert fit.converged
    rotated, r = procrustes(fit.loadings, sim.loadings)
    assert np.allclose(r.T @ r, np.eye(2), atol=1e-10)
    cong = congruence(rotated, sim.loadings)
    assert cong.min() >= 0.95, cong
    # abilities come along with the same rotation
    theta = fit.theta @ r
    for k in range(2):
        assert np.corrcoef(theta[:, k], sim.theta[:, k])[0, 1] > 0.95
    assert np.corrcoef(fit.difficulty, sim.difficulty)[0, 1] > 0.9


def test_recovery_single_trial_is_information_limited():
    # one Bernoulli response per cell: 40 responses per item bound per-item loading
    # precision (an oracle knowing theta reaches ~0.90); the fit should be close.
    sim = simulate_mirt(40, 2000, 2, seed=3, n_trials=1)
    fit = fit_mirt(sim.data, 2)
    assert congruence(procrustes(fit.loadings, sim.loadings)[0], sim.loadings).min() >= 0.85


def test_standardised_solution_and_missing_cells():
    sim = simulate_mirt(30, 300, 2, seed=4, n_trials=2, missing_share=0.3)
    fit = fit_mirt(sim.data, 2)
    assert np.allclose(fit.theta.mean(axis=0), 0, atol=1e-10)
    assert np.allclose(fit.theta.T @ fit.theta / 30, np.eye(2), atol=1e-8)
    gram = fit.loadings.T @ fit.loadings
    assert abs(gram[0, 1]) < 1e-8 and gram[0, 0] >= gram[1, 1]
    assert fit_loglik(fit, sim.data) == pytest.approx(fit.loglik)
    # warm start from the optimum lands on the same posterior
    again = fit_mirt(sim.data, 2, start=fit)
    assert again.log_posterior == pytest.approx(fit.log_posterior, rel=1e-7)


# --------------------------------------------------------------------------- choice of d


@pytest.mark.parametrize("d_true", [1, 2, 3])
def test_select_dimension_picks_true_d(d_true):
    sim = simulate_mirt(40, 600, d_true, seed=100 * d_true)
    sel = select_dimension(sim.data, d_max=4, holdout=0.1, seed=d_true)
    assert sel.d_heldout == d_true
    assert sel.chosen == d_true
    assert [r.d for r in sel.rows] == [1, 2, 3, 4]
    best = max(sel.rows, key=lambda r: r.heldout_loglik)
    assert best.heldout_gap == 0
    # train likelihood only grows with d; BIC is reported for every d
    train = [r.train_loglik for r in sel.rows]
    assert all(b > a for a, b in zip(train, train[1:], strict=False))
    assert all(np.isfinite(r.bic) for r in sel.rows)


def test_holdout_mask_is_seeded_and_keeps_training_cells():
    sim = simulate_mirt(10, 50, 1, seed=0, missing_share=0.2)
    a = holdout_mask(sim.data, 0.2, seed=5)
    assert np.array_equal(a, holdout_mask(sim.data, 0.2, seed=5))
    assert not np.array_equal(a, holdout_mask(sim.data, 0.2, seed=6))
    assert not (a & ~sim.data.present).any()
    train = sim.data.present & ~a
    assert train.sum(axis=0).min() >= 2 and train.sum(axis=1).min() >= 2
    assert 0.1 < a.sum() / sim.data.present.sum() < 0.3


# --------------------------------------------------------------------------- rotations


def test_varimax_is_an_orthogonal_rotation_of_its_input():
    a = np.random.default_rng(0).normal(size=(200, 3))
    rotated, r = varimax(a)
    assert np.allclose(r.T @ r, np.eye(3), atol=1e-10)
    assert np.allclose(rotated, a @ r)

    def crit(x):
        h = np.sqrt((x**2).sum(axis=1, keepdims=True))
        z = (x / h) ** 2
        return float(((z - z.mean(axis=0)) ** 2).sum())

    assert crit(rotated) >= crit(a) - 1e-12


def test_varimax_recovers_a_rotated_simple_structure():
    rng = np.random.default_rng(1)
    simple = np.zeros((300, 3))
    simple[np.arange(300), np.arange(300) % 3] = rng.uniform(0.8, 2.0, 300)
    simple += rng.uniform(0, 0.1, simple.shape)
    rotated, _ = varimax(simple @ _random_orthogonal(3, 2))
    # up to column order and sign
    c = np.abs(congruence(*np.broadcast_arrays(rotated[:, :, None], simple[:, None, :])))
    assert np.sort(c.max(axis=0)).min() > 0.99


def test_oblimin_returns_consistent_transform():
    rng = np.random.default_rng(3)
    simple = np.zeros((300, 2))
    simple[np.arange(300), np.arange(300) % 2] = rng.uniform(0.8, 2.0, 300)
    lam, t, phi = oblimin(simple @ np.array([[1.0, 0.4], [0.2, 1.0]]))
    assert np.allclose(lam, simple @ np.array([[1.0, 0.4], [0.2, 1.0]]) @ np.linalg.inv(t).T)
    assert np.allclose(np.diag(phi), 1.0)
    assert np.allclose(phi, t.T @ t)
    # simple structure: each row has one dominant loading
    ratio = np.sort(np.abs(lam), axis=1)
    assert np.median(ratio[:, 0] / ratio[:, 1]) < 0.05


@pytest.mark.parametrize("method", ["varimax", "oblimin", "none"])
def test_rotation_leaves_the_likelihood_unchanged(sim2, method):
    sim, fit = sim2
    rotated = rotate_fit(fit, method)
    assert rotated.rotation == method
    assert np.allclose(rotated.probabilities(), fit.probabilities(), atol=1e-10)
    assert fit_loglik(rotated, sim.data) == pytest.approx(fit.loglik, rel=1e-12)
    t = rotated.rotation_matrix
    assert np.allclose(rotated.theta, fit.theta @ t)
    if method != "oblimin":
        assert np.allclose(t.T @ t, np.eye(2), atol=1e-10)
        assert np.allclose(rotated.loadings, fit.loadings @ t)
    assert np.allclose(np.diag(rotated.factor_corr), 1.0)
    with pytest.raises(ValueError):
        rotate_fit(rotated, "varimax")


# --------------------------------------------------------------------------- flips


def _flip_case() -> MirtFit:
    """X: 100 items on dim 1. Y: 60 items on dim 1 (Y1) + 40 items on dim 2 (Y2).
    A = (1, -1.5) beats B = (0, 1.5) on X and on Y1; Y2 alone hands Y to B."""
    a = np.zeros((200, 2))
    a[:100, 0] = 1.5
    a[100:160, 0] = 1.5
    a[160:, 1] = 3.0
    items = tuple(f"X/x{i}" for i in range(100)) + tuple(
        f"Y/{'y1' if i < 60 else 'y2'}_{i}" for i in range(100)
    )
    return MirtFit(
        models=("A", "B"),
        items=items,
        benchmarks=("X", "Y"),
        item_benchmark=np.repeat([0, 1], 100),
        theta=np.array([[1.0, -1.5], [0.0, 1.5]]),
        loadings=a,
        difficulty=np.zeros(200),
        loglik=0.0,
        log_posterior=0.0,
        n_cells=0,
        iterations=0,
        converged=True,
        seconds=0.0,
        priors=MirtPriorSettings(),
    )


def test_flip_attribution_on_a_constructed_case():
    fit = _flip_case()
    flip = flip_attribution(fit, None, "A", "B", "X", "Y", n_items=40)
    assert flip.is_flip
    p = expit(fit.logits())
    assert flip.lead_a == pytest.approx(p[0, :100].mean() - p[1, :100].mean())
    assert flip.lead_b == pytest.approx(p[1, 100:].mean() - p[0, 100:].mean())
    # the 40 largest contributions are exactly block Y2
    assert {it.item for it in flip.items} == {f"y2_{i}" for i in range(60, 100)}
    assert all(it.benchmark == "Y" for it in flip.items)
    # contributions and the per-dimension split add up exactly
    contrib, in_pair = item_contributions(fit, "A", "B", "X", "Y")
    assert contrib[in_pair].sum() == pytest.approx(flip.size)
    assert sum(flip.by_dimension_a) == pytest.approx(flip.lead_a)
    assert sum(flip.by_dimension_b) == pytest.approx(flip.lead_b)
    # B's lead on Y comes from dimension 2, against dimension 1
    assert flip.by_dimension_b[1] > flip.lead_b > 0 > flip.by_dimension_b[0]
    assert flip.by_dimension_a == pytest.approx((flip.lead_a, 0.0))
    # the other way round it is not a flip
    assert not flip_attribution(fit, None, "B", "A", "X", "Y").is_flip


def test_flip_found_and_attributed_after_fitting():
    truth = _flip_case()
    rng = np.random.default_rng(11)
    theta = np.vstack([truth.theta, rng.standard_normal((38, 2))])
    sim = simulate_mirt(
        40,
        200,
        2,
        seed=12,
        n_trials=8,
        loadings=truth.loadings,
        theta=theta,
        difficulty=rng.normal(0, 0.5, 200),
        benchmarks=("X", "Y"),
    )
    models = ("A", "B") + sim.data.models[2:]
    data = MirtData(
        models, truth.items, ("X", "Y"), truth.item_benchmark, sim.data.correct, sim.data.trials
    )
    fit = rotate_fit(fit_mirt(data, 2), "varimax")
    flip = flip_attribution(fit, data, "A", "B", "X", "Y", n_items=20)
    assert flip.is_flip
    share_y2 = np.mean([it.item.startswith("y2") for it in flip.items])
    assert share_y2 >= 0.8
    flips = find_flips(fit, data, n=3)
    assert flips and all(f.is_flip for f in flips)


# --------------------------------------------------------------------------- pooling, report, stage


def test_pool_responses_keys_models_and_drops():
    k = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 1]])
    n = np.ones_like(k)
    a = _long(["m1", "m2", "m3"], ["1", "2", "3"], k, n)  # item 3: all solved
    b = _long(["m1", "m2", "m4"], ["1", "2"], np.array([[1, 0], [0, 1], [1, 1]]), np.ones((3, 2)))
    data = pool_responses({"a": a, "b": b}, common_models=True)
    assert data.models == ("m1", "m2")
    assert data.items == ("a/1", "a/2", "b/1", "b/2")
    assert data.dropped["items_constant"] == 1 and data.dropped["models_not_common"] == 2
    assert data.item_label(2) == ("b", "1")
    union = pool_responses({"a": a, "b": b}, common_models=False, drop_constant_items=False)
    assert union.models == ("m1", "m2", "m3", "m4")
    assert union.n_items == 5 and union.missing_share > 0
    assert union.trials[union.models.index("m4"), union.items.index("a/1")] == 0
    few = pool_responses({"a": a, "b": b}, common_models=False, min_models_per_item=3)
    assert few.dropped["items_few_models"] == 0
    with pytest.raises(ValueError, match="missing column"):
        pool_responses({"a": a.drop("n_trials")})


def _write_benchmarks(root, sim):
    for b, name in enumerate(sim.data.benchmarks):
        cols = sim.data.item_benchmark == b
        items = [key.split("/", 1)[1] for key in np.array(sim.data.items)[cols]]
        df = _long(sim.data.models, items, sim.data.correct[:, cols], sim.data.trials[:, cols])
        path = root / "data" / "responses" / f"{name}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        df.write_parquet(path)


def test_report_and_stage_end_to_end(tmp_path, monkeypatch):
    from pipelines import mirt as stage

    a = np.zeros((300, 2))
    a[:150, 0] = 1.5
    a[150:, 1] = 1.5
    sim = simulate_mirt(30, 300, 2, seed=5, n_trials=2, loadings=a, benchmarks=("alpha", "beta"))
    _write_benchmarks(tmp_path, sim)
    monkeypatch.chdir(tmp_path)
    params = {
        "benchmarks": {"alpha": minimal_benchmark("alpha"), "beta": minimal_benchmark("beta")},
        "mirt": {
            "d_max": 3,
            "holdout": 0.1,
            "seed": 1,
            "rotation": "varimax",
            "min_models_per_item": 5,
        },
    }
    line = stage.run(params_of(params))
    assert "chosen d = 2" in line
    metrics = json.loads((tmp_path / "metrics/mirt.json").read_text())
    assert validate_record(metrics, "mirt_metrics") is None
    assert metrics["d_chosen"] == 2 and len(metrics["selection"]) == 3
    # two benchmarks built on two different dimensions land on different dimensions
    dims = metrics["benchmark_dimensions"]
    assert dims["alpha"][0] != dims["beta"][0]
    assert metrics["benchmark_cosine"]["alpha"]["beta"] < 0.5
    md = (tmp_path / "reports/mirt.md").read_text()
    assert "held-out loglik / cell" in md and "not named skills" in md
    for name in ("loadings", "models", "selection"):
        assert (tmp_path / f"plots/mirt/{name}.png").stat().st_size > 1000
    loadings = pl.read_parquet(tmp_path / "data/mirt/loadings.parquet")
    assert loadings.height == 300 and {"benchmark", "item", "a1", "a2", "difficulty"} <= set(
        loadings.columns
    )

    with pytest.raises(ConfigError, match="unknown setting"):
        stage.run(params_of({**params, "mirt": {"dmax": 3}}))
    with pytest.raises(ConfigError, match="rotation"):
        stage.run(params_of({**params, "mirt": {"rotation": "promax"}}))


def test_report_on_one_dimension_uses_d2_as_exploratory():
    sim = simulate_mirt(30, 300, 1, seed=9, benchmarks=("p", "q"))
    sel = select_dimension(sim.data, d_max=2, holdout=0.1, seed=0)
    assert sel.chosen == 1
    report = build_report(sim.data, sel)
    assert report.analysis_d == 2 and report.fit.d == 1
    assert [p.loads_on for p in benchmark_profiles(report.fit)] == [(1,), (1,)]
    assert "exploratory" in render_mirt_markdown(report)
