"""DVC stage `responses` in collect mode (code: curation/stages/collect.py).

Imports the bundled responses when params.yaml `collect.enabled` is false, else asks the
panel (`collect.backend`: simulate or openai). Needs the `curate collect` subcommand.

Usage: python pipelines/collect.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["collect", *sys.argv[1:]]))
