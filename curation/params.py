"""Reading ``params.yaml`` from disk, and the check that a file it names exists.

The file's content is validated once, into :class:`curation.params_model.ParamsFile`
(``read_params``): the object every stage takes its settings (and seeds) from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from curation.errors import ConfigError, InputError


def load_params(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Load the params file as a dict (an empty file is an empty dict)."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: not found (run from the project folder, or pass --params)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return data


def require_file(path: Path, *, params_file: str, key: str) -> Path:
    """Fail with the params key that names ``path`` when the file is missing."""
    if not path.exists():
        raise InputError(f"file {path} does not exist", file=params_file, field=key)
    return path
