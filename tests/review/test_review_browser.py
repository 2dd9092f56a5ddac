"""End to end in headless Chromium (Playwright) against the real server on 127.0.0.1.

Uses the system Chromium (Debian: `apt-get install chromium`), never a downloaded one.
Skipped, with the reason shown, only when no Chromium binary is found.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import CHROMIUM_ARGS, SKIP_REASON, find_chromium, open_page, set_reviewer
from playwright.sync_api import Browser, Page, expect, sync_playwright
from review_fixtures import XSS_ANSWER, XSS_QUESTION

from curation.review import ReviewServer, export

REPO = Path(__file__).resolve().parents[2]
SCREENSHOT = REPO / "reports" / "review-screenshot.png"
CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser, server: ReviewServer) -> Iterator[Page]:
    pg, outside = open_page(browser, server)
    yield pg
    pg.context.close()
    assert outside == [], f"the page tried to load {outside}"


def test_accept_reject_edit_in_the_browser_and_export(page, server, store, config, params):
    page.goto(server.url + "/")
    expect(page.locator("table.queue tbody tr")).to_have_count(6)
    set_reviewer(page, "alice")

    # filters (htmx swaps the table in place)
    page.select_option("#f-status", "needs-calibration")
    expect(page.locator("table.queue tbody tr")).to_have_count(1)
    expect(page.locator("table.queue")).to_contain_text("c-nocal")
    page.select_option("#f-status", "")
    expect(page.locator("table.queue tbody tr")).to_have_count(6)

    # accept with the keyboard
    page.click("a.cand:text-is('c-acc')")
    expect(page.locator("h1")).to_contain_text("c-acc")
    page.wait_for_load_state("load")
    expect(page.locator(".keys")).to_contain_text("a accept")
    # math is rendered by the vendored KaTeX; the diff marks the changed formulas
    expect(page.locator("#candidate-question .katex").first).to_be_visible()
    expect(page.locator("#candidate-question ins").first).to_be_visible()
    expect(page.locator("#parent-question del").first).to_be_visible()
    expect(page.locator("svg.bar circle.z")).to_have_count(1)
    expect(page.locator("table.panel tbody tr")).to_have_count(3)
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    page.keyboard.press("a")
    expect(page.locator(".flash-ok")).to_contain_text("accepted on version 1")
    # on to the next pending item (address bar too), with the reviewer's progress
    expect(page.locator("h1")).to_contain_text("c-edit")
    assert page.url.endswith("/item/toy/c-edit")
    expect(page.locator("#progress")).to_have_text("alice: 1 of 5 decided by you")
    # `?` shows every key, Esc hides it; `p` goes back to the item just decided
    page.keyboard.press("?")
    expect(page.locator("#key-help")).to_be_visible()
    expect(page.locator("#key-help")).to_contain_text("previous item")
    page.keyboard.press("Escape")
    expect(page.locator("#key-help")).to_be_hidden()
    page.keyboard.press("p")
    expect(page.locator("h1")).to_contain_text("c-acc")
    expect(page.locator("#decide .badge").first).to_have_text("accepted")

    # reject with a comment: type it, leave the box with Esc, press r
    page.goto(server.url + "/item/toy/c-rej")
    page.keyboard.press("c")
    page.keyboard.type("the answer ignores the units")
    page.keyboard.press("Escape")
    page.keyboard.press("r")
    expect(page.locator(".flash-ok")).to_contain_text("rejected on version 1")
    page.keyboard.press("p")
    expect(page.locator("table.history")).to_contain_text("the answer ignores the units")

    # edit: the new text becomes version 2, back to calibration
    page.goto(server.url + "/item/toy/c-edit")
    page.keyboard.press("e")
    expect(page.locator("#edit-question")).to_be_focused()
    page.fill("#edit-question", "Tom has 3 apples and buys $4$ more. How many apples?")
    page.fill("#edit-answer", "7")
    page.fill("#edit-comment", "closer to the target")
    page.click("#btn-edit")
    expect(page.locator(".flash-ok")).to_contain_text("version 2 goes back to calibration")
    expect(page.locator("h1 .badge").first).to_have_text("needs-calibration")
    expect(page.locator("#btn-accept")).to_be_disabled()

    # a simulated candidate is visibly marked
    page.goto(server.url + "/item/toy/c-sim")
    expect(page.locator("#simulated-banner")).to_be_visible()

    export(store, config=config, benchmarks=params.benchmarks)
    lines = [json.loads(x) for x in config.decisions.read_text().splitlines()]
    got = {r["candidate"]: r for r in lines}
    assert set(got) == {"c-acc", "c-rej", "c-edit"}
    assert all(r["reviewer"] == "alice" and r["version"] == 1 for r in lines)
    assert got["c-acc"]["decision"] == "accepted"
    assert (got["c-rej"]["decision"], got["c-rej"]["comment"]) == (
        "rejected",
        "the answer ignores the units",
    )
    assert got["c-edit"]["decision"] == "edited" and got["c-edit"]["new_version"] == 2
    assert got["c-edit"]["question"] == "Tom has 3 apples and buys $4$ more. How many apples?"
    assert got["c-edit"]["comment"] == "closer to the target"


def test_hostile_item_text_renders_inert(page, server):
    page.goto(server.url + "/")
    page.goto(server.url + "/item/toy/c-xss")
    expect(page.locator("h1")).to_contain_text("c-xss")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert XSS_QUESTION in page.inner_text("#candidate-question")
    assert XSS_ANSWER in page.inner_text("#candidate-answer")
    assert page.input_value("#edit-question") == XSS_QUESTION
    assert page.locator("#candidate-question img, #candidate-question script").count() == 0
    page.goto(server.url + "/?verdict=pass")
    expect(page.locator("table.queue")).to_contain_text("<script>window.__pwned=1</script>")
    assert page.evaluate("typeof window.__pwned") == "undefined"


def test_a_late_second_reviewer_sees_the_conflict(page, browser, server, store):
    bob, outside = open_page(browser, server)
    try:
        for pg, name in ((page, "alice"), (bob, "bob")):
            pg.goto(server.url + "/")
            set_reviewer(pg, name)
            pg.goto(server.url + "/item/toy/c-rej")
        page.keyboard.press("r")
        expect(page.locator(".flash-ok")).to_contain_text("rejected on version 1")
        with bob.expect_response(lambda r: r.url.endswith("/decide")) as resp:
            bob.fill("#comment", "looks fine to me")
            bob.click("#btn-accept")
        assert resp.value.status == 409
        expect(bob.locator("#error")).to_contain_text("Conflict")
        expect(bob.locator("#error")).to_contain_text("rejected by alice")
        expect(bob.locator("#comment")).to_have_value("looks fine to me")  # nothing lost
        expect(bob.locator("#decide .badge").first).to_have_text("rejected")
    finally:
        bob.context.close()
    assert outside == []
    assert [(d.reviewer, d.decision) for d in store.history("toy", "c-rej")] == [
        ("alice", "rejected")
    ]
