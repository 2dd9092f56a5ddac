"""Team review end to end in headless Chromium against the real server: reviewer tokens
with ``required_reviews: 2`` (agreement, conflict, adjudication, `curate review stats`),
bulk accept of a filter then undo, overruling the judge, and the layout at 40 models.

Set ``BENCHCURATE_SCREENSHOTS=docs/img`` to write the documentation screenshots.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from browser_support import CHROMIUM_ARGS, SKIP_REASON, find_chromium, open_page, set_reviewer
from playwright.sync_api import Browser, Page, expect, sync_playwright
from review_fixtures import candidate, make_project

from curation.cli import main as curate
from curation.params_model import read_params
from curation.review import ReviewServer, ReviewStore, export, seed
from curation.review._accounts import load_accounts

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason=SKIP_REASON)

# The hand-computed case of test_review_team: 8 agree (6 accept, 2 reject), 2 disagree.
ALICE = ["accepted"] * 7 + ["rejected"] * 3
BOB = ["accepted"] * 6 + ["rejected", "rejected", "rejected", "accepted"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _project(root: Path, rows: list[dict], **review: object) -> tuple[ReviewStore, object, dict]:
    make_project(root, rows)
    raw = yaml.safe_load((root / "params.yaml").read_text())
    raw["review"].update(review)
    (root / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    params = read_params(root / "params.yaml")
    config = params.review
    store = ReviewStore.create(config.db, required_reviews=config.required_reviews)
    seed(store, list(config.candidates), config=config, benchmarks=params.benchmarks)
    return store, config, params


def _token(name: str, role: str, capsys: pytest.CaptureFixture[str]) -> str:
    assert curate(["review", "add-reviewer", name, "--role", role]) == 0
    return capsys.readouterr().out.strip().splitlines()[-1]


def _sign_in(browser: Browser, server: ReviewServer, token: str) -> tuple[Page, list[str]]:
    pg, outside = open_page(browser, server)
    pg.goto(f"{server.url}/?token={token}")
    assert "token=" not in pg.url  # the token leaves the address bar at once
    return pg, outside


def _decide(page: Page, server: ReviewServer, cand: str, decision: str, comment: str = "") -> None:
    page.goto(f"{server.url}/item/toy/{cand}")
    if comment:
        page.fill("#comment", comment)
    page.click("#btn-accept" if decision == "accepted" else "#btn-reject")
    expect(page.locator(".flash-ok")).to_contain_text(f"{decision} on version 1")


@pytest.mark.long(seconds=25)
def test_two_reviewers_with_tokens_then_an_adjudicator(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [
        candidate(
            f"c{i}", question=f"Tom has {i} apples and buys 5 more. How many?", answer=str(i + 5)
        )
        for i in range(10)
    ]
    store, config, _params = _project(
        tmp_path, rows, required_reviews=2, users="data/review/users.yaml"
    )
    tokens = {
        "alice": _token("alice", "reviewer", capsys),
        "bob": _token("bob", "reviewer", capsys),
        "carol": _token("carol", "adjudicator", capsys),
    }
    users = (tmp_path / "data/review/users.yaml").read_text()
    assert not any(t in users for t in tokens.values())  # only hashes at rest
    accounts = load_accounts(config.users)
    with ReviewServer(store, accounts=accounts, public=True) as server:
        anonymous, _ = open_page(browser, server)
        assert anonymous.goto(server.url + "/").status == 401  # no token, no queue
        anonymous.context.close()
        for name, votes in (("alice", ALICE), ("bob", BOB)):
            page, outside = _sign_in(browser, server, tokens[name])
            expect(page.locator("#reviewer-current")).to_have_text(name)
            for i, vote in enumerate(votes):
                _decide(page, server, f"c{i}", vote)
            assert outside == []
            page.context.close()
        status = {i: store.state("toy", f"c{i}").status for i in range(10)}
        assert [i for i, s in status.items() if s == "conflict"] == [6, 9]
        assert sum(s in ("accepted", "rejected") for s in status.values()) == 8

        carol, outside = _sign_in(browser, server, tokens["carol"])
        carol.goto(server.url + "/?status=conflict")
        expect(carol.locator("table.queue tbody tr")).to_have_count(2)
        carol.goto(server.url + "/item/toy/c6")
        expect(carol.locator("#conflict-note")).to_contain_text("Your decision resolves it")
        expect(carol.locator("#conflict-note")).to_contain_text("alice accepted")
        _decide(carol, server, "c6", "accepted", "the numbers check out")
        _decide(carol, server, "c9", "rejected", "ambiguous wording")
        carol.context.close()
        assert outside == []
    assert store.state("toy", "c6").status == "accepted"
    assert store.state("toy", "c9").status == "rejected"
    assert {d.reviewer for d in store.history("toy", "c6")} == {"alice", "bob", "carol"}

    assert curate(["review", "stats"]) == 0
    out = capsys.readouterr().out
    po, pe = 8 / 10, 0.7 * 0.7 + 0.3 * 0.3  # by hand: both reviewers 7 accepts, 3 rejects
    kappa = (po - pe) / (1 - pe)
    assert f"8 agree (80.0%), Cohen's kappa {kappa:.3f}" in out, out


def _near(cid: str, z: float, **over: object) -> dict:
    return candidate(cid, z=z, z_low=z - 0.05, z_high=z + 0.05, target_z=0.6, **over)


def test_bulk_accept_of_a_filter_then_undo_in_the_browser(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [_near(f"near{i}", 0.6 + 0.002 * i) for i in range(4)]
    rows += [_near(f"far{i}", 0.7) for i in range(3)]
    rows.append(_near("near-fail", 0.6, judge_correct=False, judge_reason="wrong sum"))
    store, config, params = _project(tmp_path, rows)
    with ReviewServer(store) as server:
        page, outside = open_page(browser, server)
        page.goto(server.url + "/")
        set_reviewer(page, "dana")
        _decide(page, server, "far0", "rejected")
        before = {k: store.state(*k).status for k in store.queue_keys()}

        page.goto(server.url + "/?verdict=pass&maxdist=0.01")
        expect(page.locator("table.queue tbody tr")).to_have_count(4)
        page.click("#bulk-accept")
        expect(page.locator("#bulk-count")).to_contain_text("4")
        page.fill("#bulk-comment", "on target and passed by the judge")
        page.click("#bulk-confirm")
        expect(page.locator(".flash-ok")).to_contain_text("4")
        assert {store.state("toy", f"near{i}").status for i in range(4)} == {"accepted"}
        assert store.state("toy", "near-fail").status == "pending"  # the filter held

        page.goto(server.url + "/")
        undo = page.locator("#batches button.undo").first
        batch = (undo.get_attribute("id") or "").removeprefix("undo-")
        undo.click()
        expect(page.locator(".flash-ok")).to_contain_text("4")
        assert outside == []
        page.context.close()
    assert {k: store.state(*k).status for k in store.queue_keys()} == before
    export(store, config=config, benchmarks=params.benchmarks)
    log = [json.loads(x) for x in config.decisions.read_text().splitlines()]
    batches = {r["batch"] for r in log if r.get("batch")}
    assert batch in batches and len(batches) == 2  # the bulk batch and its undo, both kept
    assert sum(r.get("batch") == batch for r in log) == 4


def test_overruling_the_judge_in_the_browser_needs_a_reason(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    rows = [candidate("c-fail", judge_correct=False, judge_reason="the reference is wrong")]
    store, config, params = _project(tmp_path, rows)
    with ReviewServer(store) as server:
        page, outside = open_page(browser, server)
        page.goto(server.url + "/")
        set_reviewer(page, "erin")
        page.goto(server.url + "/item/toy/c-fail")
        expect(page.locator("#overrule-note")).to_be_visible()
        expect(page.locator("#btn-accept")).to_contain_text("overruling the judge")
        page.click("#btn-accept")
        expect(page.locator("#error")).to_contain_text("overrules the judge")
        assert store.state("toy", "c-fail").status == "pending"
        _decide(page, server, "c-fail", "accepted", "8 is right: the judge misread 3 + 5")
        expect(page.locator(".flash-ok")).to_contain_text("overruling the judge")
        assert outside == []
        page.context.close()
    export(store, config=config, benchmarks=params.benchmarks)
    (rec,) = [json.loads(x) for x in config.decisions.read_text().splitlines()]
    assert rec["overrules_judge"] is True and rec["comment"].startswith("8 is right")


def test_decisions_stay_in_view_at_40_models_and_screenshots(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    panel = {f"model-{i:02d}": [i % 5, 4] for i in range(40)}
    rows = [
        candidate(
            f"c{i}",
            question=f"Tom has 3 apples and buys {i + 5} more, then eats 2. How many are left?",
            answer=str(i + 6),
            change="more apples bought, then a subtraction step",
            judge_reason=f"3 + {i + 5} - 2 = {i + 6}, so {i + 6} is correct; one clear reading.",
            panel=json.dumps(panel),
            n_trials=160,
            n_correct=80,
            round=1 + i % 2,
            selected=i % 3 == 0,
        )
        for i in range(8)
    ]
    store, config, _params = _project(tmp_path, rows)
    shots = os.environ.get("BENCHCURATE_SCREENSHOTS")
    out = (REPO / shots).resolve() if shots else tmp_path  # relative to the repo
    out.mkdir(parents=True, exist_ok=True)
    with ReviewServer(store, guidelines=config.guidelines_file) as server:
        page, outside = open_page(browser, server, width=1360, height=900)
        page.goto(server.url + "/")
        set_reviewer(page, "frank")
        page.goto(server.url + "/?q=eats&selected=yes&round=1")
        expect(page.locator("table.queue tbody tr")).to_have_count(2)
        page.screenshot(path=str(out / "review-queue-search.png"))

        page.goto(server.url + "/item/toy/c0")
        page.wait_for_load_state("networkidle")  # KaTeX and the bar chart in place
        page.screenshot(path=str(out / "review-item-40-models.png"), full_page=True)
        page.locator("#guidelines summary").click(position={"x": 8, "y": 8})  # not its link
        expect(page.locator("#guidelines")).to_have_js_property("open", True)
        expect(page.locator("#guidelines")).to_contain_text("Well-posed")
        expect(page.locator("#panel-summary")).to_contain_text("40 model(s)")
        expect(page.locator("#panel-details")).to_have_js_property("open", False)
        box = page.locator("#btn-accept").bounding_box()
        assert box is not None and box["y"] + box["height"] <= 900  # in the first screen
        page.locator("#panel-summary").click(
            position={"x": 8, "y": 8}
        )  # open the 40-row table, scroll to its end
        page.locator("table.panel tbody tr").last.scroll_into_view_if_needed()
        box = page.locator("#btn-accept").bounding_box()  # sticky: still on screen
        assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= 900
        assert outside == []
        page.context.close()
    assert (out / "review-queue-search.png").stat().st_size > 10_000
