"""DVC stage `fill` (code: curation/stages/fill.py).

Usage: python pipelines/fill.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["fill", *sys.argv[1:]]))
