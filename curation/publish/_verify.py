"""Is a built folder what the build made? Hashes recomputed from the files, never trusted.

``manifest.json`` lives inside ``dist/`` beside the files it describes, so whoever edits a
parquet can edit its hash there too. The publish gate therefore compares every file of
the build folder (``disk/`` copies and the manifest included) with a record kept
*outside* ``dist/``:

1. ``dvc.lock`` (committed): the build stage's ``dist/<b>`` output is a folder whose
   listing (path -> md5) is a content-addressed file in the DVC cache, trusted only when
   its own md5 is the name dvc.lock gives it; else
2. ``metrics/build/<b>.json`` (``files``: the folder the build stage wrote -> path ->
   sha256), committed to git, and itself checked against its md5 in dvc.lock when the
   lock records it (a stage run outside DVC has no lock).

Nothing written beside the build counts: an older folder (``dist/<b>/`` holds the
current build alone) or a folder edited together with any record next to it is refused.
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


def _lock_outs(root: Path) -> dict[str, str]:
    """Every output path dvc.lock records -> its md5 (empty without a readable dvc.lock)."""
    try:
        lock = yaml.safe_load((root / "dvc.lock").read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}
    return {
        str(out.get("path", "")): str(out.get("md5") or "")
        for stage in (lock.get("stages") or {}).values()
        if isinstance(stage, dict)
        for out in stage.get("outs") or []
        if isinstance(out, dict)
    }


def _from_build_metrics(benchmark: str, folder: str, lock: dict[str, str]) -> dict[str, str]:
    """path -> sha256 of ``folder`` from metrics/build/<b>.json, which must itself be the
    one dvc.lock records (when it records one)."""
    from curation.paths import build_metrics_path

    path = build_metrics_path(benchmark)
    try:
        data = path.read_bytes()
        record = json.loads(data)
    except (OSError, ValueError):
        return {}
    locked = lock.get(path.as_posix())
    if locked and hashlib.md5(data).hexdigest() != locked:
        raise PublishRefused(
            f"refusing to publish: {path} differs from the one dvc.lock records (edited after "
            f"the build?); rebuild with `dvc repro build@{benchmark}`"
        )
    files = (record.get("files") or {}).get(folder) if isinstance(record, dict) else None
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def _from_dvc_lock(dataset_dir: Path, lock: dict[str, str]) -> dict[str, str]:
    """path (relative to ``dataset_dir``) -> md5, from the folder listing dvc.lock names.

    The listing is a content-addressed file in the DVC cache: it is trusted only when its
    own md5 is the name dvc.lock gives it."""
    root = Path.cwd()
    try:
        target = dataset_dir.resolve().relative_to(root.resolve())
    except ValueError:
        return {}
    for out_path, md5 in lock.items():
        prefix = Path(out_path)
        if not md5.endswith(".dir") or not target.is_relative_to(prefix) or target == prefix:
            continue
        listing = root / ".dvc" / "cache" / "files" / "md5" / md5[:2] / md5[2:]
        try:
            data = listing.read_bytes()
            entries = json.loads(data)
        except (OSError, ValueError):
            return {}
        if hashlib.md5(data).hexdigest() + ".dir" != md5 or not isinstance(entries, list):
            return {}
        inner = target.relative_to(prefix).as_posix()
        return {
            str(e["relpath"])[len(inner) + 1 :]: str(e["md5"])
            for e in entries
            if isinstance(e, dict) and str(e.get("relpath", "")).startswith(inner + "/")
        }
    return {}


def verify_build(dataset_dir: Path, *, benchmark: str) -> str:
    """Raise PublishRefused unless every file matches what dvc.lock (else the build's
    committed metrics) records for this folder; returns the record's name."""
    lock = _lock_outs(Path.cwd())
    record, algorithm, source = _from_dvc_lock(dataset_dir, lock), "md5", "dvc.lock"
    if not record:
        record = _from_build_metrics(benchmark, dataset_dir.name, lock)
        algorithm, source = "sha256", f"metrics/build/{benchmark}.json"
    if not record:
        raise PublishRefused(
            f"refusing to publish: {dataset_dir} is not the build that dvc.lock or metrics/"
            f"build/{benchmark}.json records; rebuild it with `dvc repro build@{benchmark}`, "
            "or bring back an older build with `git checkout <commit> -- dvc.lock && "
            f"dvc checkout build@{benchmark}`"
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
