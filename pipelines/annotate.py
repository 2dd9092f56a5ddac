"""DVC stage `annotate` (code: curation/stages/annotate.py).

Usage: python pipelines/annotate.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["annotate", *sys.argv[1:]]))
