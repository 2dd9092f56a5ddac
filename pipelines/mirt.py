"""DVC stage `mirt` (code: curation/stages/mirt.py), joint over all benchmarks.

Usage: python pipelines/mirt.py
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["mirt", *sys.argv[1:]]))
