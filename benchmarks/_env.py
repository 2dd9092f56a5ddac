"""The environment a benchmark runs a project's stages or ``dvc`` in: this venv's tools
first, the project itself on the import path, nothing online (shared by the bench
scripts that start stage processes)."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def env_for(root: Path) -> dict[str, str]:
    """os.environ with the venv's bin first, ``root`` as PYTHONPATH, every hub offline."""
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        PATH=f"{venv_bin}:{env.get('PATH', '')}",
        PYTHONPATH=str(root),
        DVC_NO_ANALYTICS="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    return env
