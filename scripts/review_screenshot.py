"""Screenshot the review page of one real candidate of the default run for the README.

Seeds a throw-away queue (never data/review/queue.sqlite) from the default run's judged
candidates (data/judged/<b>.parquet, written by `dvc repro`), serves the real review app
on 127.0.0.1 and captures the candidate's page with Debian's headless Chromium (never a
downloaded browser):

    python scripts/review_screenshot.py math-l5 benchfill-1-r1-07 docs/img/review-page.png
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from curation.params_model import read_params
from curation.review import ReviewServer, ReviewStore, seed

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]


def main(benchmark: str, candidate: str, out: str) -> None:
    params = read_params("params.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        store = ReviewStore.create(Path(tmp) / "queue.sqlite")
        files = [Path(f"data/judged/{benchmark}.parquet")]
        print(seed(store, files, config=params.review, benchmarks=params.benchmarks))
        with ReviewServer(store, default_reviewer="alice") as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{server.url}/item/{benchmark}/{candidate}")
            page.wait_for_load_state("networkidle")
            page.screenshot(path=out, full_page=True)
            browser.close()
    print(f"wrote {out}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
