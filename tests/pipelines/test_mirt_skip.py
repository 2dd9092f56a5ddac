"""mirt on a project that cannot support a joint fit: skipped with its reason, outputs
written (DVC needs every declared one), never a failed `dvc repro`.

A pool the user listed in ``mirt.benchmarks`` is still fitted as listed and fails loudly.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from curation.errors import ConfigError, InputError
from curation.schemas import validate_record
from tests.conftest import minimal_benchmark, params_of


def _responses(root: Path, name: str, models: list[str], n_items: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    rows = [(m, f"{name}-{i}", 2, int(rng.integers(0, 3))) for m in models for i in range(n_items)]
    path = root / "data" / "responses" / f"{name}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(
        rows, schema=["model", "item", "n_trials", "n_correct"], orient="row"
    ).write_parquet(path)


def _run(benchmarks: list[str], mirt: dict[str, object]) -> str:
    from curation.io.atomic import all_or_nothing
    from pipelines import mirt as stage

    with all_or_nothing():  # as stage_main runs it: outputs (and stale figures) at its end
        return stage.run(
            params_of({"benchmarks": {b: minimal_benchmark(b) for b in benchmarks}, "mirt": mirt})
        )


def _outputs(root: Path) -> dict[str, object]:
    metrics = json.loads((root / "metrics/mirt.json").read_text())
    assert validate_record(metrics, "skipped_stage") is None
    assert (root / "plots/mirt").is_dir() and not list((root / "plots/mirt").iterdir())
    assert pl.read_parquet(root / "data/mirt/loadings.parquet").height == 0
    assert metrics["reason"] in (root / "reports/mirt.md").read_text()
    return metrics


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_one_benchmark_skips_with_its_reason(project: Path):
    _responses(project, "solo", ["m1", "m2", "m3"], 12, seed=0)
    stale = project / "plots/mirt/loadings.png"  # a figure of an earlier, fitted run
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    out = _run(["solo"], {"d_max": 2})
    assert (
        "mirt: skipped: a joint fit needs at least two benchmarks with responses, have solo" in out
    )
    metrics = _outputs(project)
    assert metrics["benchmarks"] == ["solo"] and metrics["stage"] == "mirt"


def test_a_second_benchmark_without_responses_is_left_out_then_skipped(project: Path):
    _responses(project, "a", ["m1", "m2", "m3"], 12, seed=0)
    _responses(project, "empty", ["m1"], 0, seed=1)
    _run(["a", "empty"], {})
    metrics = _outputs(project)
    assert "have a" in str(metrics["reason"])
    assert (
        "empty: left out of the joint fit: no responses"
        in (project / "reports/mirt.md").read_text()
    )


def test_two_models_skip_with_the_setting_that_stops_them(project: Path):
    """The default ``min_models_per_item: 5`` drops every item of a 2-model panel."""
    for b, seed in (("a", 0), ("b", 1)):
        _responses(project, b, ["m1", "m2"], 24, seed=seed)
    _run(["a", "b"], {})
    reason = str(_outputs(project)["reason"])
    assert "too few models or items" in reason and "2 model(s) over a, b" in reason
    assert "mirt.min_models_per_item: 5" in reason


def test_a_listed_pool_still_fails_loudly(project: Path):
    from pipelines import mirt

    for b, seed in (("a", 0), ("b", 1)):
        _responses(project, b, ["m1", "m2"], 24, seed=seed)
    entries = {"a": minimal_benchmark("a"), "b": minimal_benchmark("b")}
    with pytest.raises(ConfigError, match="at least two benchmarks"):
        mirt.run(
            params_of(
                {
                    "benchmarks": entries,
                    "mirt": {"benchmarks": ["a"]},
                }
            )
        )
    with pytest.raises(InputError, match="too few models"):
        mirt.run(
            params_of(
                {
                    "benchmarks": entries,
                    "mirt": {"benchmarks": ["a", "b"]},
                }
            )
        )
    assert not (project / "metrics/mirt.json").exists()


def test_the_skip_record_is_checked():
    """A mirt record names its pool, a benchmark's record its benchmark, never crossed."""
    ok = {"stage": "mirt", "skipped": True, "reason": "r", "benchmarks": ["a"]}
    assert validate_record(ok, "skipped_stage") is None
    assert validate_record({**ok, "benchmark": "a"}, "skipped_stage") is not None
    build = {"stage": "build", "skipped": True, "reason": "r", "benchmark": "a"}
    assert validate_record(build, "skipped_stage") is None
    assert validate_record({**build, "benchmarks": ["a"]}, "skipped_stage") is not None
    assert validate_record({k: v for k, v in build.items() if k != "benchmark"}, "skipped_stage")
