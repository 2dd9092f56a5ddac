"""``curate publish``: upload one built dataset version to the Hugging Face Hub.

Never a DVC side effect. The gate runs before any network call: every record is
validated, and simulated or not human-accepted records are refused by item. Then, with
``huggingface_hub``: create the dataset repo if missing, upload the build in ONE commit
(files no longer in the build are deleted in that same commit) and tag it with the
version. Publishing the same version with the same content again changes nothing
("already published"); different content under an existing tag is refused.

The token is read from the environment variable ``token_env`` and never printed.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl
import yaml

from curation.errors import CurationError
from curation.publish._checks import PublishRefused, check_publishable
from curation.publish._layout import MANIFEST, upload_files
from curation.publish._verify import read_manifest, verify_build
from curation.publish._version import SemVer

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
KEEP_REMOTE = {".gitattributes"}

Status = Literal["dry-run", "published", "already-published"]


@dataclass(frozen=True)
class LocalFile:
    path: str
    size: int
    sha256: str
    git_sha1: str


@dataclass(frozen=True)
class PublishResult:
    """The outcome of one publish: repository, version, status, the files and what the
    Hub commit changed or deleted."""

    repo_id: str
    version: str
    status: Status
    files: list[LocalFile]
    commit: str | None = None
    created_repo: bool = False
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """What ``curate publish`` prints: the files a dry run would upload, or what the
        upload changed, deleted and tagged (or that this version was already there)."""
        if self.status == "dry-run":
            total = sum(f.size for f in self.files)
            lines = [
                f"dry run: would upload {len(self.files)} file(s), {total} bytes, to dataset "
                f"{self.repo_id} in one commit and tag it {self.version}:"
            ]
            lines += [f"  {f.path}  ({f.size} bytes, sha256 {f.sha256[:12]})" for f in self.files]
            return "\n".join(lines)
        if self.status == "already-published":
            return (
                f"{self.repo_id}@{self.version}: already published with the same content "
                f"(commit {self.commit}); nothing uploaded"
            )
        made = "created repo, " if self.created_repo else ""
        return (
            f"{self.repo_id}@{self.version}: {made}one commit {self.commit} "
            f"({len(self.changed)} file(s) uploaded, {len(self.deleted)} deleted), "
            f"tagged {self.version}"
        )


def resolve_dataset_dir(dataset: str, version: str, *, dist: str | Path = "dist") -> Path:
    """``DATASET`` is a benchmark name (→ ``dist/<name>/<name>-<version>``) or a built folder."""
    path = Path(dataset)
    if path.is_dir() and (path / MANIFEST).is_file():
        return path
    candidate = Path(dist) / dataset / f"{dataset}-{version}"
    if candidate.is_dir():
        return candidate
    raise CurationError(
        f"no build of {dataset!r} version {version} at {candidate} (dist/{dataset}/ holds the "
        f"last build alone); bring back the commit that built it with `git checkout <commit> "
        f"-- dvc.lock && dvc checkout build@{dataset}`, or set build.version to {version} "
        f"(or 'auto') and run `dvc repro build@{dataset}`"
    )


def card_repo_id(dataset_dir: str | Path) -> str | None:
    """The repository the built card's ``load_dataset(...)`` example names (None: no card,
    or no example): a publish to another repository warns that the card misleads."""
    card = Path(dataset_dir) / "README.md"
    if not card.is_file():
        return None
    found = re.search(r'load_dataset\("([^"]+)"', card.read_text(encoding="utf-8"))
    return found.group(1) if found else None


def card_license(dataset_dir: str | Path) -> str | None:
    """The ``license:`` of the built card's YAML header (None: no card or no header)."""
    card = Path(dataset_dir) / "README.md"
    if not card.is_file():
        return None
    found = re.match(r"---\n(.*?)\n---", card.read_text(encoding="utf-8"), re.S)
    header = yaml.safe_load(found.group(1)) if found else None
    value = header.get("license") if isinstance(header, dict) else None
    return str(value) if value is not None else None


def _hashes(path: Path) -> tuple[str, str, int]:
    data = path.read_bytes()
    sha256 = hashlib.sha256(data).hexdigest()
    git = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    return sha256, git, len(data)


def local_files(dataset_dir: Path) -> list[LocalFile]:
    """The files a build publishes, with their size, sha256 and git blob sha1: a Hub file
    whose LFS sha256 or blob id matches is not uploaded again."""
    out = []
    for rel in upload_files(dataset_dir):
        sha256, git, size = _hashes(dataset_dir / rel)
        out.append(LocalFile(rel, size, sha256, git))
    return out


def _read_frames(dataset_dir: Path) -> tuple[dict[str, pl.DataFrame], dict[str, str]]:
    frames: dict[str, pl.DataFrame] = {}
    files: dict[str, str] = {}
    data = dataset_dir / "data"
    for folder in sorted(p for p in data.iterdir() if p.is_dir()) if data.is_dir() else []:
        shards = sorted(folder.glob("*.parquet"))
        if shards:
            frames[folder.name] = pl.concat([pl.read_parquet(s) for s in shards])
            files[folder.name] = str(folder)
    return frames, files


def check_dataset_dir(dataset_dir: str | Path, *, version: str) -> list[LocalFile]:
    """The local gate: the build is this version, complete, unmodified, and every record
    valid, human-accepted where needed and not simulated. Returns the files to upload."""
    root = Path(dataset_dir)
    try:
        SemVer.parse(version)
    except ValueError as exc:
        raise CurationError(f"--version: {exc}") from None
    manifest_path = root / MANIFEST
    if not manifest_path.is_file() or not (root / "README.md").is_file():
        raise CurationError(f"{root}: not a built dataset (no {MANIFEST} or README.md)")
    manifest = read_manifest(root)
    if manifest.get("version") != version:
        raise PublishRefused(
            f"refusing to publish: {root} was built as version {manifest.get('version')!r}, "
            f"not {version!r}"
        )
    frames, files = _read_frames(root)
    if not frames:
        raise PublishRefused(f"refusing to publish: {root}/data holds no parquet shard")
    check_publishable(frames, files=files)
    listed = manifest.get("files") or {}
    local = local_files(root)
    modified = [f.path for f in local if listed.get(f.path, {}).get("sha256") != f.sha256]
    missing = sorted(set(listed) - {f.path for f in local})
    if modified or missing:
        what = ", ".join((modified + missing)[:5])
        raise PublishRefused(
            f"refusing to publish: {root} changed since it was built ({what}); rebuild it"
        )
    # the manifest sits beside the files: the check that counts is against a record
    # kept outside dist/ (the build metrics in git, or dvc.lock), disk/ copies included
    verify_build(root, benchmark=str(manifest.get("benchmark") or root.parent.name))
    return local


def _remote_matches(entry: Any, local: LocalFile) -> bool:
    if getattr(entry, "lfs", None) is not None:
        return entry.lfs.sha256 == local.sha256
    return entry.blob_id == local.git_sha1


def _remote_tree(api: Any, repo_id: str, revision: str) -> dict[str, Any]:
    """path -> RepoFile at ``revision`` ({} for a repository without that revision yet)."""
    from huggingface_hub.errors import RevisionNotFoundError
    from huggingface_hub.hf_api import RepoFile

    try:
        entries = list(
            api.list_repo_tree(repo_id, repo_type="dataset", revision=revision, recursive=True)
        )
    except RevisionNotFoundError:
        return {}
    return {e.path: e for e in entries if isinstance(e, RepoFile) and e.path not in KEEP_REMOTE}


def _compare(remote: dict[str, Any], local: list[LocalFile]) -> tuple[list[str], list[str]]:
    """(local files that differ from / are missing in remote, remote files not in local)."""
    changed = [
        f.path for f in local if f.path not in remote or not _remote_matches(remote[f.path], f)
    ]
    extra = sorted(set(remote) - {f.path for f in local})
    return changed, extra


def _scrub(text: str, token: str) -> str:
    return text.replace(token, "***") if token else text


def publish(
    dataset_dir: str | Path,
    *,
    repo_id: str,
    version: str,
    dry_run: bool = False,
    token_env: str = "HF_TOKEN",
    allow_unknown_license: bool = False,
) -> PublishResult:
    """Publish the build in ``dataset_dir`` as ``repo_id`` (a dataset repo) at ``version``.

    A card whose license is ``unknown`` (what `curate benchmark add` writes when no
    ``--license`` is given) is refused, in a dry run too, unless ``allow_unknown_license``:
    publishing someone's items without their terms is a decision, not a default."""
    if not REPO_ID.match(repo_id):
        raise CurationError(f"--repo-id: expected ORG/NAME, got {repo_id!r}")
    root = Path(dataset_dir)
    local = check_dataset_dir(root, version=version)
    if card_license(root) == "unknown" and not allow_unknown_license:
        raise PublishRefused(
            f"{root / 'README.md'}: license: unknown; set the source's license (an SPDX id "
            "such as MIT or CC-BY-4.0) as benchmarks.<name>.license in params.yaml and "
            "rebuild with `dvc repro`, or pass --allow-unknown-license"
        )
    if dry_run:
        return PublishResult(repo_id, version, "dry-run", local)
    token = os.environ.get(token_env, "")
    if not token:
        raise CurationError(
            f"no Hugging Face token: set the environment variable {token_env} to a write token "
            "(it is read from the environment only and never printed)"
        )
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        raise CurationError("HF_HUB_OFFLINE is set: unset it to publish (publishing needs the Hub)")
    if not sys.stderr.isatty():
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()
    try:
        return _publish_online(root, local, repo_id=repo_id, version=version, token=token)
    except CurationError:
        raise
    except Exception as exc:  # HTTP and client errors: report without the token
        from huggingface_hub.errors import HfHubHTTPError

        if isinstance(exc, HfHubHTTPError | OSError | ValueError):
            raise CurationError(
                f"publishing {repo_id}@{version} failed: {_scrub(str(exc), token)}"
            ) from None
        raise


def _publish_online(
    root: Path, local: list[LocalFile], *, repo_id: str, version: str, token: str
) -> PublishResult:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    api = HfApi(token=token)
    created = False
    if not api.repo_exists(repo_id, repo_type="dataset"):
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        created = True
    refs = api.list_repo_refs(repo_id, repo_type="dataset")
    tags = {t.name: t.target_commit for t in refs.tags}
    if version in tags:
        changed, extra = _compare(_remote_tree(api, repo_id, tags[version]), local)
        if not changed and not extra:
            return PublishResult(repo_id, version, "already-published", local, tags[version])
        diff = ", ".join((changed + extra)[:5]) + (" …" if len(changed) + len(extra) > 5 else "")
        raise PublishRefused(
            f"refusing to publish: tag {version} of {repo_id} already holds different content "
            f"({len(changed) + len(extra)} file(s) differ: {diff}); versions are immutable — "
            "build and publish a new version instead"
        )
    newer = sorted(
        (t for t in tags if SemVer.is_valid(t) and SemVer.parse(t) > SemVer.parse(version)),
        key=SemVer.parse,
    )
    if newer:
        raise PublishRefused(
            f"refusing to publish: {repo_id} already has the newer version {newer[-1]}; "
            f"publishing {version} now would move main backwards (versions go out in order)"
        )
    branches = {b.name: b.target_commit for b in refs.branches}
    changed, extra = _compare(_remote_tree(api, repo_id, "main"), local)
    if not changed and not extra and "main" in branches:
        commit = branches["main"]  # main already holds exactly this build: tag it, no commit
    else:
        ops: list[Any] = [CommitOperationAdd(f.path, str(root / f.path)) for f in local]
        ops += [CommitOperationDelete(path) for path in extra]
        info = api.create_commit(
            repo_id,
            operations=ops,
            commit_message=f"benchcurate {root.parent.name} {version}",
            commit_description=f"Dataset version {version} built by benchcurate.",
            repo_type="dataset",
            parent_commit=branches.get("main"),  # fail rather than clobber a concurrent push
        )
        commit = info.oid
    api.create_tag(
        repo_id, tag=version, revision=commit, repo_type="dataset", tag_message=f"version {version}"
    )
    return PublishResult(
        repo_id, version, "published", local, commit, created, changed=changed, deleted=extra
    )
