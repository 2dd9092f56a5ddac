"""Subsets as full-score estimators (issue 28): the `subsets` stage's ``estimate-<m>``
subsets and the held-out validation of every subset, the card's sentences, and
``curate estimate --subset``.

The stage runs on a matrix-only benchmark (a response matrix, no item texts: 30 models x
120 items drawn from a 1PL), so it also shows such a benchmark gets the same figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml

from curation.estimate import EstimationSettings
from curation.publish._card_estimation import estimation_lines, estimation_sentence
from tests.conftest import TOY_PARAMS, add_imports_dir, copy_project
from tests.stage_cli import run_stage

N_MODELS, N_ITEMS = 30, 120
REPO = Path(__file__).resolve().parents[2]


def _matrix() -> pl.DataFrame:
    rng = np.random.default_rng(7)
    theta = rng.normal(0.0, 1.2, N_MODELS)
    b = rng.normal(-1.5, 0.7, N_ITEMS)  # easy-heavy: a uniform-z subset is not the full mix
    p = 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    y = (rng.random((N_MODELS, N_ITEMS)) < p).astype(int)
    return pl.DataFrame(
        {"model": [f"m{j:02d}" for j in range(N_MODELS)]}
        | {f"it{i:03d}": y[:, i] for i in range(N_ITEMS)}
    )


def _params() -> dict:
    params = yaml.safe_load(TOY_PARAMS)
    params["benchmarks"] = {
        "lb": {
            "domain": "leaderboard",
            "license": "CC-BY-4.0",
            "source": "a leaderboard's per-sample matrix (tests)",
            "items": {"texts": False, "path": "raw/lb.csv"},
            "responses": {"path": "raw/lb.csv", "layout": "wide", "n_trials": 1},
        }
    }
    params["annotate"] = {"loo": False, "laplace_draws": 50}
    params["subsets"] = {
        "sizes": [30],
        "targets": ["uniform"],
        "reference": "none",
        "estimation": {"sizes": [40, 500], "folds": 3, "random_draws": 20, "draws": 300},
    }
    return params


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The matrix-only project after ingest, responses, annotate and subsets."""
    import contextlib

    root = tmp_path_factory.mktemp("estimation")
    (root / "raw").mkdir()
    _matrix().write_csv(root / "raw" / "lb.csv")
    add_imports_dir(root, "lb")
    (root / "releases").mkdir()
    (root / "params.yaml").write_text(yaml.safe_dump(_params(), sort_keys=False))
    with contextlib.chdir(root):
        for stage in ("ingest", "responses", "annotate", "subsets"):
            assert run_stage([stage, "--benchmark", "lb"]) == 0, stage
    return root


@pytest.fixture
def project(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = copy_project(built, tmp_path / "p")
    monkeypatch.chdir(root)
    return root


def _metrics(root: Path) -> dict:
    return json.loads((root / "metrics/subsets/lb.json").read_text())


def test_matrix_only_benchmark_gets_the_estimation_subset_and_every_block(project: Path):
    import jsonschema

    metrics = _metrics(project)
    schema = json.loads((REPO / "schemas/subsets_metrics.schema.json").read_text())
    jsonschema.validate(metrics, schema)  # the stage's output, against the schema itself

    est = metrics["estimation"]
    assert sorted(est["subsets"]) == ["adaptive-40", "estimate-40"]
    assert "not below the 120 calibrated items" in est["skipped"]["estimate-500"]
    assert "not below the 120 calibrated items" in est["skipped"]["adaptive-500"]
    assert "estimate-500" not in metrics["skipped"]  # the quantile subsets' list is unchanged
    blocks = {
        "uniform-30": metrics["subsets"]["uniform-30"]["estimation"],
        "estimate-40": est["subsets"]["estimate-40"]["estimation"],
        "adaptive-40": est["subsets"]["adaptive-40"]["estimation"],
    }
    assert blocks["adaptive-40"]["design"] == "adaptive"
    assert est["subsets"]["adaptive-40"] | {"estimation": None} == {
        "design": "adaptive",
        "m": 40,
        "n_items": N_ITEMS,
        "weighted": False,
        "start": EstimationSettings().adaptive_start,
        "block": EstimationSettings().adaptive_block,
        "estimation": None,
    }
    # the recommended subset is the estimation subset with the lower held-out error
    best = min(("estimate-40", "adaptive-40"), key=lambda n: blocks[n]["mae_pp"])
    assert est["recommended"] == {"40": best}
    assert blocks["uniform-30"]["design"] == "quantile"  # re-matched in each fold
    default = EstimationSettings().design
    assert blocks["estimate-40"]["design"] == est["design"] == default
    for name, block in blocks.items():
        assert "unavailable" not in block, name
        assert block["folds"] == 3 and block["n_models"] == N_MODELS  # every model held out once
        assert block["random"]["draws"] == 20
        assert block["beats_random"] == (block["mae_pp"] < block["random"]["mae_pp"])
        assert block["mae_pp"] <= block["p90_ae_pp"] + 1e-9 <= block["max_ae_pp"] + 2e-9
        assert 0 < block["mae_pp"] < 15 and block["spearman"] > 0.7, (name, block)
        # the intervals a user gets are the conformally scaled ones, checked across folds
        assert 0 < block["interval_scale"] and 0 <= block["model_coverage"] <= 1
    assert blocks["uniform-30"]["weighted"] is None  # quantile: no weights
    assert blocks["estimate-40"]["weighted"] is not None


def test_the_estimation_subset_file_holds_the_design_on_the_stored_calibration(project: Path):
    from curation.estimate import EstimationSettings, ItemBank, select
    from curation.schemas import validate_frame

    frame = pl.read_parquet(project / "data/subsets/lb/estimate-40.parquet")
    validate_frame(frame, "estimation_subset_item", file="estimate-40")
    assert frame.height == 40 and frame["k"].to_list() == list(range(1, 41))
    assert frame["weight"].sum() == pytest.approx(1.0, abs=1e-6)
    bank = ItemBank.load("lb")
    responses = pl.read_parquet(project / "data/responses/lb.parquet")
    want = select(EstimationSettings().design, bank, 40, seed=0, responses=responses)
    assert tuple(frame["item"]) == want.items
    assert frame["weight"].to_list() == pytest.approx(list(want.weights or ()), abs=1e-6)


def test_the_adaptive_test_file_holds_its_start_budget_step_and_scale(project: Path):
    from curation.estimate import EstimationSettings, ItemBank, load_subset, select
    from curation.schemas import validate_frame

    frame = pl.read_parquet(project / "data/subsets/lb/adaptive-40.parquet")
    validate_frame(frame, "estimation_subset_item", file="adaptive-40")
    s = EstimationSettings()
    assert frame.height == s.adaptive_start == 20
    assert set(frame["m"]) == {40} and set(frame["block"]) == {s.adaptive_block}
    want = select("adaptive", ItemBank.load("lb"), 40, seed=0, start=s.adaptive_start)
    assert tuple(frame["item"]) == want.items
    block = _metrics(project)["estimation"]["subsets"]["adaptive-40"]["estimation"]
    assert frame["interval_scale"].to_list() == pytest.approx([block["interval_scale"]] * 20)
    loaded = load_subset("lb", "adaptive-40")
    assert loaded.adaptive and loaded.budget == 40 and loaded.block == s.adaptive_block
    assert loaded.weights is None
    assert loaded.interval_scale == pytest.approx(block["interval_scale"])
    # a quantile subset's scale comes from the metrics (its file holds items only)
    quantile = load_subset("lb", "calibrated-uniform-30")
    scale = _metrics(project)["subsets"]["uniform-30"]["estimation"]["interval_scale"]
    assert quantile.interval_scale == pytest.approx(scale) and not quantile.adaptive


def test_a_large_panel_scores_a_sample_of_its_held_out_models(project: Path):
    """``max_test_models`` below the panel: a seeded sample, spread over the folds, is
    scored; every block says so with the standard error of its MAE, and the card too."""
    import jsonschema

    from curation.estimate._validate import scored_models
    from curation.subsets import describe

    params = yaml.safe_load((project / "params.yaml").read_text())
    params["subsets"]["estimation"]["max_test_models"] = 12
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert run_stage(["subsets", "--benchmark", "lb"]) == 0
    metrics = _metrics(project)
    schema = json.loads((REPO / "schemas/subsets_metrics.schema.json").read_text())
    jsonschema.validate(metrics, schema)
    block = metrics["subsets"]["uniform-30"]["estimation"]
    assert block["n_models"] == 12 and block["folds"] == 3
    assert block["sampled"]["scored"] == 12 and block["sampled"]["of"] == N_MODELS
    assert 0 < block["sampled"]["mae_se_pp"] < block["mae_pp"]
    assert "12 of 30 models scored, MAE ± " in describe(block)
    card = estimation_lines("lb", [{"config": "calibrated-uniform-30", "target": "uniform",
                                     "estimation": block}], [])  # fmt: skip
    assert any("over 30 panel models, 12 of them scored" in x for x in card)

    groups = [[f"m{i}" for i in range(g, g + n)] for g, n in ((0, 10), (10, 10), (20, 9))]
    picked = scored_models(groups, 12, seed=0)
    assert [len(p) for p in picked] == [4, 4, 4] and picked == scored_models(groups, 12, seed=0)
    assert all(set(p) <= set(g) for p, g in zip(picked, groups, strict=True))
    assert scored_models(groups, 100) == groups


def test_a_panel_too_small_for_the_folds_says_so(project: Path):
    params = yaml.safe_load((project / "params.yaml").read_text())
    params["subsets"]["estimation"]["folds"] = N_MODELS - 1  # needs N_MODELS + 1 models
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    assert run_stage(["subsets", "--benchmark", "lb"]) == 0
    metrics = _metrics(project)
    why = metrics["subsets"]["uniform-30"]["estimation"]["unavailable"]
    assert f"needs at least {N_MODELS + 1} panel models, the panel has {N_MODELS}" in why
    assert metrics["estimation"]["subsets"]["estimate-40"]["estimation"] == {"unavailable": why}
    line = estimation_sentence("calibrated-uniform-30", "lb", {"unavailable": why})
    assert "not validated as a full-score estimator" in line and "panel has 30" in line


def test_curate_estimate_on_a_subset_uses_its_items_and_weights(
    project: Path, capsys: pytest.CaptureFixture[str]
):
    from curation.cli import main

    frame = pl.read_parquet(project / "data/subsets/lb/estimate-40.parquet")
    weights = dict(zip(frame["item"], frame["weight"], strict=True))
    rng = np.random.default_rng(3)  # a new model, answering every item
    answers = pl.DataFrame(
        {
            "model": ["new"] * N_ITEMS,
            "item": [f"it{i:03d}" for i in range(N_ITEMS)],
            "n_trials": [1] * N_ITEMS,
            "n_correct": rng.integers(0, 2, N_ITEMS).tolist(),
        }
    )
    answers.write_csv(project / "new.csv")
    args = ["estimate", "-b", "lb", "--format", "long", "--path", "new.csv"]
    out = project / "est.json"
    weighted = ["--subset", "estimate-40", "--estimator", "weighted", "--out", str(out)]
    assert main([*args, *weighted]) == 0
    printed = capsys.readouterr().out
    assert "subset estimate-40 (40 items" in printed and "80 answered item(s) outside" in printed
    got = json.loads(out.read_text())["estimates"][0]
    assert got["n_seen"] == 40
    on = answers.filter(pl.col("item").is_in(list(weights)))
    truth = sum(weights[i] * k for i, k in zip(on["item"], on["n_correct"], strict=True))
    assert got["estimate"] == pytest.approx(truth, abs=1e-6)  # the weighted accuracy, by hand

    # a quantile subset by its config name: its items only; weighted needs weights
    assert main([*args, "--subset", "calibrated-uniform-30", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["estimates"][0]["n_seen"] == 30
    capsys.readouterr()
    assert main([*args, "--subset", "calibrated-uniform-30", "--estimator", "weighted"]) == 2
    assert "needs the subset's weights" in capsys.readouterr().err


def test_curate_estimate_runs_an_adaptive_test_to_its_budget(
    project: Path, capsys: pytest.CaptureFixture[str]
):
    """The user's loop: answer the adaptive-40 start items, ask `--next`, answer those,
    repeat; each step names block-many unseen items, the last step none, and the interval
    carries the test's conformal scale."""
    from curation.cli import main
    from curation.estimate import load_subset

    test = load_subset("lb", "adaptive-40")
    assert test.budget == 40 and test.block is not None
    rng = np.random.default_rng(11)
    truth = {f"it{i:03d}": int(rng.integers(0, 2)) for i in range(N_ITEMS)}
    asked = list(test.items)
    out = project / "est.json"
    steps = 0
    while True:
        pl.DataFrame(
            {
                "model": ["new"] * len(asked),
                "item": asked,
                "n_trials": [1] * len(asked),
                "n_correct": [truth[i] for i in asked],
            }  # fmt: skip
        ).write_csv(project / "new.csv")
        args = ["estimate", "-b", "lb", "--format", "long", "--path", "new.csv"]
        assert main([*args, "--subset", "adaptive-40", "--next", "--out", str(out)]) == 0
        printed = capsys.readouterr().out
        doc = json.loads(out.read_text())
        nxt = doc["next"]["new"]
        assert doc["estimates"][0]["n_seen"] == len(asked)
        assert doc["estimates"][0]["interval_scale"] == pytest.approx(test.interval_scale)
        assert f"({len(asked)} of 40 items answered)" in printed
        assert len(nxt) == min(test.block, 40 - len(asked))
        assert not set(nxt) & set(asked) and len(set(nxt)) == len(nxt)
        if not nxt:
            assert "none (the test is done)" in printed
            break
        asked += nxt
        steps += 1
    assert len(asked) == 40 and steps == -(-(40 - len(test.items)) // test.block)


# ---- the card ---------------------------------------------------------------------------


def _block(mae: float, rand: float, **over: object) -> dict:
    fig = {"p90_ae_pp": 6.54, "max_ae_pp": 9.87, "rmse_pp": 4.0, "spearman": 0.961,
           "kendall": 0.843, "coverage": 0.88}  # fmt: skip
    block = {
        "design": "anchor", "estimator": "irt", "m": 100, "folds": 5, "n_models": 42,
        "level": 0.9, "mae_pp": mae, **fig,
        "subset_accuracy": {**fig, "mae_pp": 24.02},
        "weighted": None,
        "random": {**fig, "mae_pp": rand, "p90_ae_pp": 4.32, "spearman": 0.912, "draws": 20},
        "beats_random": mae < rand, "floor_pp": 0.65,
    }  # fmt: skip
    return block | over


def test_the_card_sentence_states_the_metrics_numbers():
    text = estimation_sentence("estimate-100", "gsm8k", _block(3.21, 4.56))
    assert (
        "a score on this 100-item subset estimates the full gsm8k score within 3.21 pp on "
        "average (90% of models within 6.54 pp, worst 9.87 pp; Spearman ρ 0.96 and Kendall "
        "τ 0.84 with the full ranking; its 90% intervals hold 88% of the models); 100 random "
        "items: 4.56 pp (90% within 4.32 pp; ρ 0.91" in text
    )
    assert "Worse than random" not in text


def test_a_subset_worse_than_random_says_so():
    text = estimation_sentence("calibrated-uniform-100", "gsm8k", _block(2.08, 1.86))
    assert (
        "**Worse than random:** 100 random items estimate the full score better (1.86 pp "
        "against 2.08 pp)" in text
    )
    # the flag decides, as the stage computed it
    tied = estimation_sentence("x", "gsm8k", _block(1.86, 1.86, beats_random=False))
    assert "Worse than random" in tied


def test_quantile_configs_say_what_they_are_for():
    lines = "\n".join(
        estimation_lines(
            "gsm8k",
            [
                {
                    "config": "calibrated-uniform-100",
                    "target": "uniform",
                    "estimation": _block(2.1, 1.9),
                }
            ],
            [
                {
                    "config": "estimate-100",
                    "design": "anchor",
                    "m": 100,
                    "weighted": True,
                    "estimation": _block(1.5, 1.9),
                }
            ],
        )  # fmt: skip
    )
    quantile = next(x for x in lines.splitlines() if x.startswith("- `calibrated-uniform-100`"))
    assert "difficulty-balanced benchmark" in quantile
    assert "its plain accuracy is not the full score" in quantile
    assert "off by 24.02 pp on average" in quantile
    assert "`curate estimate --subset calibrated-uniform-100`" in quantile
    estimate = next(x for x in lines.splitlines() if x.startswith("- `estimate-100`"))
    assert "within 1.50 pp on average" in estimate and "Worse than random" not in estimate
    assert "5-fold leave-models-out over 42 panel models" in lines


def test_a_subset_table_with_a_repeated_item_names_it(tmp_path: Path) -> None:
    """The first repeated item (in sort order) is named, with the file and the field."""
    from curation.errors import InputError
    from curation.estimate import load_subset

    table = tmp_path / "mine.csv"
    pl.DataFrame({"item": ["c", "b", "a", "c", "b"], "weight": [1.0] * 5}).write_csv(table)
    with pytest.raises(InputError) as err:
        load_subset("lb", str(table))
    assert "item 'b' repeats" in str(err.value) and err.value.field == "item"
    assert str(table) in str(err.value)
