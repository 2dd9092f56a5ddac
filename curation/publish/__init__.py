"""Versioned Hugging Face datasets with cards, and publishing them (SPEC §8).

* :func:`build_dataset` (:class:`BuildInputs` → :class:`BuildResult`) — configs
  ``original``, ``filled`` (original + human-accepted additions) and
  ``calibrated-<target>-<m>`` and ``estimate-<m>`` (with weights); typed :func:`hf_features` from
  ``schemas/published_item.schema.json``; parquet shards + ``save_to_disk`` copies, card,
  figures, CHANGELOG and a semantic version under ``dist/<benchmark>/<version>/``.
* :func:`publish` — the explicit upload (one commit + tag), refusing invalid, simulated
  or not human-accepted records; idempotent per version. :func:`check_dataset_dir` is
  its local gate, :func:`resolve_dataset_dir` maps ``DATASET`` to a build folder.
* :class:`SemVer`, :func:`diff_records`, :func:`changelog_section` — versioning;
  :func:`record_release` — a version as released in ``releases/<b>.json``.

Exports resolve lazily, so ``curate publish`` does not import ``datasets`` or matplotlib.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.publish._build import (
        BuildInputs,
        BuildResult,
        CardOptions,
        EstimationSubsetInput,
        SubsetInput,
        build_dataset,
    )
    from curation.publish._card import card_metadata, render_card
    from curation.publish._checks import Problem, PublishRefused, check_publishable, record_problems
    from curation.publish._features import hf_features
    from curation.publish._layout import upload_files
    from curation.publish._records import calibration_id, difficulty_sources
    from curation.publish._settings import BuildSettings, CardSettings
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

_EXPORTS = {
    "BuildSettings": "_settings",
    "CardSettings": "_settings",
    "BuildInputs": "_build",
    "BuildResult": "_build",
    "CardOptions": "_build",
    "EstimationSubsetInput": "_build",
    "Diff": "_version",
    "Problem": "_checks",
    "PublishRefused": "_checks",
    "PublishResult": "hub",
    "SemVer": "_version",
    "SubsetInput": "_build",
    "build_dataset": "_build",
    "calibration_id": "_records",
    "card_metadata": "_card",
    "card_repo_id": "hub",
    "changelog_section": "_version",
    "check_dataset_dir": "hub",
    "check_publishable": "_checks",
    "diff_records": "_version",
    "difficulty_sources": "_records",
    "hf_features": "_features",
    "publish": "hub",
    "record_problems": "_checks",
    "record_release": "_version",
    "render_card": "_card",
    "resolve_dataset_dir": "hub",
    "upload_files": "_layout",
}

__all__ = [
    "BuildSettings",
    "CardSettings",
    "BuildInputs",
    "BuildResult",
    "CardOptions",
    "Diff",
    "EstimationSubsetInput",
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

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
