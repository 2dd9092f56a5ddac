"""DVC stage `subsets` (code: curation/stages/subsets.py).

Usage: python pipelines/subsets.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["subsets", *sys.argv[1:]]))
