"""Helpers of the real-DVC tests: the two-benchmark toy project as a DVC repo, and runners.

Building the pipeline is what costs (every stage is a fresh Python process), so the
tests share one built repo (``built_repo`` in conftest.py) and work on copies of it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import REPO, TOY_ITEMS, TOY_PARAMS, add_imports_dir, write_toy_project

ENV = {
    **os.environ,
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    "DVC_NO_ANALYTICS": "1",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}

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
"""Every folder a stage writes: what a `dvc pull` must restore."""


@dataclass(frozen=True)
class BuiltRepo:
    """The toy repo after one full `dvc repro`, committed as ``baseline``."""

    path: Path
    first_repro: str
    """What that first `dvc repro` printed, stdout then stderr (which stages ran, warnings)."""


PER_BENCHMARK = ("ingest", "responses", "check", "annotate", "fill", "judge", "subsets", "build")


def run(
    root: Path, *args: str, ok: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a command in ``root`` with the project's own copy of the code importable."""
    full = {**ENV, "PYTHONPATH": str(root), **(env or {})}
    proc = subprocess.run(args, cwd=root, env=full, capture_output=True, text=True, timeout=900)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def dvc(root: Path, *args: str) -> str:
    return run(root, "dvc", *args).stdout


def curate(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    return run(root, sys.executable, "-m", "curation.cli", *args, ok=ok)


def ran(output: str) -> set[str]:
    """The stages a `dvc repro` / `dvc exp run` output says it ran."""
    return {line.split("'")[1] for line in output.splitlines() if line.startswith("Running stage")}


def digests(root: Path, folders: list[str]) -> dict[str, str]:
    out = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and ".gitignore" not in path.name:
                out[path.relative_to(root).as_posix()] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
    return out


def copy_repo(src: Path, dst: Path) -> Path:
    """A copy of a built repo (git, DVC cache, workspace): as good as rebuilding it.

    DVC's state database (.dvc/tmp) is left behind: the copy re-hashes its files."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("tmp", "__pycache__"))
    return dst


def write_dvc_project(root: Path) -> Path:
    """Two toy benchmarks (mirt needs two) with the real dvc.yaml and code, as a git+DVC
    repo. ``toy2`` has its own item texts, so the two builds hold different rows."""
    write_toy_project(root)
    (root / "raw2").mkdir()
    shutil.copyfile(root / "raw" / "responses.csv", root / "raw2" / "responses.csv")
    (root / "raw2" / "items.jsonl").write_text(
        "".join(
            json.dumps({**r, "prompt": f"Add {r['target']} and zero."}) + "\n" for r in TOY_ITEMS
        )
    )
    add_imports_dir(root, "toy2")
    second = (
        TOY_PARAMS.split("check:")[0]
        .replace("  toy:", "  toy2:", 1)
        .replace("raw/", "raw2/")
        .split("benchmarks:\n", 1)[1]
    )
    (root / "params.yaml").write_text(TOY_PARAMS.replace("check:", second + "check:", 1))
    bundled = "ecdf.csv: [uniform, gsm8k, math-l5, crux]"  # the plot's columns, ours
    dvc_yaml = (REPO / "dvc.yaml").read_text()
    assert bundled in dvc_yaml
    (root / "dvc.yaml").write_text(dvc_yaml.replace(bundled, "ecdf.csv: [uniform, toy, toy2]"))
    shutil.copyfile(REPO / ".gitignore", root / ".gitignore")
    for name in ("pipelines", "schemas", "curation"):
        shutil.copytree(REPO / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    run(root, "git", "init", "-q")
    # what `curate review export` writes before anyone reviewed: inputs of the build
    curate(root, "review", "export")
    dvc(root, "init", "-q")
    dvc(root, "config", "core.analytics", "false")
    # what `dvc plots show` renders with: the ECDF template and the page template
    shutil.copytree(REPO / ".dvc" / "plots", root / ".dvc" / "plots")
    shutil.copytree(REPO / "vendor", root / "vendor")
    dvc(root, "config", "plots.html_template", "../vendor/dvc-plots/template.html")
    return root
