"""The DVC contract a user relies on, with real DVC on the toy project: committed metrics
that `dvc exp show` / `dvc metrics diff` compare, imports that survive `dvc repro`, and a
`dvc push` / `dvc pull` round trip through a local remote."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.pipelines.test_pipeline import dvc_project  # noqa: F401 (fixture)

ENV = {
    **os.environ,
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    "DVC_NO_ANALYTICS": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def _run(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PYTHONPATH": str(root)}  # the project's own copy of the code
    proc = subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _curate(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    return _run(root, sys.executable, "-m", "curation.cli", *args, ok=ok)


def _lm_eval_log(folder: Path, *, task: str, model: str, solved: set[int]) -> Path:
    """An lm-eval --log_samples file for the toy items q0..q5 (doc.id is the item id)."""
    folder = folder / model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps(
            {
                "doc_id": i,
                "doc": {"id": f"q{i}"},
                "target": str(2 * i),
                "arguments": {"gen_args_0": {"arg_0": "x", "arg_1": {}}},
                "resps": [["x"]],
                "filtered_resps": ["x"],
                "filter": "none",
                "metrics": ["exact_match"],
                "exact_match": 1.0 if i in solved else 0.0,
            }
        )
        for i in range(6)
    ]
    path = folder / f"samples_{task}_2024-05-01T10-00-00.000001.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def project(dvc_project: Path) -> Path:  # noqa: F811
    """The two-benchmark toy project of test_pipeline (mirt needs two), as a git repo."""
    return dvc_project


def _digests(root: Path, folders: list[str]) -> dict[str, str]:
    out = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and ".gitignore" not in path.name:
                out[path.relative_to(root).as_posix()] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
    return out


OUTS = [
    "data/items",
    "data/responses",
    "data/difficulty",
    "data/calibration",
    "data/subsets",
    "data/fill",
    "data/judged",
    "data/mirt",
    "reports",
    "plots",
    "dist",
    "metrics",
]


def test_import_is_an_input_that_survives_repro(project: Path, tmp_path: Path):
    _run(project, "dvc", "repro", "-q")
    # a log of another task is refused, naming both, and nothing is written
    ner = _lm_eval_log(tmp_path / "logs-ner", task="conll2003", model="org/new", solved={0})
    proc = _curate(
        project,
        "responses",
        "import",
        "-b",
        "toy",
        "--path",
        str(ner),
        "--item-field",
        "id",
        ok=False,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'conll2003'" in proc.stderr and "'toy'" in proc.stderr
    assert not list((project / "data/raw/toy/imports").glob("*.parquet"))

    log = _lm_eval_log(tmp_path / "logs", task="toy", model="org/new", solved={0, 1, 5})
    proc = _curate(
        project, "responses", "import", "-b", "toy", "--path", str(log), "--item-field", "id",
        "--model", "org/new",
    )  # fmt: skip
    assert "model 'org/new' added: 6 cells" in proc.stdout
    assert (project / "data/raw/toy/imports/org_new.parquet").is_file()
    _run(project, "dvc", "repro", "-q")
    responses = pl.read_parquet(project / "data/responses/toy.parquet")
    assert set(responses["model"]) == {"weak", "mid", "strong", "org/new"}
    toy2 = pl.read_parquet(project / "data/responses/toy2.parquet")
    assert "org/new" not in set(toy2["model"])  # only the benchmark imported into
    assert responses.height == 24  # added, nothing replaced
    assert "org/new" in (project / "data/calibration/toy.json").read_text()
    second = _run(project, "dvc", "repro")
    assert "Data and pipelines are up to date" in second.stdout
    assert "org/new" in set(pl.read_parquet(project / "data/responses/toy.parquet")["model"])

    # re-importing the model replaces only its own cells, and says so
    log2 = _lm_eval_log(tmp_path / "logs2", task="toy", model="org/new", solved={0})
    proc = _curate(
        project, "responses", "import", "-b", "toy", "--path", str(log2), "--item-field", "id",
        "--model", "org/new",
    )  # fmt: skip
    assert "model 'org/new' was already in the matrix: its 6 cells are replaced" in proc.stdout


def test_metrics_in_git_experiments_and_remote_round_trip(project: Path, tmp_path: Path):
    _run(project, "dvc", "repro", "-q")
    shown = _run(project, "dvc", "metrics", "show").stdout
    assert "metrics/headline/toy.json" in shown and "max_gap" in shown
    assert max(len(line) for line in shown.splitlines()) <= 200
    _run(project, "git", "add", "-A")
    _run(project, "git", "commit", "-q", "-m", "baseline")
    tracked = _run(project, "git", "ls-files", "metrics", "plots").stdout.split()
    assert "metrics/headline/toy.json" in tracked and "plots/gaps-data/ecdf.csv" in tracked

    # push every cached output to a local remote, pull it into a second clone
    remote = tmp_path / "remote"
    _run(project, "dvc", "remote", "add", "-d", "local", str(remote))
    _run(project, "dvc", "push", "-q")
    clone = tmp_path / "clone"
    _run(tmp_path, "git", "clone", "-q", str(project), str(clone))
    _run(clone, "dvc", "remote", "add", "-d", "local", str(remote))
    _run(clone, "dvc", "pull", "-q")
    assert _digests(clone, OUTS) == _digests(project, OUTS)
    assert "up to date" in _run(clone, "dvc", "status").stdout

    # an experiment on a real param: exp show has numbers for both rows, metrics diff works
    _run(project, "dvc", "exp", "run", "-n", "scale-items", "-S", "+annotate.scale=items")
    table = json.loads(_run(project, "dvc", "exp", "show", "--json").stdout)
    # workspace, the baseline commit, and the experiment under it
    rows = [
        row
        for entry in table
        for row in [entry, *[e for exp in entry.get("experiments") or [] for e in exp["revs"]]]
    ]
    assert len(rows) >= 3 and any(row.get("name") == "scale-items" for row in rows)
    for row in rows:
        data = row["data"]["metrics"]["metrics/headline/toy.json"]["data"]
        assert isinstance(data["ddm"], float) and isinstance(data["max_gap"], float)
    diff = _run(project, "dvc", "metrics", "diff").stdout
    assert "metrics/headline/toy.json" in diff


def test_benchmark_add_then_repro(project: Path, tmp_path: Path):
    """`curate benchmark add` (items + wide matrix) then `dvc repro`, with no other edit;
    the other benchmarks' numbers do not move."""
    src = tmp_path / "incoming"
    src.mkdir()
    (src / "items.jsonl").write_text(
        "".join(
            json.dumps({"id": f"t{i}", "prompt": f"{i} * 3?", "target": str(3 * i)}) + "\n"
            for i in range(6)
        )
    )
    rows = {"weak": "1,0,0,0,0,1", "mid": "1,1,1,0,0,1", "strong": "1,1,1,1,0,1"}
    header = "model," + ",".join(f"t{i}" for i in range(6))
    (src / "matrix.csv").write_text(
        "\n".join([header, *(f"{m},{v}" for m, v in rows.items())]) + "\n"
    )
    _run(project, "dvc", "repro", "-q")
    before = (project / "metrics/subsets/toy.json").read_text()
    typo = _curate(
        project, "benchmark", "add", "toy3", "--items", str(src / "missing.jsonl"), ok=False
    )
    assert typo.returncode == 2 and "Traceback" not in typo.stderr
    proc = _curate(
        project, "benchmark", "add", "toy3", "--items", str(src / "items.jsonl"),
        "--responses", str(src / "matrix.csv"), "--format", "wide",
        "--field-map", "item=id,question=prompt,answer=target",
        "--domain", "math", "--answer-type", "numeric",
    )  # fmt: skip
    assert "next: dvc repro" in proc.stdout
    assert (project / "data/raw/toy3/items.jsonl").is_file()
    _run(project, "dvc", "repro", "-q")
    assert (project / "metrics/headline/toy3.json").is_file()
    assert (project / "dist/toy3/toy3-1.0.0/README.md").is_file()
    assert (project / "metrics/subsets/toy.json").read_text() == before
