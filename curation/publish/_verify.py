"""Is a built folder what the build made? Hashes recomputed from the files, never trusted.

``manifest.json`` lives inside ``dist/`` beside the files it describes, so whoever edits a
parquet can edit its hash there too. The publish gate therefore compares every file of
the build folder (``disk/`` copies and the manifest included) with a record kept
*outside* ``dist/``:

1. ``metrics/build/<b>.json`` (``files``: the folder the build stage last wrote -> path
   -> sha256), committed to git; else
2. ``.build-records/<b>/<folder>.json``: the same hashes, written by the build that made
   the folder (untracked, like ``dist/``: an older version built in this checkout); else
3. ``dvc.lock``: the build stage's ``dist/<b>`` output is a directory whose listing
   (path -> md5, every version kept) is in the DVC cache.

With neither, or with any difference, nothing is published.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from curation.errors import InputError
from curation.publish._checks import PublishRefused
from curation.publish._layout import MANIFEST


def _digest(path: Path, algorithm: str) -> str:
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def build_files(dataset_dir: Path) -> list[str]:
    """Every file of a build folder (posix paths relative to it), ``disk/`` included."""
    return sorted(
        p.relative_to(dataset_dir).as_posix() for p in dataset_dir.rglob("*") if p.is_file()
    )


def file_hashes(dataset_dir: Path, algorithm: str = "sha256") -> dict[str, str]:
    """path -> hex digest of every file of ``dataset_dir``."""
    return {rel: _digest(dataset_dir / rel, algorithm) for rel in build_files(dataset_dir)}


def read_manifest(dataset_dir: Path) -> dict[str, Any]:
    """``manifest.json`` as a mapping; a truncated or edited one is an InputError."""
    path = dataset_dir / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise InputError(
            f"not valid JSON ({exc}); the build folder is damaged: rebuild it with `dvc repro`",
            file=str(path),
        ) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files", {}), dict):
        raise InputError(
            "expected an object with a `files` mapping; rebuild it with `dvc repro`",
            file=str(path),
        )
    return manifest


def _from_build_metrics(dataset_dir: Path, benchmark: str) -> dict[str, str] | None:
    from curation.paths import build_metrics_path

    path = build_metrics_path(benchmark)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    files = (record.get("files") or {}).get(dataset_dir.name)
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else None


def _from_build_record(dataset_dir: Path, benchmark: str) -> dict[str, str] | None:
    from curation.paths import build_record_path

    try:
        record = json.loads(
            build_record_path(benchmark, dataset_dir.name).read_text(encoding="utf-8")
        )
    except (OSError, ValueError):
        return None
    files = record.get("files") if isinstance(record, dict) else None
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else None


def _from_dvc_lock(dataset_dir: Path) -> dict[str, str] | None:
    """path (relative to ``dataset_dir``) -> md5, from dvc.lock and the DVC cache."""
    root = Path.cwd()
    try:
        lock = yaml.safe_load((root / "dvc.lock").read_text(encoding="utf-8")) or {}
        target = dataset_dir.resolve().relative_to(root.resolve())
    except (OSError, ValueError, yaml.YAMLError):
        return None
    for stage in (lock.get("stages") or {}).values():
        for out in stage.get("outs") or []:
            md5 = str(out.get("md5") or "")
            prefix = Path(str(out.get("path", "")))
            if not md5.endswith(".dir") or not target.is_relative_to(prefix):
                continue
            listing = root / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]
            try:
                entries = json.loads(listing.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
            inner = target.relative_to(prefix).as_posix()
            out_files = {
                str(e["relpath"])[len(inner) + 1 :]: str(e["md5"])
                for e in entries
                if str(e.get("relpath", "")).startswith(inner + "/")
            }
            return out_files or None
    return None


def verify_build(dataset_dir: Path, *, benchmark: str) -> str:
    """Raise PublishRefused unless every file matches the outside record; returns its name."""
    record, algorithm, source = _from_build_metrics(dataset_dir, benchmark), "sha256", ""
    if record is not None:
        source = f"metrics/build/{benchmark}.json"
    elif (record := _from_build_record(dataset_dir, benchmark)) is not None:
        from curation.paths import build_record_path

        source = build_record_path(benchmark, dataset_dir.name).as_posix()
    else:
        record, algorithm, source = _from_dvc_lock(dataset_dir), "md5", "dvc.lock"
    if record is None:
        raise PublishRefused(
            f"refusing to publish: no record of {dataset_dir} outside dist/ (neither metrics/"
            f"build/{benchmark}.json, .build-records/ nor dvc.lock lists it); "
            f"rebuild it with `dvc repro build@{benchmark}`"
        )
    local = file_hashes(dataset_dir, algorithm)
    changed = sorted(rel for rel in local if record.get(rel) != local[rel])
    missing = sorted(set(record) - set(local))
    if changed or missing:
        what = ", ".join([*changed[:5], *(f"{m} (missing)" for m in missing[:5])])
        raise PublishRefused(
            f"refusing to publish: {dataset_dir} differs from the build recorded in {source} "
            f"({len(changed) + len(missing)} file(s): {what}); rebuild it with "
            f"`dvc repro build@{benchmark}`"
        )
    return source
