"""Screenshots of the review app for the docs, on the default run's real candidates.

Seeds a throw-away queue (never data/review/queue.sqlite) from the default run's judged
candidates (data/judged/<b>.parquet, written by `dvc repro`), serves the real review app
on 127.0.0.1 and captures, with Debian's headless Chromium (never a downloaded browser):

* ``review-queue.png``: the queue as it opens (items selected for insertion first);
* ``review-page.png``: the first pending item's page (or ``--candidate``);
* ``review-keys.png``: the same page with the key help (``?``) open.

    python scripts/review_screenshot.py docs/img            # after `dvc repro`
    python scripts/review_screenshot.py docs/img --benchmark math-l5 --candidate ID
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from curation.params_model import read_params
from curation.review import ReviewServer, ReviewStore, seed

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 900}


def main(out: Path, benchmark: str | None, candidate: str | None) -> None:
    params = read_params("params.yaml")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = ReviewStore.create(Path(tmp) / "queue.sqlite")
        names = [benchmark] if benchmark else list(params.benchmarks)
        files = [p for b in names if (p := Path(f"data/judged/{b}.parquet")).is_file()]
        print(seed(store, files, config=params.review, benchmarks=params.benchmarks))
        if candidate is None:
            rows, _ = store.queue(benchmark=benchmark, status="pending", limit=1)
            benchmark, candidate = rows[0].benchmark, rows[0].candidate
        with ReviewServer(store, default_reviewer="alice") as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"{server.url}/")
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out / "review-queue.png"))
            page.goto(f"{server.url}/item/{benchmark}/{candidate}")
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(out / "review-page.png"), full_page=True)
            page.keyboard.press("?")
            page.wait_for_selector("#key-help", state="visible")
            page.screenshot(path=str(out / "review-keys.png"))
            browser.close()
    shots = "review-queue.png, review-page.png, review-keys.png"
    print(f"wrote {shots} to {out} (item page: {benchmark}/{candidate})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="folder for the PNGs (docs/img)")
    parser.add_argument("--benchmark", help="seed only this benchmark")
    parser.add_argument("--candidate", help="the item page to capture (default: first pending)")
    args = parser.parse_args()
    main(args.out, args.benchmark, args.candidate)
