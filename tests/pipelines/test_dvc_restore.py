"""A stage that fails under real `dvc repro` says the one command that restores its last
good outputs, and that command gives them back byte for byte.

DVC deletes a stage's outputs before running it, so "the stage writes nothing until it
has succeeded" is not enough under `dvc repro`: the cached outputs come back with
`dvc checkout`, the `cache: false` metrics with `git checkout`. Kept small on purpose:
three stages of the toy project, code run from this checkout (no code deps to hash).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import write_toy_project

CODE = Path(__file__).resolve().parents[2]

DVC_YAML = """\
stages:
  ingest:
    foreach: [toy]
    do:
      cmd: python {code}/pipelines/ingest.py --benchmark ${{item}}
      deps: [raw/items.jsonl]
      params: ["benchmarks.${{item}}.items"]
      outs: ["data/items/${{item}}.parquet"]
  responses:
    foreach: [toy]
    do:
      cmd: python {code}/pipelines/responses.py --benchmark ${{item}}
      deps: [raw/responses.csv, "data/items/${{item}}.parquet"]
      params: ["benchmarks.${{item}}.responses"]
      outs:
        - data/responses/${{item}}.parquet
        - data/collect/${{item}}.samples.parquet
        - metrics/collect/${{item}}.json:
            cache: false
  check:
    foreach: [toy]
    do:
      cmd: python {code}/pipelines/check.py --benchmark ${{item}}
      deps: ["data/responses/${{item}}.parquet"]
      params: [check]
      outs:
        - reports/check/${{item}}.md
        - plots/check/${{item}}.png
        - metrics/check/${{item}}.json:
            cache: false
"""


def _env() -> dict[str, str]:
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(CODE),
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }


def _run(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=root, env=_env(), capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for d in ("data/items", "data/responses", "data/collect", "metrics", "reports", "plots")
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


@pytest.mark.long(seconds=45)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_failed_repro_names_the_restore_command_and_it_restores(tmp_path: Path) -> None:
    root = write_toy_project(tmp_path / "repo")
    (root / "dvc.yaml").write_text(DVC_YAML.format(code=CODE))
    _run(root, "git", "init", "-q")
    _run(root, "dvc", "init", "-q")
    _run(root, "dvc", "repro", "-q")
    _run(root, "git", "add", "-A")
    _run(root, "git", "commit", "-qm", "good run")
    good = _digests(root)
    assert "metrics/check/toy.json" in good and "reports/check/toy.md" in good

    params = yaml.safe_load((root / "params.yaml").read_text())
    params["check"]["list_limit"] = 0  # a bad edit: the check stage re-runs and fails
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    failed = _run(root, "dvc", "repro", ok=False)
    assert failed.returncode != 0
    assert "Traceback" not in failed.stdout + failed.stderr
    lines = [ln for ln in failed.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, failed.stderr
    assert "check.list_limit" in lines[0]
    assert not (root / "metrics/check/toy.json").exists()  # DVC removed the outputs

    command = lines[0].split("restore the last good ones with: ", 1)[1]
    assert command == ("git checkout HEAD -- metrics/check/toy.json && dvc checkout check@toy")
    _run(root, "bash", "-c", command)
    assert _digests(root) == good
