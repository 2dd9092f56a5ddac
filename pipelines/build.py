"""DVC stage `build` (code: curation/stages/build.py).

Usage: python pipelines/build.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["build", *sys.argv[1:]]))
