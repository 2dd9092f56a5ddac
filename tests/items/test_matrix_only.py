"""A matrix-only benchmark (responses, no item texts) through every stage, in-process.

60 models x 80 items drawn from a 1PL with known difficulties (and a second task of the
same models, 40 items, for the joint MIRT fit); the entries say
``items: {texts: false, path: <the matrix>}``. The text-free stages (check, annotate,
gaps, subsets, mirt) run as for any benchmark; fill, judge and build skip it with a
metrics record that says why, and ingest says so once.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml

from curation.errors import ConfigError
from curation.params_model import validate_params
from tests.conftest import TOY_PARAMS, add_imports_dir
from tests.stage_cli import run_stage

N_MODELS, N_ITEMS = 60, 80
STAGES = ["ingest", "responses", "check", "annotate"]


def _matrix(seed: int = 0, n_items: int = N_ITEMS) -> tuple[pl.DataFrame, np.ndarray]:
    theta = np.random.default_rng(0).normal(size=N_MODELS)  # the same models in every task
    rng = np.random.default_rng(seed + 1)
    b = np.linspace(-2.5, 2.5, n_items)
    p = 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    y = (rng.random((N_MODELS, n_items)) < p).astype(int)
    frame = pl.DataFrame(
        {"model": [f"m{j:02d}" for j in range(N_MODELS)]}
        | {f"it{i:03d}": y[:, i] for i in range(n_items)}
    )
    return frame, b


def _entry(name: str = "lb") -> dict:
    return {
        "domain": "leaderboard",
        "license": "CC-BY-4.0",
        "source": "a leaderboard's per-sample matrix (tests)",
        "items": {"texts": False, "path": f"raw/{name}.csv"},
        "responses": {"path": f"raw/{name}.csv", "layout": "wide", "n_trials": 1},
    }


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, np.ndarray]:
    params = yaml.safe_load(TOY_PARAMS)
    params["benchmarks"] = {"lb": _entry(), "lb2": _entry("lb2")}
    params["subsets"]["sizes"] = [20]
    (tmp_path / "raw").mkdir()
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    frame, b = _matrix()
    frame.write_csv(tmp_path / "raw" / "lb.csv")
    _matrix(seed=1, n_items=40)[0].write_csv(tmp_path / "raw" / "lb2.csv")
    add_imports_dir(tmp_path, "lb")
    add_imports_dir(tmp_path, "lb2")
    (tmp_path / "releases").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path, b


def test_entry_must_name_its_matrix_as_the_items_path():
    entry = _entry()
    entry["items"]["path"] = "raw/other.csv"
    with pytest.raises(
        ConfigError, match=r"benchmarks.lb: items.texts: false .*same file as responses.path"
    ):
        validate_params({"benchmarks": {"lb": entry}})
    del entry["responses"]
    with pytest.raises(ConfigError, match="matrix-only"):
        validate_params({"benchmarks": {"lb": entry}})


def test_validate_reads_the_matrix_as_ingest_does(project, capsys):
    """``curate validate`` checks a matrix-only entry the way the stages read it: its item
    ids from the matrix (not the matrix read as raw items, which has no question)."""
    from curation.cli import main

    assert main(["validate"]) == 0
    out = capsys.readouterr().out
    assert f"lb: {N_ITEMS} item ids (matrix-only), {N_MODELS * N_ITEMS} responses" in out


@pytest.mark.long(seconds=70)
def test_text_free_stages_run_and_text_stages_skip(project, capsys):
    root, b_true = project
    assert run_stage(["ingest", "--benchmark", "lb"]) == 0
    out = capsys.readouterr().out
    assert out.count("matrix-only") == 1
    assert "runs check, annotate, gaps, subsets, mirt" in out
    assert "skips fill (BenchFill rewrites item texts); judge (" in out and "build (" in out
    items = pl.read_parquet(root / "data/items/lb.parquet")
    assert items.height == N_ITEMS and items["question"].null_count() == N_ITEMS
    assert items["item"].to_list() == [f"it{i:03d}" for i in range(N_ITEMS)]
    assert set(items["metadata"]) == {json.dumps({"texts": False})}

    assert run_stage(["ingest", "--benchmark", "lb2"]) == 0
    for stage in ("responses", "check", "annotate"):
        for name in ("lb", "lb2"):
            assert run_stage([stage, "--benchmark", name]) == 0, stage
    assert run_stage(["gaps"]) == 0
    assert run_stage(["subsets", "--benchmark", "lb"]) == 0
    assert run_stage(["mirt"]) == 0
    capsys.readouterr()
    for stage in ("fill", "judge", "build"):
        assert run_stage([stage, "--benchmark", "lb"]) == 0, stage
        assert capsys.readouterr().out.strip().endswith("lb: skipped (no item texts)")
        record = json.loads((root / f"metrics/{stage}/lb.json").read_text())
        assert record["skipped"] is True and record["stage"] == stage
        assert "no item texts" in record["reason"]
    assert pl.read_parquet(root / "data/fill/lb/candidates.parquet").height == 0
    assert pl.read_parquet(root / "data/judged/lb.parquet").height == 0
    assert (root / "plots/fill/lb.png").is_file() and (root / "dist/lb").is_dir()
    assert run_stage(["fill", "--benchmark", "lb2"]) == 0
    assert run_stage(["headline"]) == 0
    headline = json.loads((root / "metrics/headline.json").read_text())
    assert headline["lb"]["fill_pct"] is None and headline["lb"]["ddm"] is not None

    # the difficulties are measured: they order the items as the truth does
    difficulty = pl.read_parquet(root / "data/difficulty/lb.parquet").sort("item")
    r = np.corrcoef(difficulty["b"].to_numpy(), b_true)[0, 1]
    assert r > 0.9
    check = json.loads((root / "metrics/check/lb.json").read_text())
    assert check["n_models"] == N_MODELS and check["n_items"] == N_ITEMS
    gaps = json.loads((root / "metrics/gaps.json").read_text())
    assert gaps["lb"]["n"] == N_ITEMS
    mirt = json.loads((root / "metrics/mirt.json").read_text())
    assert "lb2" in json.dumps(mirt)
    subsets = json.loads((root / "metrics/subsets/lb.json").read_text())
    assert subsets["subsets"]


def test_wright_map_of_a_leaderboard_stays_small(tmp_path):
    """500 models: abilities as a rug, not one labelled row each (a 55-inch figure)."""
    import struct

    from curation.irt import fit
    from curation.plots.irt import plot_difficulty_vs_ability

    rng = np.random.default_rng(0)
    theta = rng.normal(size=500)
    b = np.linspace(-2, 2, 20)
    y = rng.random((500, 20)) < 1 / (1 + np.exp(-(theta[:, None] - b[None, :])))
    cells = pl.DataFrame(
        {
            "model": [f"m{j:03d}" for j in range(500) for _ in range(20)],
            "item": [f"i{i:02d}" for _ in range(500) for i in range(20)],
            "n_trials": [1] * 10_000,
            "n_correct": y.ravel().astype(int),
        }
    )
    out = tmp_path / "wright.png"
    plot_difficulty_vs_ability(fit(cells, model="1pl"), out)
    width, height = struct.unpack(">II", out.read_bytes()[16:24])
    assert height < 1.5 * width
