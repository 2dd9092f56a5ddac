"""Semantic versions of a built dataset and the diff a CHANGELOG section lists.

The base is the last *release* (``releases/<benchmark>.json``, committed to git, written
when a version is published or `curate release`d), never the untracked ``dist/`` folder,
so every clone of a commit computes the same version. Bump rules against that release:
**major** when an item is removed from a config (or a config disappears), **minor** when
items are added or changed, **patch** when only the card changed; no change keeps it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import polars as pl

Bump = Literal["major", "minor", "patch"]
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$")


@dataclass(frozen=True, order=True)
class SemVer:
    """A release version MAJOR.MINOR.PATCH (ordered; :meth:`parse` reads one, :meth:`bump`
    steps it)."""

    major: int
    minor: int
    patch: int

    @classmethod
    def parse(cls, text: str) -> SemVer:
        match = _SEMVER.match(str(text).strip())
        if not match:
            raise ValueError(f"{text!r} is not a semantic version X.Y.Z")
        return cls(*(int(g) for g in match.groups()))

    @classmethod
    def is_valid(cls, text: str) -> bool:
        return bool(_SEMVER.match(str(text)))

    def bump(self, kind: Bump) -> SemVer:
        if kind == "major":
            return SemVer(self.major + 1, 0, 0)
        if kind == "minor":
            return SemVer(self.major, self.minor + 1, 0)
        return SemVer(self.major, self.minor, self.patch + 1)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"


def existing_versions(dataset_root: str | Path) -> list[SemVer]:
    """Versions already built under ``dist/<benchmark>/`` (folders named X.Y.Z with a card)."""
    root = Path(dataset_root)
    if not root.is_dir():
        return []
    out = [
        SemVer.parse(p.name)
        for p in root.iterdir()
        if p.is_dir() and SemVer.is_valid(p.name) and (p / "README.md").is_file()
    ]
    return sorted(out)


Records = Mapping[str, Mapping[str, Mapping[str, Any]]]
"""config -> item -> record."""


@dataclass(frozen=True)
class Diff:
    """Per config: items added, removed, and changed (with the fields that changed)."""

    added: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)
    changed: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    configs_added: list[str] = field(default_factory=list)
    configs_removed: list[str] = field(default_factory=list)

    @property
    def n_added(self) -> int:
        return sum(len(v) for v in self.added.values())

    @property
    def n_removed(self) -> int:
        return sum(len(v) for v in self.removed.values())

    @property
    def n_changed(self) -> int:
        return sum(len(v) for v in self.changed.values())

    @property
    def empty(self) -> bool:
        return not (
            self.n_added
            or self.n_removed
            or self.n_changed
            or self.configs_added
            or self.configs_removed
        )

    def required_bump(self, *, card_changed: bool) -> Bump | None:
        if self.n_removed or self.configs_removed:
            return "major"
        if self.n_added or self.n_changed or self.configs_added:
            return "minor"
        return "patch" if card_changed else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_added": self.n_added,
            "n_removed": self.n_removed,
            "n_changed": self.n_changed,
            "configs_added": list(self.configs_added),
            "configs_removed": list(self.configs_removed),
        }


def diff_records(old: Records, new: Records) -> Diff:
    """What changed from ``old`` to ``new`` (both config -> item -> record)."""
    d = Diff()
    for config in sorted(set(old) | set(new)):
        before, after = old.get(config, {}), new.get(config, {})
        if config not in old:
            d.configs_added.append(config)
        if config not in new:
            d.configs_removed.append(config)
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed = {
            item: sorted(
                k
                for k in set(after[item]) | set(before[item])
                if after[item].get(k) != before[item].get(k)
            )
            for item in sorted(set(after) & set(before))
        }
        changed = {k: v for k, v in changed.items() if v}
        if added:
            d.added[config] = added
        if removed:
            d.removed[config] = removed
        if changed:
            d.changed[config] = changed
    return d


def frame_records(df: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """item -> record of a published table."""
    return {row["item"]: row for row in df.iter_rows(named=True)}


def read_built_records(dataset_dir: str | Path) -> dict[str, dict[str, dict[str, Any]]]:
    """config -> item -> record of a built dataset (its data/<config>/*.parquet shards)."""
    data = Path(dataset_dir) / "data"
    out: dict[str, dict[str, dict[str, Any]]] = {}
    if not data.is_dir():
        return out
    for folder in sorted(p for p in data.iterdir() if p.is_dir()):
        shards = sorted(folder.glob("*.parquet"))
        if shards:
            out[folder.name] = frame_records(pl.concat([pl.read_parquet(s) for s in shards]))
    return out


def _items_line(items: list[str], limit: int = 50) -> str:
    shown = ", ".join(f"`{i}`" for i in items[:limit])
    return shown + (f" … and {len(items) - limit} more" if len(items) > limit else "")


def changelog_section(version: str, previous: str | None, diff: Diff, *, notes: list[str]) -> str:
    """One CHANGELOG section: items added / removed / changed per config since ``previous``."""
    lines = [f"## {version}", ""]
    if previous is None:
        lines += ["First build.", ""]
        lines += [
            f"- config `{c}`: {len(diff.added.get(c, []))} item(s)" for c in diff.configs_added
        ]
        lines.extend(f"- {note}" for note in notes)
        return "\n".join(lines).rstrip() + "\n"
    lines += [f"Changes since {previous}:", ""]
    for config in diff.configs_added:
        lines.append(f"- new config `{config}`")
    for config in diff.configs_removed:
        lines.append(f"- removed config `{config}`")
    configs = sorted(set(diff.added) | set(diff.removed) | set(diff.changed))
    for config in configs:
        if config in diff.added:
            n = len(diff.added[config])
            lines.append(f"- `{config}`: {n} item(s) added: {_items_line(diff.added[config])}")
        if config in diff.removed:
            n = len(diff.removed[config])
            lines.append(f"- `{config}`: {n} item(s) removed: {_items_line(diff.removed[config])}")
        if config in diff.changed:
            ch = diff.changed[config]
            fields = sorted({f for fs in ch.values() for f in fs})
            lines.append(
                f"- `{config}`: {len(ch)} item(s) changed (fields: {', '.join(fields)}): "
                f"{_items_line(sorted(ch))}"
            )
    if previous is not None and diff.empty:
        lines.append("- no item added, removed or changed")
    lines.extend(f"- {note}" for note in notes)
    return "\n".join(lines).rstrip() + "\n"


# --- the released state, committed to git (releases/<benchmark>.json) ----------------


def record_digest(record: Mapping[str, Any]) -> str:
    """A short, stable digest of one published record (all its fields)."""
    text = json.dumps(record, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def content_digests(records: Records) -> dict[str, dict[str, str]]:
    """config -> item -> record digest: what a release remembers of its content."""
    return {
        config: {item: record_digest(rec) for item, rec in sorted(items.items())}
        for config, items in sorted(records.items())
    }


def content_hash(digests: Mapping[str, Mapping[str, str]], card_digest: str) -> str:
    """One hash of a dataset's content and card (what `version: auto` compares)."""
    text = json.dumps({"configs": digests, "card": card_digest}, sort_keys=True)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Release:
    """The last released (published or `curate release`d) state of one benchmark."""

    version: SemVer
    content_hash: str
    card_digest: str
    configs: dict[str, dict[str, str]]
    changelog: str
    date: str | None
    previous: str | None

    def records(self) -> dict[str, dict[str, dict[str, Any]]]:
        """The released content as records diff_records compares (one field: the digest)."""
        return {
            c: {item: {"record": d} for item, d in items.items()}
            for c, items in self.configs.items()
        }


def read_release(path: str | Path) -> Release | None:
    """``releases/<benchmark>.json``, or None before the first release."""
    from curation.errors import InputError

    path = Path(path)
    if not path.is_file():
        return None
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"not valid JSON: {exc}", file=str(path)) from None
    if not isinstance(obj, dict):
        raise InputError("expected a JSON object", file=str(path))
    for key in ("version", "content_hash", "card_digest", "configs"):
        if key not in obj:
            raise InputError("required field missing", file=str(path), field=key)
    try:
        version = SemVer.parse(str(obj["version"]))
    except ValueError as exc:
        raise InputError(str(exc), file=str(path), field="version") from None
    configs = obj["configs"]
    if not isinstance(configs, dict) or not all(isinstance(v, dict) for v in configs.values()):
        raise InputError("expected config -> item -> digest", file=str(path), field="configs")
    return Release(
        version=version,
        content_hash=str(obj["content_hash"]),
        card_digest=str(obj["card_digest"]),
        configs={str(c): {str(i): str(d) for i, d in v.items()} for c, v in configs.items()},
        changelog=str(obj.get("changelog") or ""),
        date=obj.get("date"),
        previous=obj.get("previous"),
    )


RELEASE_CANDIDATE = "release.json"
"""In a built folder: the record `curate release` / `curate publish` commits to releases/."""


def record_release(
    dataset_dir: str | Path, releases_dir: str | Path, *, date: str, repo_id: str | None = None
) -> Path:
    """Copy a build's release candidate to ``releases/<benchmark>.json`` with ``date``
    (and the Hub ``repo_id`` it was published to: later builds name it in the card)."""
    from curation.errors import InputError
    from curation.io.atomic import write_json

    src = Path(dataset_dir) / RELEASE_CANDIDATE
    if not src.is_file():
        raise InputError("missing: not a build folder (rebuild with `dvc repro`)", file=str(src))
    obj = json.loads(src.read_text(encoding="utf-8"))
    obj["date"] = date
    if repo_id:
        obj["repo_id"] = repo_id
    out = Path(releases_dir) / f"{obj['benchmark']}.json"
    write_json(out, obj)
    return out
