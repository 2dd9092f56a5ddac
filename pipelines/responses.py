"""DVC stage `responses` (code: curation/stages/responses.py).

Usage: python pipelines/responses.py --benchmark NAME
"""

import sys

from curation.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["responses", "import", *sys.argv[1:]]))
