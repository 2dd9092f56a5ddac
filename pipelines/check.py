"""DVC stage `check` (code: curation/stages/check.py).

Usage: python pipelines/check.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["check", *sys.argv[1:]]))
