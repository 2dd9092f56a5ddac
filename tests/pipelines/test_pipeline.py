"""The real DVC pipeline: runs, does nothing the second time, reruns only what changed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, TOY_PARAMS, add_imports_dir, write_toy_project


def _dvc(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "DVC_NO_ANALYTICS": "1",
    }
    proc = subprocess.run(
        ["dvc", *args], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture
def dvc_project(tmp_path: Path) -> Path:
    write_toy_project(tmp_path)
    shutil.copytree(tmp_path / "raw", tmp_path / "raw2")
    add_imports_dir(tmp_path, "toy2")
    second = (
        TOY_PARAMS.split("check:")[0]
        .replace("  toy:", "  toy2:", 1)
        .replace("raw/", "raw2/")
        .split("benchmarks:\n", 1)[1]
    )
    (tmp_path / "params.yaml").write_text(TOY_PARAMS.replace("check:", second + "check:", 1))
    shutil.copyfile(REPO / "dvc.yaml", tmp_path / "dvc.yaml")
    shutil.copyfile(REPO / ".gitignore", tmp_path / ".gitignore")
    for name in ("pipelines", "schemas", "curation"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    _empty_review_export(tmp_path)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    _dvc(tmp_path, "init", "-q")
    _dvc(tmp_path, "config", "core.analytics", "false")
    return tmp_path


def _empty_review_export(root: Path) -> None:
    """What `curate review export` writes before anyone reviewed: the build's inputs."""
    from curation.params import load_params
    from curation.review import ReviewStore, export, review_config

    cwd = Path.cwd()
    os.chdir(root)
    try:
        params = load_params("params.yaml")
        config = review_config(params)
        export(ReviewStore.create(config.db), config=config, params=params)
    finally:
        os.chdir(cwd)


def _ran(output: str) -> set[str]:
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage")}


def test_repro_twice_then_change_one_mapping(dvc_project: Path):
    first = _dvc(dvc_project, "repro")
    per_benchmark = (
        "ingest",
        "responses",
        "check",
        "annotate",
        "fill",
        "judge",
        "subsets",
        "build",
    )
    expected = {f"{s}@{b}" for s in (*per_benchmark, "headline") for b in ("toy", "toy2")} | {
        "gaps",
        "mirt",
    }
    assert _ran(first) == expected
    assert (dvc_project / "metrics" / "check" / "toy2.json").is_file()

    second = _dvc(dvc_project, "repro")
    assert _ran(second) == set()
    assert "Data and pipelines are up to date" in second

    # same params, same outputs: forced reruns of the fitting stages change no hash
    lock = (dvc_project / "dvc.lock").read_text()
    _dvc(dvc_project, "repro", "-f", "-s", "annotate@toy", "gaps", "mirt", "subsets@toy")
    assert (dvc_project / "dvc.lock").read_text() == lock

    params = dvc_project / "params.yaml"
    text = params.read_text()
    head, tail = text.split("  toy2:", 1)
    params.write_text(
        head + "  toy2:" + tail.replace("answer_type: numeric", "answer_type: exact", 1)
    )
    third = _dvc(dvc_project, "repro")
    # only toy2's chain reruns, and it stops where an output came out unchanged
    assert "ingest@toy2" in _ran(third)
    toy2_chain = {f"{s}@{b}" for s in (*per_benchmark, "headline") for b in ("toy2",)} | {
        "gaps",
        "mirt",
        "build@toy",
        "headline@toy",
    }
    assert _ran(third) <= toy2_chain

    metrics = _dvc(dvc_project, "metrics", "show")
    assert "metrics/headline/toy2.json" in metrics and "max_gap" in metrics
