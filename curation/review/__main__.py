"""`python -m curation.review ACTION …` = `curate review ACTION …`."""

import sys

from curation.review._cli import main

raise SystemExit(main(["review", *sys.argv[1:]]))
