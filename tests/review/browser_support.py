"""Shared pieces of the browser tests: the system Chromium, a page that may load
nothing from outside the review server, and a reviewer-name helper."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from playwright.sync_api import Browser, Page, expect

from curation.review import ReviewServer

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SKIP_REASON = (
    "no Chromium binary (looked at $BENCHCURATE_CHROMIUM, chromium, chromium-browser, "
    "/usr/bin/chromium): install it with `apt-get install chromium` to run the browser tests"
)


def find_chromium() -> str | None:
    env = os.environ.get("BENCHCURATE_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None


def open_page(
    browser: Browser, server: ReviewServer, *, width: int = 1360, height: int = 1000
) -> tuple[Page, list[str]]:
    """A new browser context (own cookies) whose requests may only reach the server."""
    context = browser.new_context(viewport={"width": width, "height": height})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    outside: list[str] = []

    def only_local(route):  # nothing may come from a CDN: the page works with no network
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    pg.route("**/*", only_local)
    return pg, outside


def set_reviewer(page: Page, name: str) -> None:
    page.fill("#reviewer-name", name)
    page.click("#reviewer-set")
    expect(page.locator(".flash-ok")).to_contain_text(f"reviewing as {name}")
    page.wait_for_load_state("load")  # the deferred scripts (htmx, keys) are in place
