"""What a failed ``dvc repro`` left, and the one command that restores a consistent set.

Every output in dvc.yaml is ``persist: true``, so DVC does not delete a stage's outputs
before it runs the stage; the stage writes nothing until it has succeeded
(``curation.io.atomic.all_or_nothing``), so a failure leaves the previous outputs byte
for byte. :func:`restore_hint` says so after a failure -- or, where outputs are missing
anyway (a dvc.yaml without ``persist``, a file deleted by hand), names the command that
brings back the last run dvc.lock records: the cached outputs with ``dvc checkout``, the
``cache: false`` ones (metrics, in git) with ``git checkout``. That pair belongs
together only when git's copies are the ones dvc.lock records; when they are not (the
last good run was never committed) no command can restore a consistent set, and the hint
says that instead of printing one that mixes two runs.
"""

from __future__ import annotations

import hashlib
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml


@dataclass(frozen=True)
class StageOutput:
    """One declared output of a stage: its path and whether DVC caches it."""

    path: str
    cached: bool


def stage_outputs(stage: str, root: Path | None = None) -> list[StageOutput]:
    """The outputs of ``stage`` (e.g. ``annotate@gsm8k``) in dvc.yaml (empty: unreadable)."""
    try:
        from dvc.repo import Repo

        with Repo(str(root or Path.cwd())) as repo:
            return sorted(
                (
                    StageOutput(str(out.def_path), bool(out.use_cache))
                    for st in repo.stage.collect(stage)
                    for out in st.outs
                ),
                key=lambda o: o.path,
            )
    except Exception:  # no DVC project, or dvc.yaml unreadable
        return []


def uncached_outputs(stage: str, root: Path | None = None) -> list[str]:
    """The ``cache: false`` outputs of ``stage`` in dvc.yaml."""
    return [o.path for o in stage_outputs(stage, root) if not o.cached]


def _locked_md5(stage: str, root: Path) -> dict[str, str]:
    """path -> md5 of the outputs dvc.lock records for ``stage``."""
    try:
        lock = yaml.safe_load((root / "dvc.lock").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    name, _, key = stage.partition("@")
    entry = (lock.get("stages") or {}).get(name) or {}
    if key and "outs" not in entry:
        entry = entry.get(key) or {}
    if "outs" not in entry:  # DVC 3 writes foreach stages as `name@key`
        entry = (lock.get("stages") or {}).get(stage) or {}
    return {str(o.get("path")): str(o.get("md5") or "") for o in entry.get("outs") or []}


def _git_md5(path: str, root: Path) -> str | None:
    """md5 of ``path`` as git HEAD has it (None: not in HEAD, or no git)."""
    try:
        blob = subprocess.run(
            ["git", "show", f"HEAD:{path}"], cwd=root, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return hashlib.md5(blob).hexdigest()


def restore_command(stage: str, root: Path | None = None) -> str | None:
    """``git checkout HEAD -- <metrics> && dvc checkout <stage>`` when git's copies are the
    ones dvc.lock records (one run); None when they are not."""
    root = root or Path.cwd()
    command = f"dvc checkout {shlex.quote(stage)}"
    uncached = uncached_outputs(stage, root)
    if not uncached:
        return command
    locked = _locked_md5(stage, root)
    if any(not locked.get(p) or _git_md5(p, root) != locked[p] for p in uncached):
        return None
    paths = " ".join(shlex.quote(p) for p in uncached)
    return f"git checkout HEAD -- {paths} && {command}"


def restore_hint(stage: str, root: Path | None = None) -> str:
    """The line printed after ``stage`` failed under ``dvc repro``."""
    root = root or Path.cwd()
    outputs = stage_outputs(stage, root)
    missing = [o.path for o in outputs if not (root / o.path).exists()]
    if outputs and not missing:
        return f"{stage}'s outputs are unchanged (the last good run's)"
    command = restore_command(stage, root)
    gone = ", ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
    if command is None:
        return (
            f"{stage}'s outputs are missing ({gone}) and cannot be restored as one run: the "
            "metrics in git HEAD are not those dvc.lock records (the last good run was not "
            f"committed); fix the input and rerun `dvc repro {stage}`"
        )
    return f"{stage}'s outputs are missing ({gone}); restore the last good ones with: {command}"
