"""Arguments of ``curate publish``, shared by curation.cli and ``python -m curation.publish``."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from curation.publish.hub import publish, resolve_dataset_dir


def add_publish_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "dataset",
        metavar="DATASET",
        help="benchmark name (dist/DATASET/DATASET-VERSION) or a built folder",
    )
    p.add_argument("--repo-id", required=True, metavar="ORG/NAME", help="Hub dataset repository")
    p.add_argument(
        "--version", required=True, metavar="X.Y.Z", help="built version to publish (also the tag)"
    )
    p.add_argument(
        "--dry-run", action="store_true", help="check and list what would be uploaded; no network"
    )
    p.add_argument("--dist", default="dist", help="folder holding the builds (default: dist)")
    p.add_argument(
        "--releases",
        default="releases",
        help="where the published version is recorded (default: releases; commit it)",
    )
    p.add_argument(
        "--token-env",
        default="HF_TOKEN",
        help="environment variable holding the token (default: HF_TOKEN)",
    )


def run_publish_command(args: argparse.Namespace) -> int:
    dataset_dir = resolve_dataset_dir(args.dataset, args.version, dist=args.dist)
    result = publish(
        dataset_dir,
        repo_id=args.repo_id,
        version=args.version,
        dry_run=args.dry_run,
        token_env=args.token_env,
    )
    print(result.summary(), flush=True)
    named = card_repo_id(dataset_dir)
    if named != args.repo_id:
        print(
            f"warning: the card's loading example names {named or 'no repository'}, not "
            f"{args.repo_id}; set `build.repo_id: {args.repo_id}` in params.yaml (or keep the "
            "releases/ record this publish writes) and rebuild with `dvc repro`",
            file=sys.stderr,
            flush=True,
        )
    if not args.dry_run:
        print(_record(dataset_dir, args.releases, date=None, repo_id=args.repo_id), flush=True)
    return 0


def card_repo_id(dataset_dir: str | Path) -> str | None:
    """The repository the built card's ``load_dataset(...)`` example names."""
    card = Path(dataset_dir) / "README.md"
    if not card.is_file():
        return None
    found = re.search(r'load_dataset\("([^"]+)"', card.read_text(encoding="utf-8"))
    return found.group(1) if found else None


def _record(dataset_dir, releases: str, *, date: str | None, repo_id: str | None = None) -> str:
    import datetime

    from curation.publish._version import record_release

    when = date or datetime.datetime.now(datetime.UTC).date().isoformat()
    out = record_release(dataset_dir, releases, date=when, repo_id=repo_id)
    return (
        f"recorded the release in {out} (commit it: `version: auto` bumps from it in every clone)"
    )


def add_release_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("dataset", metavar="DATASET", help="benchmark name or a built folder")
    p.add_argument("--version", required=True, metavar="X.Y.Z", help="the built version")
    p.add_argument("--date", help="release date (default: today, UTC)")
    p.add_argument("--dist", default="dist", help="folder holding the builds (default: dist)")
    p.add_argument("--releases", default="releases", help="default: releases")


def run_release_command(args: argparse.Namespace) -> int:
    dataset_dir = resolve_dataset_dir(args.dataset, args.version, dist=args.dist)
    print(_record(dataset_dir, args.releases, date=args.date), flush=True)
    return 0
