"""DVC stage `ingest` (code: curation/stages/ingest.py).

Usage: python pipelines/ingest.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["ingest", *sys.argv[1:]]))
