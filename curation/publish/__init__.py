"""Versioned Hugging Face datasets with cards, and publishing them (SPEC §8).

* :func:`build_dataset` (:class:`BuildInputs` → :class:`BuildResult`) — configs
  ``original``, ``filled`` (original + human-accepted additions) and
  ``calibrated-<target>-<m>``; typed :func:`hf_features` from
  ``schemas/published_item.schema.json``; parquet shards + ``save_to_disk`` copies, card,
  figures, CHANGELOG and a semantic version under ``dist/<benchmark>/<version>/``.
* :func:`publish` — the explicit upload (one commit + tag), refusing invalid, simulated
  or not human-accepted records; idempotent per version. :func:`check_dataset_dir` is
  its local gate, :func:`resolve_dataset_dir` maps ``DATASET`` to a build folder.
* :class:`SemVer`, :func:`diff_records`, :func:`changelog_section` — versioning;
  :func:`record_release` — a version as released in ``releases/<b>.json``.

Exports resolve lazily, so ``curate publish`` does not import ``datasets`` or matplotlib.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "BuildInputs": "_build",
    "BuildResult": "_build",
    "CardOptions": "_build",
    "SubsetInput": "_build",
    "build_dataset": "_build",
    "card_metadata": "_card",
    "render_card": "_card",
    "Problem": "_checks",
    "PublishRefused": "_checks",
    "check_publishable": "_checks",
    "record_problems": "_checks",
    "hf_features": "_features",
    "upload_files": "_layout",
    "calibration_id": "_records",
    "difficulty_sources": "_records",
    "Diff": "_version",
    "SemVer": "_version",
    "changelog_section": "_version",
    "diff_records": "_version",
    "record_release": "_version",
    "PublishResult": "hub",
    "card_repo_id": "hub",
    "check_dataset_dir": "hub",
    "publish": "hub",
    "resolve_dataset_dir": "hub",
}

__all__ = [
    "BuildInputs",
    "BuildResult",
    "CardOptions",
    "Diff",
    "Problem",
    "PublishRefused",
    "PublishResult",
    "SemVer",
    "SubsetInput",
    "build_dataset",
    "calibration_id",
    "card_metadata",
    "card_repo_id",
    "changelog_section",
    "check_dataset_dir",
    "check_publishable",
    "diff_records",
    "difficulty_sources",
    "hf_features",
    "publish",
    "record_problems",
    "record_release",
    "render_card",
    "resolve_dataset_dir",
    "upload_files",
]

if TYPE_CHECKING:
    from curation.publish._build import (
        BuildInputs,
        BuildResult,
        CardOptions,
        SubsetInput,
        build_dataset,
    )
    from curation.publish._card import card_metadata, render_card
    from curation.publish._checks import (
        Problem,
        PublishRefused,
        check_publishable,
        record_problems,
    )
    from curation.publish._features import hf_features
    from curation.publish._layout import upload_files
    from curation.publish._records import calibration_id, difficulty_sources
    from curation.publish._version import (
        Diff,
        SemVer,
        changelog_section,
        diff_records,
        record_release,
    )
    from curation.publish.hub import (
        PublishResult,
        card_repo_id,
        check_dataset_dir,
        publish,
        resolve_dataset_dir,
    )


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'curation.publish' has no attribute {name!r}")
    return getattr(importlib.import_module(f"curation.publish.{module}"), name)


def __dir__() -> list[str]:
    return __all__
