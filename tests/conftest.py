"""Shared fixtures: a tiny project folder with one benchmark, built in a temp dir; builds
shared by every xdist worker of a run (`build_once`); the long tests first (`long` marker)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from filelock import FileLock

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")

REPO = Path(__file__).resolve().parent.parent

TOY_ITEMS = [
    {"id": f"q{i}", "prompt": f"What is {i} + {i}?", "target": str(2 * i), "level": i % 3}
    for i in range(6)
]
# 3 models with a clear order, 2 trials per cell; q5 is all-solved
TOY_LONG = [
    ("weak", "q0", 2, 1),
    ("weak", "q1", 2, 0),
    ("weak", "q2", 2, 0),
    ("weak", "q3", 2, 0),
    ("weak", "q4", 2, 0),
    ("weak", "q5", 2, 2),
    ("mid", "q0", 2, 2),
    ("mid", "q1", 2, 1),
    ("mid", "q2", 2, 1),
    ("mid", "q3", 2, 0),
    ("mid", "q4", 2, 0),
    ("mid", "q5", 2, 2),
    ("strong", "q0", 2, 2),
    ("strong", "q1", 2, 2),
    ("strong", "q2", 2, 2),
    ("strong", "q3", 2, 1),
    ("strong", "q4", 2, 0),
    ("strong", "q5", 2, 2),
]

# Spells every key dvc.yaml lists (tests/pipelines make a DVC project of it, and DVC fails
# a stage whose listed params key is missing: scripts/stage_deps.py checks it).
TOY_PARAMS = """\
benchmarks:
  toy:
    domain: math
    license: MIT
    source: tests
    items:
      path: raw/items.jsonl
      fields: {item: id, question: prompt, answer: target}
      answer_type: numeric
    responses:
      path: raw/responses.csv
      layout: long
      columns: {model: model, item: item, n_trials: n_trials, n_correct: n_correct}
check:
  list_limit: 5
annotate:
  laplace_draws: 50
gaps:
  targets: [uniform]
  thresholds: {ddm: 0.10, max_gap: 0.10, top_5_sum: 0.30}  # a build param (the card figure)
subsets:
  sizes: [3]
  targets: [uniform]
  reference: {kind: none}
build:
  version: auto
  initial_version: 1.0.0
  dist: dist
  accepted: data/review/export/{benchmark}.parquet
  decisions: data/review/export/decisions.jsonl
panel:
  models:
    - {name: sim-weak, model_id: sim-weak, ability: -1.0}
    - {name: sim-strong, model_id: sim-strong, ability: 1.0}
collect:
  enabled: false
  backend: simulate
  seed: 0
  simulation: {}
  templates: {}
  template_for: {}
  sandbox: null
llm:
  cache: .llm-cache/completions.sqlite
  send_seed: true
  stream_usage: true
calibrate:
  adaptive: {max_trials: 8}
fill:
  insertions: 1
  rounds: 2
  parents: 2
  children: 2
  judge: null
judge:
  enabled: true
review:
  db: data/review/queue.sqlite
mirt:
  d_max: 2
  holdout: 0.2
  min_models_per_item: 2
"""


def add_imports_dir(root: Path, benchmark: str) -> None:
    """The (git-kept) folder `curate responses import` writes into: a responses-stage dep."""
    folder = root / "data" / "raw" / benchmark / "imports"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".gitkeep").touch()


def write_toy_project(root: Path) -> Path:
    """Write params.yaml and raw files of a 3-model x 6-item benchmark under ``root``."""
    (root / "raw").mkdir(parents=True, exist_ok=True)
    add_imports_dir(root, "toy")
    (root / "releases").mkdir(exist_ok=True)
    (root / "releases" / ".gitkeep").touch()
    (root / "params.yaml").write_text(TOY_PARAMS)
    (root / "raw" / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in TOY_ITEMS))
    lines = ["model,item,n_trials,n_correct"] + [",".join(map(str, r)) for r in TOY_LONG]
    (root / "raw" / "responses.csv").write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture
def toy_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A toy project folder, made the working directory."""
    write_toy_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def copy_project(src: Path, dst: Path) -> Path:
    """A private copy of a prebuilt project (``dst`` may exist, e.g. a test's ``tmp_path``)."""
    shutil.copytree(src, dst, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


@pytest.fixture(scope="session")
def annotated_toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy project after ingest, responses and annotate (in-process), built once per
    test run. Shared: never change it, work on a `copy_project` of it."""

    def build(root: Path) -> None:
        from tests.stage_cli import run_stage

        write_toy_project(root)
        with contextlib.chdir(root):
            for stage in (["ingest"], ["responses"], ["annotate"]):
                assert run_stage(stage) == 0, stage

    return build_once(shared_tmp(tmp_path_factory), "annotated-toy", build)


# ---- builds shared by the workers of one run ------------------------------------------------


def shared_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every process of this test run shares: under pytest-xdist the run's temp
    root (each worker's own base temp is a folder in it), else this process's base temp."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(shared: Path, name: str, build: Callable[[Path], None]) -> Path:
    """``shared / name`` built by ``build(folder)`` once, whichever process asks first.

    A session fixture runs once per xdist worker; a costly build shared through this runs
    once per test run: the first worker builds under a file lock, the others wait on the
    lock, then reuse the folder (read-only: tests work on copies). A build that raised
    leaves no mark, so the next caller starts over from an empty folder (and fails the
    same way, reported by its own tests)."""
    folder, done = shared / name, shared / f"{name}.built"
    with FileLock(shared / f"{name}.lock"):
        if not done.is_file():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            build(folder)
            done.touch()
    return folder


# ---- the long tests first ------------------------------------------------------------------


def long_seconds(item: pytest.Item) -> float:
    """What ``@pytest.mark.long(seconds=...)`` says a test takes; 0 for the others.

    A test on a shared build (``built_repo``) is long even when its own call is short: it
    may wait for the build, so it belongs in the front half that worksteal hands to one
    worker, not at the start of the other's (tests/test_suite_plumbing.py checks it)."""
    mark = item.get_closest_marker("long")
    if mark is None:
        return 0.0
    if set(mark.kwargs) != {"seconds"} or mark.args:
        raise pytest.UsageError(f"{item.nodeid}: write @pytest.mark.long(seconds=N)")
    return float(mark.kwargs["seconds"])


def long_first(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """The long tests first, longest first; every other test after them in its collected
    order. Deterministic (a stable sort of the collected order): every xdist worker must
    collect the same list."""
    return sorted(items, key=lambda item: -long_seconds(item))


@pytest.hookimpl(trylast=True)  # after pytest's own grouping by fixture parameter
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items[:] = long_first(items)


def params_of(raw: object) -> object:
    """A stage's ``run`` takes the validated params file: a raw mapping is validated first
    (exactly what ``stage_main`` does before it calls ``run``)."""
    from curation.params_model import ParamsFile, validate_params

    return raw if isinstance(raw, ParamsFile) else validate_params(raw)


def minimal_benchmark(name: str) -> dict[str, object]:
    """The least a ``benchmarks.<name>`` entry must say to validate (for stages that only
    read the stage outputs under data/, never the raw files)."""
    return {"domain": "tests", "license": "MIT", "source": "tests", "items": {"path": f"{name}"}}
