"""`curate release`: record a built version as released (``releases/<b>.json``, to commit).

``build.version: auto`` bumps from that record in every clone; ``curate publish``
records its upload the same way (:func:`record`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def record(
    dataset_dir: str | Path, releases: str, *, date: str | None, repo_id: str | None = None
) -> str:
    """Record the release (``date`` default: today, UTC) and say where it went."""
    import datetime

    from curation.publish import record_release

    when = date or datetime.datetime.now(datetime.UTC).date().isoformat()
    out = record_release(dataset_dir, releases, date=when, repo_id=repo_id)
    return (
        f"recorded the release in {out} (commit it: `version: auto` bumps from it in every clone)"
    )


def run_release(args: argparse.Namespace) -> int:
    """``curate release DATASET --version X.Y.Z``."""
    from curation.publish import resolve_dataset_dir

    dataset_dir = resolve_dataset_dir(args.dataset, args.version, dist=args.dist)
    print(record(dataset_dir, args.releases, date=args.date), flush=True)
    return 0


def register(sub: Any) -> None:
    """Add ``release`` to ``curate``'s subcommands."""
    p = sub.add_parser(
        "release",
        help="record a built version as released (releases/<b>.json, to commit): "
        "`version: auto` bumps from it",
    )
    p.add_argument("dataset", metavar="DATASET", help="benchmark name or a built folder")
    p.add_argument("--version", required=True, metavar="X.Y.Z", help="the built version")
    p.add_argument("--date", help="release date (default: today, UTC)")
    p.add_argument("--dist", default="dist", help="folder holding the builds (default: dist)")
    p.add_argument("--releases", default="releases", help="default: releases")
    p.set_defaults(func=run_release)
