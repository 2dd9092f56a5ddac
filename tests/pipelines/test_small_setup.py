"""A small, partial project — two 24-item benchmarks, a 2-model panel, no review export —
goes through subsets, build and mirt without failing (issue 16: a real panel tried on a
slice used to fail `dvc repro` at each of them).

The stages run in-process (a real `dvc repro` is a Python process per stage, too slow
for CI); what DVC itself checks before running a stage — that every dependency exists —
is checked on the pipeline DVC resolves from the real dvc.yaml for this params.yaml.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import yaml

from tests.conftest import REPO, TOY_PARAMS, add_imports_dir
from tests.stage_cli import run_stage

N_ITEMS = 24
MODELS = {"weak": -1.0, "strong": 1.0}
BENCHMARKS = ("slice", "slice2")


def _write_benchmark(root: Path, name: str, seed: int) -> dict[str, object]:
    raw = root / "raw" / name
    raw.mkdir(parents=True)
    items = [
        {"id": f"{name}-{i:02d}", "prompt": f"What is {i} + {seed}?", "target": str(i + seed)}
        for i in range(N_ITEMS)
    ]
    (raw / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    rng = np.random.default_rng(seed)
    b = np.linspace(-2, 2, N_ITEMS)
    rows = ["model,item,n_trials,n_correct"]
    for model, theta in MODELS.items():
        p = 1 / (1 + np.exp(-(theta - b)))
        k = rng.binomial(4, p)
        rows += [f"{model},{r['id']},4,{int(ki)}" for r, ki in zip(items, k, strict=True)]
    (raw / "responses.csv").write_text("\n".join(rows) + "\n")
    add_imports_dir(root, name)
    return {
        "domain": "math",
        "license": "MIT",
        "source": "tests (small setup)",
        "items": {
            "path": f"raw/{name}/items.jsonl",
            "fields": {"item": "id", "question": "prompt", "answer": "target"},
            "answer_type": "numeric",
        },
        "responses": {
            "path": f"raw/{name}/responses.csv",
            "layout": "long",
            "columns": {
                "model": "model",
                "item": "item",
                "n_trials": "n_trials",
                "n_correct": "n_correct",
            },
        },
    }


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    params = yaml.safe_load(TOY_PARAMS)
    params["benchmarks"] = {b: _write_benchmark(tmp_path, b, s) for s, b in enumerate(BENCHMARKS)}
    params["subsets"]["sizes"] = [50, 100]  # the shipped sizes: both above 24 items
    params["mirt"] = {"d_max": 2}  # min_models_per_item: 5 (the default) > 2 models
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    (tmp_path / "releases").mkdir()
    (tmp_path / "releases" / ".gitkeep").touch()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_small_partial_project_runs_through_subsets_build_and_mirt(
    project: Path, capsys: pytest.CaptureFixture[str]
):
    for name in BENCHMARKS:
        for stage in ("ingest", "responses"):
            assert run_stage([stage, "--benchmark", name]) == 0, (stage, name)
    assert run_stage(["annotate", "--benchmark", "slice"]) == 0  # mirt reads responses only
    capsys.readouterr()

    assert run_stage(["subsets", "--benchmark", "slice"]) == 0
    out = capsys.readouterr().out
    assert "slice: 0 subset(s)" in out and "m=50 exceeds the 24 items with a z" in out
    subsets = json.loads((project / "metrics/subsets/slice.json").read_text())
    assert subsets["subsets"] == {} and len(subsets["skipped"]) == 2

    assert not (project / "data/review").exists()  # nobody reviewed, nothing exported
    assert run_stage(["build", "--benchmark", "slice"]) == 0
    build = json.loads((project / "metrics/build/slice.json").read_text())
    assert build["version"] == "1.0.0" and list(build["files"]) == ["slice-1.0.0"]
    assert set(build["configs"]) == {"original", "filled"}  # no calibrated subset to ship
    assert build["configs"]["filled"]["n"] == build["configs"]["original"]["n"] == N_ITEMS
    original = project / "dist/slice/slice-1.0.0/data/original"
    assert pl.read_parquet(next(original.glob("*.parquet"))).height == N_ITEMS

    assert run_stage(["mirt"]) == 0
    assert "mirt: skipped: nothing left to fit after pooling" in capsys.readouterr().out
    mirt = json.loads((project / "metrics/mirt.json").read_text())
    assert mirt["skipped"] is True and "mirt.min_models_per_item: 5" in mirt["reason"]
    for out_path in ("data/mirt/loadings.parquet", "reports/mirt.md", "plots/mirt"):
        assert (project / out_path).exists(), out_path


def _made_by(dep: Path, out: Path) -> bool:
    """A stage makes ``dep``: it is an output, inside one, or a folder outputs go into."""
    return dep.is_relative_to(out) or out.is_relative_to(dep)


def test_dvc_finds_every_dependency_of_a_project_without_review_export(
    project: Path, tmp_path: Path
):
    """What `dvc repro` checks first: each stage's dependency exists or another stage
    makes it. Before, build@<b> named data/review/export/<b>.parquet, which only
    `curate review export` writes, so a benchmark nobody reviewed failed here."""
    from dvc.repo import Repo

    (project / "dvc.yaml").write_text((REPO / "dvc.yaml").read_text())
    for code in ("pipelines", "curation", "schemas"):
        os.symlink(REPO / code, project / code)
    # what a checkout of this repository has (git-kept, even with no review at all)
    (project / "data/review/export").mkdir(parents=True)
    (project / "data/review/export/.gitkeep").touch()
    (project / "data/review/export/decisions.jsonl").touch()
    Repo.init(str(project), no_scm=True)
    with Repo(str(project)) as repo:
        stages = list(repo.index.stages)
        made = {Path(str(o.fs_path)) for s in stages for o in s.outs}
        names = {s.addressing for s in stages}
        assert {"build@slice", "subsets@slice", "mirt"} <= names
        missing = {
            (s.addressing, str(d.def_path))
            for s in stages
            for d in s.deps
            if not Path(str(d.fs_path)).exists()
            and not any(_made_by(Path(str(d.fs_path)), m) for m in made)
        }
    assert missing == set()
    assert (REPO / "data/review/export/.gitkeep").is_file()  # the folder is in git
