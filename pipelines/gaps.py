"""DVC stage `gaps` (code: curation/stages/gaps.py).

Usage: python pipelines/gaps.py
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["gaps", *sys.argv[1:]]))
