"""DVC stage `judge` (code: curation/stages/judge.py).

Usage: python pipelines/judge.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["judge", *sys.argv[1:]]))
