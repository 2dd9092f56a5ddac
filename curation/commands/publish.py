"""`curate publish`: upload one built version to the Hub (one commit + tag).

Never a stage: publishing is explicit. The upload and its checks are
:func:`curation.publish.publish`; it is imported only when the command runs (polars and
the Hub client cost ~0.6 s), so the arguments below cost nothing for other commands.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from curation.commands._common import require_project
from curation.commands.release import record


def run_publish(args: argparse.Namespace) -> int:
    """``curate publish DATASET --repo-id ORG/NAME --version X.Y.Z [--dry-run]``."""
    from pathlib import Path

    from curation.publish import card_repo_id, publish, resolve_dataset_dir

    if not Path(args.dataset).is_dir() and not Path(args.dist).is_dir():
        require_project()  # a benchmark name means this project's dist/
    dataset_dir = resolve_dataset_dir(args.dataset, args.version, dist=args.dist)
    result = publish(
        dataset_dir,
        repo_id=args.repo_id,
        version=args.version,
        dry_run=args.dry_run,
        token_env=args.token_env,
        allow_unknown_license=args.allow_unknown_license,
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
        print(record(dataset_dir, args.releases, date=None, repo_id=args.repo_id), flush=True)
    return 0


def register(sub: Any) -> None:
    """Add ``publish`` to ``curate``'s subcommands."""
    p = sub.add_parser("publish", help="upload a built version to the Hub (one commit + tag)")
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
    p.add_argument(
        "--allow-unknown-license",
        action="store_true",
        help="publish a build whose card says license: unknown (refused otherwise)",
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
    p.set_defaults(func=run_publish)
