"""curation.estimate: full-benchmark scores from subsets, checked against known truth."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from curation.errors import InputError
from curation.estimate import (
    EstimationSettings,
    ItemBank,
    estimate,
    estimate_models,
    make_folds,
    select,
    validate,
)
from curation.irt import fit
from curation.subsets import model_scores
from tests.estimate._world import world

FAST = EstimationSettings(draws=1000, random_draws=1)


@pytest.mark.parametrize("design", ["random", EstimationSettings().design])
@pytest.mark.parametrize("irt_model", ["1pl", "2pl"])
def test_held_out_interval_coverage_is_near_nominal(irt_model: str, design: str) -> None:
    """90% intervals cover the true full score of 85-95% of 150 held-out models (5 folds,
    60-item subsets of 400 items, random and the default estimation design, truth with
    model x item interactions)."""
    resp = world(irt_model)
    v = validate(resp, 60, design=design, settings=FAST, model=irt_model, baseline={})  # type: ignore[arg-type]
    assert v.n_models == 150
    irt = v.estimators["irt"]
    assert 0.85 <= irt.coverage <= 0.95, irt
    assert irt.spearman is not None and irt.spearman > 0.95
    # the estimate is not worse than the plain accuracy of the same random items
    assert irt.mae_pp <= v.estimators["raw"].mae_pp + 0.1


def test_full_run_is_the_exact_score_with_zero_width(bank_1pl) -> None:
    bank, test = bank_1pl
    one = test.filter(pl.col("model") == "m120")
    est = estimate(bank, one, settings=FAST)
    truth = model_scores(one)["m120"]
    assert est.exact and est.n_unseen == 0
    assert est.estimate == pytest.approx(truth, abs=1e-12)
    assert est.low == est.high == est.estimate
    assert est.model == "m120"


def test_mixed_trial_counts_score_like_model_scores(bank_1pl) -> None:
    """Per-item rates averaged over items, whatever each item's trial count."""
    bank, _ = bank_1pl
    rng = np.random.default_rng(3)
    trials = rng.integers(1, 6, bank.n_items)
    correct = rng.binomial(trials, 0.6)
    frame = pl.DataFrame(
        {"model": "new", "item": list(bank.items), "n_trials": trials, "n_correct": correct}
    )
    est = estimate(bank, frame, settings=FAST)
    assert est.estimate == pytest.approx(model_scores(frame)["new"], abs=1e-12)
    assert est.width == 0.0
    part = estimate(bank, frame.head(50), settings=FAST)
    assert part.n_seen == 50 and part.low < part.estimate < part.high


def test_estimate_beats_raw_accuracy_on_a_difficulty_uniform_subset() -> None:
    """On a benchmark of mostly easy items, a subset spread evenly over the b range
    (nearest unused item to each of 80 evenly spaced b) has another mean difficulty:
    its plain accuracy is off, the IRT estimate is not."""
    resp = world("1pl", skewed=True)
    models = sorted(resp["model"].unique().to_list())
    train = resp.filter(pl.col("model").is_in(models[:120]))
    test = resp.filter(pl.col("model").is_in(models[120:]))
    bank = ItemBank.from_fit(fit(train, model="1pl"), benchmark="sim")
    free = np.ones(bank.n_items, dtype=bool)
    for t in np.linspace(bank.b.min(), bank.b.max(), 80):
        i = int(np.argmin(np.where(free, np.abs(bank.b - t), np.inf)))
        free[i] = False
    items = [bank.items[i] for i in np.flatnonzero(~free)]
    raw_err, irt_err = [], []
    for name, truth in model_scores(test).items():
        sub = test.filter((pl.col("model") == name) & pl.col("item").is_in(items))
        est = estimate(bank, sub, settings=FAST)
        raw_err.append(abs(est.subset_accuracy - truth))
        irt_err.append(abs(est.estimate - truth))
    assert np.mean(irt_err) < 0.5 * np.mean(raw_err)
    assert np.mean(irt_err) < 0.05


def test_rank_interval_holds_the_true_rank_mostly(bank_1pl) -> None:
    bank, test = bank_1pl
    panel = np.sort(bank.panel_scores)
    hits = 0
    scores = model_scores(test)
    for name, truth in scores.items():
        sub = test.filter(pl.col("model") == name).sample(80, seed=1)
        est = estimate(bank, sub, settings=FAST)
        true_rank = 1 + int(np.sum(panel > truth))
        hits += est.rank_low <= true_rank <= est.rank_high
        assert est.rank_low <= est.rank <= est.rank_high
        assert est.n_panel == bank.theta.size
    assert hits >= 0.8 * len(scores)


def test_theta_and_z_follow_the_calibration(bank_1pl) -> None:
    bank, test = bank_1pl
    est = estimate(bank, test.filter(pl.col("model") == "m121").head(100), settings=FAST)
    assert est.theta_low < est.theta < est.theta_high
    assert bank.calibration is not None
    assert est.z == pytest.approx(float(bank.calibration.to_z(np.array([est.theta]))[0]))
    assert est.z_low is not None and est.z_high is not None and est.z_low <= est.z <= est.z_high
    d = est.to_dict()
    assert d["estimator"] == "irt" and d["level"] == 0.9


def test_seeded_and_level_is_a_parameter(bank_1pl) -> None:
    bank, test = bank_1pl
    sub = test.filter(pl.col("model") == "m122").head(40)
    a = estimate(bank, sub, settings=FAST)
    assert estimate(bank, sub, settings=FAST) == a
    wide = estimate(bank, sub, settings=FAST.model_copy(update={"level": 0.99}))
    assert wide.low < a.low and wide.high > a.high


@pytest.mark.parametrize("correct", [0, 1])
def test_nothing_right_or_everything_right(bank_1pl, correct: int) -> None:
    bank, _ = bank_1pl
    items = list(bank.items[:60])
    frame = pl.DataFrame({"item": items, "n_trials": 1, "n_correct": correct})
    est = estimate(bank, frame, settings=FAST)
    assert 0.0 <= est.low <= est.estimate <= est.high <= 1.0
    assert np.isfinite(est.theta)
    if correct:
        assert est.rank_low == 1 and est.estimate > np.median(bank.panel_scores)
    else:
        assert est.rank_high == est.n_panel + 1 and est.estimate < np.median(bank.panel_scores)


def test_one_item(bank_1pl) -> None:
    bank, _ = bank_1pl
    est = estimate(bank, {bank.items[0]: (1, 1)}, settings=FAST)
    assert est.n_seen == 1 and est.n_unseen == bank.n_items - 1
    assert 0.0 < est.low < est.high < 1.0


def test_unknown_item_is_one_input_error_naming_it(bank_1pl) -> None:
    bank, _ = bank_1pl
    frame = pl.DataFrame(
        {"item": [bank.items[0], "nope-7"], "n_trials": [1, 1], "n_correct": [1, 0]}
    )
    with pytest.raises(InputError, match="item 'nope-7' is not an item of benchmark sim"):
        estimate(bank, frame)


def test_bad_counts_and_several_models_are_input_errors(bank_1pl) -> None:
    bank, test = bank_1pl
    with pytest.raises(InputError, match="n_correct"):
        estimate(bank, {bank.items[0]: (1, 2)})
    with pytest.raises(InputError, match="estimate_models"):
        estimate(bank, test)
    assert [e.model for e in estimate_models(bank, test.head(900), settings=FAST)] == [
        "m120",
        "m121",
        "m122",
    ]


@pytest.mark.parametrize("design", ["random", "anchor", "stratified", "information", "quantile"])
def test_designs_are_seeded_and_weighted(bank_1pl, design: str) -> None:
    bank, test = bank_1pl
    d = select(design, bank, 30, seed=4, responses=test)  # type: ignore[arg-type]
    assert d.m == 30 and len(set(d.items)) == 30 and set(d.items) <= set(bank.items)
    assert select(design, bank, 30, seed=4, responses=test) == d  # type: ignore[arg-type]
    if design in ("anchor", "stratified"):
        assert d.weights is not None and sum(d.weights) == pytest.approx(1.0)
        w = estimate(
            bank,
            test.filter((pl.col("model") == "m123") & pl.col("item").is_in(list(d.items))),
            estimator="weighted",
            weights=d.weight_map(),
            settings=FAST,
        )
        assert w.estimator == "weighted" and w.low <= w.estimate <= w.high
    else:
        assert d.weights is None
    with pytest.raises(ValueError, match="m must be"):
        select(design, bank, bank.n_items + 1)  # type: ignore[arg-type]


def test_quantile_design_is_the_calibrated_subset(bank_1pl) -> None:
    """``quantile`` picks what the subsets stage publishes (match_quantiles on the
    calibration's z), whatever the seed: a difficulty-uniform subset, not a sample."""
    from curation.subsets import match_quantiles

    bank, _ = bank_1pl
    assert bank.calibration is not None
    z = bank.calibration.to_z(bank.b)
    want = match_quantiles(bank.items, z, target="uniform", m=40).items
    for seed in (0, 1):
        assert set(select("quantile", bank, 40, seed=seed).items) == set(want)
    beta = select("quantile", bank, 40, target="beta(2,5)").items
    assert set(beta) != set(want)


def _score_variance(bank: ItemBank, items: list[str]) -> float:
    """Mean over the panel's theta range of S'(theta)^2 / (prior + subset information)."""
    grid = np.linspace(bank.theta.min(), bank.theta.max(), 41)
    p = bank.p(grid)
    slope = (bank.a * p * (1.0 - p)).mean(axis=1)
    cols = [bank.index()[i] for i in items]
    info = (bank.a[cols] ** 2 * p[:, cols] * (1.0 - p[:, cols])).sum(axis=1)
    prior = 1.0 / np.std(bank.theta, ddof=1) ** 2
    return float((slope**2 / (prior + info)).mean())


def test_information_design_beats_random_items_on_its_objective(bank_1pl) -> None:
    """The greedy design's score variance is below every one of 20 random 40-item draws."""
    bank, _ = bank_1pl
    chosen = _score_variance(bank, list(select("information", bank, 40).items))
    drawn = [
        _score_variance(bank, list(select("random", bank, 40, seed=s).items)) for s in range(20)
    ]
    assert chosen < min(drawn)


def test_validation_record_and_folds() -> None:
    resp = world("1pl", n_models=40, n_items=200, seed=2)
    folds = make_folds(resp, folds=4, seed=0)
    assert sorted(m for f in folds for m in f.test) == sorted(resp["model"].unique())
    assert all(not set(f.test) & set(f.train) for f in folds)
    v = validate(resp, 25, design="stratified", settings=FAST, folds=folds)
    assert set(v.estimators) == {"irt", "raw", "weighted"}
    assert set(v.random) == {"irt", "raw"} and v.random_draws == 1
    d = v.to_dict()
    assert d["n_models"] == 40 and len(d["models"]) == 40 and d["folds"] == 4
    assert len(d["estimators"]["irt"]["fold_mae_pp"]) == 4
    assert v.floor_pp > 0 and v.seconds_per_fold > 0


def test_settings_are_strict() -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        EstimationSettings(levle=0.9)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        EstimationSettings(level=1.0)


@pytest.mark.parametrize("m", [60, 100, 150])
def test_anchor_on_a_1pl_embedding_fills_every_cluster(bank_1pl, m: int) -> None:
    """The IRT embedding of a 1PL bank is a curve (one point per b): k-means empties
    several clusters in one step, and refilling them moved one point twice (a crash, or a
    NaN centre, on math-l5). Every cluster keeps a member: m distinct items, weights
    summing to 1."""
    bank, _ = bank_1pl
    for seed in range(3):
        d = select("anchor", bank, m, seed=seed, embedding="irt")
        assert d.weights is not None and len(set(d.items)) == m
        assert sum(d.weights) == pytest.approx(1.0) and min(d.weights) > 0
