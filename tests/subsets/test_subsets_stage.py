"""Rank agreement, the ``subsets:`` params section, and the `subsets` stage end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from curation.errors import ConfigError, InputError
from curation.measure import ddm
from curation.params import load_params
from curation.schemas import conform, validate_frame
from curation.subsets import (
    ReferenceRanking,
    ReferenceSettings,
    SubsetsSettings,
    model_scores,
    rank_agreement,
)
from pipelines import subsets as stage
from tests.conftest import params_of


def _responses(benchmark: str, table: dict[str, list[int]], n_trials: int = 2) -> pl.DataFrame:
    rows = [
        {
            "benchmark": benchmark,
            "model": model,
            "item": f"i{j}",
            "n_trials": n_trials,
            "n_correct": c,
            "source": "imported",
        }
        for model, cells in table.items()
        for j, c in enumerate(cells)
    ]
    return conform(pl.DataFrame(rows), "response")


def test_model_scores_and_tau():
    resp = _responses("b", {"w": [0, 0, 1], "m": [1, 0, 2], "s": [2, 2, 2]})
    assert model_scores(resp) == pytest.approx({"w": 1 / 6, "m": 0.5, "s": 1.0})
    assert model_scores(resp, ["i0"]) == pytest.approx({"w": 0.0, "m": 0.5, "s": 1.0})
    ref = ReferenceRanking.from_order(["s", "m", "w"])
    assert rank_agreement(model_scores(resp), ref).tau == pytest.approx(1.0)
    assert rank_agreement(model_scores(resp), ReferenceRanking.from_order(["w", "m", "s"])).tau == (
        pytest.approx(-1.0)
    )
    few = rank_agreement({"s": 1.0, "w": 0.0}, ref)
    assert few.tau is None and "2 model(s) in common" in few.note


def test_mean_rank_uses_shared_models_only():
    ref = ReferenceRanking.mean_rank(
        {"a": {"x": 0.9, "y": 0.5, "z": 0.1, "only-a": 1.0}, "b": {"x": 0.2, "y": 0.8, "z": 0.1}}
    )
    assert ref.ranks == {"x": 1.5, "y": 1.5, "z": 3.0}
    assert ref.label == "mean rank over a, b"


def _subsets(section: dict[str, object], *benchmarks: str) -> SubsetsSettings:
    """``subsets:`` as the stages read it: the validated params file's section."""
    from curation.params_model import validate_params
    from tests.conftest import minimal_benchmark

    names = benchmarks or ("b",)
    raw = {"benchmarks": {b: minimal_benchmark(b) for b in names}, "subsets": section}
    return validate_params(raw).subsets


def test_config_names_overrides_and_errors():
    section = {
        "sizes": [10, 20],
        "targets": [
            "uniform",
            "beta(2, 5)",
            {"kind": "benchmark", "benchmark": "other-b"},
            {"name": "bins", "kind": "histogram", "edges": [0, 0.5, 1], "weights": [1, 3]},
        ],
        "benchmarks": {"small": {"sizes": [5]}},
    }
    cfg = _subsets(section, "big", "small", "other-b")
    assert [n for n, _, _ in cfg.names_for("big")][:4] == [
        "uniform-10",
        "uniform-20",
        "beta_2_5-10",
        "beta_2_5-20",
    ]
    assert {t.name for t in cfg.targets_for("big")} == {"uniform", "beta_2_5", "other-b", "bins"}
    assert cfg.reference_for("big") == ReferenceSettings(kind="domain")
    assert cfg.sizes_for("small") == (5,) and cfg.sizes_set_for("small")
    assert cfg.sizes_for("big") == (10, 20) and not cfg.sizes_set_for("big")
    assert _subsets({"sizes": [7, 3, 7]}).sizes_for("b") == (7, 3)
    assert _subsets({"sizes": 4}).sizes_for("b") == (4,)
    assert _subsets({}).sizes_for("b") == (50,)  # the default the stage always used
    assert _subsets({"reference": "none"}).reference_for("b").kind == "none"
    with pytest.raises(ConfigError, match="sizes"):
        _subsets({"sizes": [0]})
    with pytest.raises(ConfigError, match=r"subsets.targets\[0\]: unknown target"):
        _subsets({"targets": ["gaussian"]})
    with pytest.raises(ConfigError, match="names repeat"):
        _subsets({"targets": ["uniform", {"kind": "uniform"}]})
    with pytest.raises(ConfigError, match="reference.kind"):
        _subsets({"reference": {"kind": "oracle"}})


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"benchmarks": {"nope": {"sizes": [5]}}}, r"\.benchmarks\.nope: not a benchmark"),
        (
            {"targets": ["uniform", {"kind": "benchmark", "benchmark": "nope"}]},
            r"\.targets\[1\]\.benchmark: 'nope' is not a benchmark",
        ),
        (
            {"benchmarks": {"b": {"targets": [{"kind": "benchmark", "benchmark": "x"}]}}},
            r"\.benchmarks\.b\.targets\[0\]\.benchmark: 'x' is not a benchmark",
        ),
        ({"reference": {"kind": "benchmarks", "benchmarks": ["nope"]}}, r"unknown \['nope'\]"),
        ({"reference": {"kind": "benchmarks"}}, r"reference.benchmarks: list at least one"),
        ({"reference": {"kind": "models", "models": ["a"]}}, r"reference.models: list the"),
        ({"reference": {"kind": "domain", "models": ["a", "b"]}}, r"reference.models: only"),
        ({"targets": [{"kind": "benchmark"}]}, r"needs `benchmark: NAME`"),
        ({"targets": [{"name": "Bad Name", "kind": "uniform"}]}, r"must match"),
        ({"targets": []}, r"\.targets: List should have at least 1"),
        (
            {"benchmarks": {"b": {"targets": ["gaussian"]}}},
            r"benchmarks.b.targets\[0\]: unknown target",
        ),
    ],
)
def test_validate_refuses_what_the_stage_would(section: dict[str, object], says: str):
    """Everything the stage used to find wrong in ``subsets:`` (or would trip over, such as
    a target benchmark that is not configured) is a ``curate validate`` error."""
    with pytest.raises(ConfigError, match=rf"^params.yaml: subsets.*{says}"):
        _subsets(section)


PARAMS = """\
benchmarks:
  skew:
    domain: math
    license: MIT
    source: test
    items: {path: raw/skew.jsonl}
  ref:
    domain: math
    license: MIT
    source: test
    items: {path: raw/ref.jsonl}
  lone:
    domain: code
    license: MIT
    source: test
    items: {path: raw/lone.jsonl}
subsets:
  sizes: [15, 500]
  targets: [uniform, {kind: benchmark, benchmark: ref}]
"""


def _write(root: Path, benchmark: str, z: np.ndarray, abilities: dict[str, float]) -> None:
    items = [f"{benchmark}-{i:03d}" for i in range(z.size)]
    (root / "data/difficulty").mkdir(parents=True, exist_ok=True)
    zc = np.clip(z, 1e-3, 1 - 1e-3)
    b = np.log(zc / (1 - zc))  # the stored calibration's b (estimate-<m> subsets read it)
    pl.DataFrame({"benchmark": benchmark, "item": items, "z": z, "b": b}).write_parquet(
        root / f"data/difficulty/{benchmark}.parquet"
    )
    (root / "data/calibration").mkdir(parents=True, exist_ok=True)
    calibration = {
        "format": "benchcurate.irt.calibration/1",
        "benchmark": benchmark,
        "model": "1pl",
        "abilities": {m: float(4 * (t - 0.5)) for m, t in abilities.items()},
        "panel": list(abilities),
        "scale": {"method": "logistic", "c": 0.0, "s": 1.0},
    }
    (root / f"data/calibration/{benchmark}.json").write_text(json.dumps(calibration))
    rows = [
        {
            "benchmark": benchmark,
            "model": m,
            "item": it,
            "n_trials": 4,
            "n_correct": int(np.clip(round(4 * (theta - zi + 0.5)), 0, 4)),
            "source": "imported",
        }
        for m, theta in abilities.items()
        for it, zi in zip(items, z, strict=True)
    ]
    (root / "data/responses").mkdir(parents=True, exist_ok=True)
    conform(pl.DataFrame(rows), "response").write_parquet(
        root / f"data/responses/{benchmark}.parquet"
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "params.yaml").write_text(PARAMS)
    rng = np.random.default_rng(1)
    models = {f"m{k}": a for k, a in enumerate(np.linspace(0.1, 0.9, 6))}
    _write(tmp_path, "skew", np.round(rng.beta(1.0, 5.0, 80), 6), models)
    _write(tmp_path, "ref", np.round(rng.uniform(0.3, 0.7, 40), 6), models)
    _write(tmp_path, "lone", np.round(rng.uniform(0, 1, 30), 6), models)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_stage_writes_subsets_and_metrics(project: Path):
    text = stage.run(params_of(load_params("params.yaml")), "skew")
    assert "skipped uniform-500: m=500 exceeds the 80 items" in text
    uni = pl.read_parquet("data/subsets/skew/uniform-15.parquet")
    validate_frame(uni, "subset_item", file="x")
    assert uni.height == 15 and uni.get_column("item").n_unique() == 15
    assert pl.read_parquet("data/subsets/skew/ref-15.parquet").item(0, "target") == "ref (n=40)"
    metrics = json.loads(Path("metrics/subsets/skew.json").read_text())
    full_z = pl.read_parquet("data/difficulty/skew.parquet").get_column("z").to_numpy()
    assert metrics["full"]["ddm_uniform"] == pytest.approx(ddm(full_z))
    sub = metrics["subsets"]["uniform-15"]
    assert sub["ddm_target"] <= metrics["full"]["ddm_uniform"]
    assert sub["full_ddm_target"] == pytest.approx(metrics["full"]["ddm_uniform"])
    assert metrics["reference"] == "mean rank over ref"
    assert sub["tau"]["n_models"] == 6 and sub["tau"]["tau"] is not None
    assert sub["full_tau"] == metrics["full"]["tau"]["tau"]
    assert set(metrics["skipped"]) == {"uniform-500", "ref-500"}


def test_stage_without_a_reference_says_why(project: Path):
    text = stage.run(params_of(load_params("params.yaml")), "lone")
    metrics = json.loads(Path("metrics/subsets/lone.json").read_text())
    assert metrics["reference"] is None
    assert "no other benchmark in domain 'code'" in text
    assert metrics["subsets"]["uniform-15"]["tau"]["tau"] is None


def test_stale_subset_files_are_removed(project: Path):
    from curation.io.atomic import all_or_nothing

    params = load_params("params.yaml")
    with all_or_nothing():  # as stage_main runs it: the folder is replaced when it commits
        stage.run(params_of(params), "skew")
    params["subsets"]["sizes"] = [10]
    with all_or_nothing():
        stage.run(params_of(params), "skew")
    assert sorted(p.name for p in Path("data/subsets/skew").iterdir()) == [
        "ref-10.parquet",
        "uniform-10.parquet",
    ]


def test_a_benchmark_smaller_than_every_shared_size_skips_them_all(project: Path):
    """A small slice (every shared size above its item count) has no subsets, each with
    its reason, instead of failing `dvc repro`; a size set for it by name still fails."""
    params = load_params("params.yaml")
    params["subsets"]["sizes"] = [50, 100]
    text = stage.run(params_of(params), "lone")
    assert text.splitlines()[0] == "lone: 0 subset(s) -> data/subsets/lone"
    assert "skipped uniform-50: m=50 exceeds the 30 items with a z" in text
    metrics = json.loads(Path("metrics/subsets/lone.json").read_text())
    assert metrics["subsets"] == {} and set(metrics["skipped"]) == {
        "uniform-50",
        "uniform-100",
        "ref-50",
        "ref-100",
    }
    assert Path("data/subsets/lone").is_dir() and not list(Path("data/subsets/lone").iterdir())
    params["subsets"]["benchmarks"] = {"lone": {"sizes": [10, 31]}}
    with pytest.raises(ConfigError, match="subsets.benchmarks.lone.sizes: subset size 31"):
        stage.run(params_of(params), "lone")


def test_missing_difficulty_names_the_stage(project: Path):
    Path("data/difficulty/skew.parquet").unlink()
    with pytest.raises(InputError, match="dvc repro annotate@skew"):
        stage.run(params_of(load_params("params.yaml")), "skew")
