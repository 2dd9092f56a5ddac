"""A stage that fails under real `dvc repro` costs no output.

With `persist: true` (as the project's dvc.yaml declares every output) DVC leaves the
outputs in place while the stage runs and the stage replaces them only when it has
succeeded: a raise, a missing dependency or a bad params value leave them byte for byte,
and the failure says so. A dvc.yaml without `persist` (DVC deletes the outputs first)
gets the one command that restores a consistent set -- or is told that none can, when
the metrics in git are not from the run dvc.lock records. Kept small on purpose: three
stages of the toy project, code run from this checkout (no code deps to hash).
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
      outs:
        - data/items/${{item}}.parquet{persist}
  responses:
    foreach: [toy]
    do:
      cmd: python {code}/pipelines/responses.py --benchmark ${{item}}
      deps: [raw/responses.csv, "data/items/${{item}}.parquet"]
      params: ["benchmarks.${{item}}.responses"]
      outs:
        - data/responses/${{item}}.parquet{persist}
        - data/collect/${{item}}.samples.parquet{persist}
        - metrics/collect/${{item}}.json:
            cache: false{persist_opt}
  check:
    foreach: [toy]
    do:
      cmd: python {code}/pipelines/check.py --benchmark ${{item}}
      deps: ["data/responses/${{item}}.parquet"]
      params: [check]
      outs:
        - reports/check/${{item}}.md{persist}
        - plots/check/${{item}}.png{persist}
        - metrics/check/${{item}}.json:
            cache: false{persist_opt}
"""
PERSIST = {"persist": ": {persist: true}", "persist_opt": "\n            persist: true"}
NO_PERSIST = {"persist": "", "persist_opt": ""}


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


def _repo(tmp_path: Path, marks: dict[str, str]) -> Path:
    root = write_toy_project(tmp_path / "repo")
    (root / "dvc.yaml").write_text(DVC_YAML.format(code=CODE, **marks))
    _run(root, "git", "init", "-q")
    _run(root, "dvc", "init", "-q")
    _run(root, "dvc", "repro", "-q")
    _run(root, "git", "add", "-A")
    _run(root, "git", "commit", "-qm", "good run")
    return root


def _set_params(root: Path, section: str, key: str, value: object) -> None:
    params = yaml.safe_load((root / "params.yaml").read_text())
    params[section][key] = value
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


@pytest.mark.long(seconds=45)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_with_persist_a_failure_leaves_every_output_and_the_fix_reruns_clean(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path, PERSIST)
    good = _digests(root)
    lock = (root / "dvc.lock").read_bytes()
    # a bad params value: the stage raises, its outputs stay, the line says so
    _set_params(root, "check", "list_limit", 0)
    failed = _run(root, "dvc", "repro", ok=False)
    assert failed.returncode != 0 and "Traceback" not in failed.stdout + failed.stderr
    lines = [ln for ln in failed.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1 and "check.list_limit" in lines[0], failed.stderr
    assert lines[0].endswith("check@toy's outputs are unchanged (the last good run's)")
    assert _digests(root) == good
    # a missing dependency: DVC stops before the stage, nothing is touched
    _set_params(root, "check", "list_limit", 5)
    (root / "raw/responses.csv").rename(root / "raw/moved.csv")
    failed = _run(root, "dvc", "repro", ok=False)
    assert failed.returncode != 0 and "Traceback" not in failed.stdout + failed.stderr
    assert _digests(root) == good
    # the fix: the same outputs, the same lock, byte for byte
    (root / "raw/moved.csv").rename(root / "raw/responses.csv")
    _run(root, "dvc", "repro")
    assert _digests(root) == good and (root / "dvc.lock").read_bytes() == lock
    assert not (root / ".curate-tmp").exists()


@pytest.mark.long(seconds=45)
@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_without_persist_the_printed_command_restores_one_run_or_says_it_cannot(
    tmp_path: Path,
) -> None:
    root = _repo(tmp_path, NO_PERSIST)
    good = _digests(root)
    assert "metrics/check/toy.json" in good and "reports/check/toy.md" in good

    _set_params(root, "check", "list_limit", 0)  # a bad edit: check re-runs and fails
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

    # a good run that was never committed: git's metrics are not the ones dvc.lock records
    _set_params(root, "check", "list_limit", 5)
    raw = root / "raw/responses.csv"
    raw.write_text(raw.read_text().replace("weak,q0,2,1", "weak,q0,2,2", 1))
    _run(root, "dvc", "repro")
    _set_params(root, "check", "list_limit", 0)
    failed = _run(root, "dvc", "repro", ok=False)
    lines = [ln for ln in failed.stderr.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1 and "cannot be restored as one run" in lines[0], failed.stderr
