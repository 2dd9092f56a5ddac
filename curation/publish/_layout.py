"""Layout of a built dataset folder, shared by the build and the publisher (no heavy imports)."""

from __future__ import annotations

from pathlib import Path

MANIFEST = "manifest.json"
PUBLISHED = "published_item"
"""The record type of every config but the estimation ones."""
PUBLISHED_ESTIMATE = "published_estimate_item"
"""The record type of an ``estimate-<m>`` config (a published item plus its weight) and
of an ``adaptive-<m>`` config (an adaptive test's start items, weight 1/start)."""
ESTIMATE_CONFIG_PREFIX = "estimate-"
ADAPTIVE_CONFIG_PREFIX = "adaptive-"


def record_schema(config: str) -> str:
    """The record type (schemas/<name>.schema.json) of a config's records."""
    estimation = config.startswith((ESTIMATE_CONFIG_PREFIX, ADAPTIVE_CONFIG_PREFIX))
    return PUBLISHED_ESTIMATE if estimation else PUBLISHED


SPLIT = "test"
UPLOADED_TOP = ("README.md", "CHANGELOG.md")
UPLOADED_DIRS = ("data", "figures")


def upload_files(dataset_dir: str | Path) -> list[str]:
    """Repository paths (posix, sorted) of the files a build publishes: the card, the
    changelog, ``data/<config>/*.parquet`` and ``figures/*`` (not ``disk/`` or the manifest)."""
    root = Path(dataset_dir)
    out = [name for name in UPLOADED_TOP if (root / name).is_file()]
    for folder in UPLOADED_DIRS:
        base = root / folder
        if base.is_dir():
            out += [p.relative_to(root).as_posix() for p in base.rglob("*") if p.is_file()]
    return sorted(out)
