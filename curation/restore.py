"""What to run after a failed ``dvc repro`` to get the last good outputs back.

DVC deletes a stage's outputs before it runs the stage's command, so a stage that fails
under ``dvc repro`` leaves them missing even though the stage itself writes nothing
until it has succeeded (``curation.io.atomic.all_or_nothing``). The last good outputs
are still recorded: cached outputs in DVC's cache (``dvc checkout``), ``cache: false``
outputs (metrics) in git. :func:`restore_hint` names the one command line that brings
back both for the failed stage.
"""

from __future__ import annotations

import shlex
from pathlib import Path


def uncached_outputs(stage: str, root: Path | None = None) -> list[str]:
    """The ``cache: false`` outputs of ``stage`` (e.g. ``annotate@gsm8k``) in dvc.yaml."""
    try:
        from dvc.repo import Repo

        with Repo(str(root or Path.cwd())) as repo:
            return sorted(
                str(out.def_path)
                for st in repo.stage.collect(stage)
                for out in st.outs
                if not out.use_cache
            )
    except Exception:  # no DVC project, or dvc.yaml unreadable: only the cached part
        return []


def restore_command(stage: str, root: Path | None = None) -> str:
    """``git checkout HEAD -- <metrics> && dvc checkout <stage>`` (the git part if any)."""
    command = f"dvc checkout {shlex.quote(stage)}"
    uncached = uncached_outputs(stage, root)
    if uncached:
        paths = " ".join(shlex.quote(p) for p in uncached)
        command = f"git checkout HEAD -- {paths} && {command}"
    return command


def restore_hint(stage: str, root: Path | None = None) -> str:
    """The line printed after ``stage`` failed under ``dvc repro``: why its outputs are
    gone and the command that restores the last good ones."""
    return (
        f"DVC removed {stage}'s outputs before running it; restore the last good ones "
        f"with: {restore_command(stage, root)}"
    )
