"""``python -m curation.publish DATASET --repo-id ORG/NAME --version X.Y.Z [--dry-run]``."""

from __future__ import annotations

import argparse
import sys

from curation.errors import CurationError
from curation.publish._cli import add_publish_arguments, run_publish_command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="curate publish", description=__doc__)
    add_publish_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return run_publish_command(args)
    except CurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
