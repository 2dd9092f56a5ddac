"""The review server over real HTTP on 127.0.0.1: escaping, CSRF, token, conflicts."""

from __future__ import annotations

import html
import threading

import pytest
from review_fixtures import XSS_QUESTION, Client, candidate, csrf_of, form_fields, make_project

from curation.errors import ConfigError
from curation.params_model import read_params
from curation.review import ReviewServer, ReviewStore, check_bind, seed
from curation.review._serve import open_url

TOKEN = "t0ken-for-the-review-tests-0123"


def _page(client: Client, cand: str) -> tuple[str, dict[str, str]]:
    status, _, body = client.get(f"/item/toy/{cand}")
    assert status == 200, body
    return body, form_fields(body, "decision-form")


def _named(client: Client, name: str) -> None:
    _, _, body = client.get("/")
    status, headers, _ = client.post(
        "/reviewer", {"csrf": csrf_of(body), "reviewer": name, "next": "/"}
    )
    assert status == 303 and headers["location"] == "/"


def test_item_text_is_escaped_and_the_page_has_a_strict_csp(server):
    client = Client(server.url)
    status, headers, body = client.get("/item/toy/c-xss")
    assert status == 200
    assert "<script>window.__pwned" not in body and "<img src=x" not in body
    assert html.escape(XSS_QUESTION.split(" How")[0], quote=False) in body
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    _, _, queue = client.get("/")
    assert "<script>window.__pwned" not in queue and "&lt;script&gt;" in queue


def test_queue_filters(server, store):
    client = Client(server.url)
    store.decide("toy", "c-acc", decision="accepted", reviewer="a", version=1, supersedes=None)
    _, _, body = client.get("/?status=accepted")
    assert "c-acc" in body and "c-rej" not in body
    _, _, body = client.get("/?verdict=fail")
    assert "c-rej" in body and "c-nocal" in body and "c-acc" not in body
    _, _, body = client.get("/?source=simulated")
    assert "c-sim" in body and "SIMULATED" in body and "c-acc" not in body
    _, _, body = client.get("/?benchmark=toy&status=needs-calibration")
    assert "c-nocal" in body and "c-xss" not in body


def test_post_without_a_valid_csrf_token_is_refused(server, store):
    alice, mallory = Client(server.url), Client(server.url)
    _named(alice, "alice")
    body, fields = _page(alice, "c-acc")
    _page(mallory, "c-acc")
    good = {**fields, "decision": "accepted", "comment": ""}
    assert Client(server.url).post("/decide", good)[0] == 403  # no session at all
    assert alice.post("/decide", {k: v for k, v in good.items() if k != "csrf"})[0] == 403
    assert alice.post("/decide", {**good, "csrf": "forged"})[0] == 403
    assert mallory.post("/decide", good)[0] == 403  # another session's token
    assert alice.post("/reviewer", {"reviewer": "eve", "next": "/"})[0] == 403
    assert store.decisions() == []
    status, headers, _ = alice.post("/decide", good)
    assert status == 303 and headers["location"] == "/item/toy/c-edit"  # the next pending
    [d] = store.decisions()
    assert (d.reviewer, d.decision, d.version) == ("alice", "accepted", 1)
    # a valid token in the X-CSRF-Token header (as htmx sends it) works too
    _, fields = _page(alice, "c-rej")
    no_field = {k: v for k, v in fields.items() if k != "csrf"}
    status, _, _ = alice.post(
        "/decide", {**no_field, "decision": "rejected"}, headers={"X-CSRF-Token": fields["csrf"]}
    )
    assert status == 303 and store.state("toy", "c-rej").status == "rejected"


def test_two_reviewers_at_once_one_wins_the_other_sees_409(server, store):
    alice, bob = Client(server.url), Client(server.url)
    _named(alice, "alice")
    _named(bob, "bob")
    _, fa = _page(alice, "c-edit")
    _, fb = _page(bob, "c-edit")
    barrier = threading.Barrier(2)
    out: dict[str, tuple[int, dict[str, str], str]] = {}

    def go(name: str, client: Client, form: dict[str, str]) -> None:
        barrier.wait()
        out[name] = client.post("/decide", form)

    threads = [
        threading.Thread(
            target=go, args=("alice", alice, {**fa, "decision": "accepted", "comment": "ok"})
        ),
        threading.Thread(
            target=go, args=("bob", bob, {**fb, "decision": "rejected", "comment": "bob's note"})
        ),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(v[0] for v in out.values())
    assert statuses == [303, 409]
    [decision] = store.history("toy", "c-edit")
    winner = decision.reviewer
    loser = "bob" if winner == "alice" else "alice"
    _, _, body = out[loser]
    assert "Conflict" in body and "not recorded" in body
    assert f"{decision.decision} by {winner}" in body  # the current state is shown
    mine = "bob&#39;s note" if loser == "bob" else "ok"
    assert (
        f'name="comment" rows="3" maxlength="4000" placeholder="why (optional for accept)">{mine}'
        in body
    )  # noqa: E501
    assert store.state("toy", "c-edit").status == decision.decision


def test_a_public_server_refuses_requests_without_the_token(store):
    with ReviewServer(store, host="127.0.0.1", public=True, token=TOKEN) as srv:
        anon = Client(srv.url)
        for path in ("/", "/item/toy/c-acc", "/static/review.js", "/healthz"):
            assert anon.get(path)[0] == 401
        assert anon.get("/", headers={"Authorization": "Bearer wrong-token-xxxxxxxx"})[0] == 401
        assert anon.get("/?token=wrong-token-xxxxxxxxxx")[0] == 401
        assert anon.post("/decide", {"benchmark": "toy"})[0] == 401
        assert Client(srv.url, {"Authorization": f"Bearer {TOKEN}"}).get("/")[0] == 200
        assert Client(srv.url, {"X-Review-Token": TOKEN}).get("/healthz")[0] == 200
        # ?token= once: a cookie is set and the token leaves the address bar
        browser = Client(srv.url)
        status, headers, _ = browser.get(f"/item/toy/c-acc?token={TOKEN}")
        assert status == 303 and headers["location"] == "/item/toy/c-acc"
        assert browser.get("/item/toy/c-acc")[0] == 200
        # a host name other than 127.0.0.1 is fine on a public server (token protects it)
        assert (
            Client(srv.url, {"X-Review-Token": TOKEN}).get(
                "/", headers={"Host": "review.example.org"}
            )[0]
            == 200
        )
    assert store.decisions() == []


def test_a_non_local_bind_needs_a_token(store):
    with pytest.raises(ConfigError, match="needs an access token"):
        ReviewServer(store, host="0.0.0.0")
    for host in ("0.0.0.0", "::", "10.1.2.3", "example.org"):
        with pytest.raises(ConfigError, match="--token"):
            check_bind(host, None)
    check_bind("127.0.0.1", None)
    check_bind("localhost", None)
    check_bind("0.0.0.0", TOKEN)
    with pytest.raises(ConfigError, match="at least 16"):
        check_bind("0.0.0.0", "short")


def test_a_local_server_only_answers_to_local_host_names(server):
    client = Client(server.url)
    assert client.get("/", headers={"Host": "evil.example:80"})[0] == 400  # DNS rebinding
    assert client.get("/", headers={"Host": f"localhost:{server.port}"})[0] == 200


def test_unknown_item_and_bad_form(server):
    client = Client(server.url)
    _named(client, "alice")
    assert client.get("/item/toy/nope")[0] == 404
    _, fields = _page(client, "c-acc")
    assert client.post("/decide", {**fields, "version": "x", "decision": "accepted"})[0] == 400
    status, _, body = client.post(
        "/decide", {**fields, "candidate": "nope", "decision": "rejected"}
    )
    assert status == 404


def test_the_banner_shares_a_reachable_address():
    """Bound to every interface, `curate review serve` prints this machine's name, not
    http://0.0.0.0:8766/ (which nobody else can open)."""
    import socket

    for host in ("0.0.0.0", "::"):
        url = open_url(host, 8766, token=TOKEN)
        assert "0.0.0.0" not in url and "[::]" not in url
        assert url.startswith(f"http://{socket.gethostname()}:8766/?token=")
    assert open_url("127.0.0.1", 8765) == "http://127.0.0.1:8765/"
    assert open_url("::1", 8765) == "http://[::1]:8765/"


def test_queue_puts_items_selected_for_insertion_first(tmp_path, monkeypatch):
    """The 24 items BenchFill selected come first by default, not after the baselines."""
    rows = [
        candidate("a-base", method="baseline", selected=False),
        candidate("b-sel", selected=True),
        candidate("c-base", method="baseline", selected=False),
        candidate("d-sel", selected=True),
    ]
    make_project(tmp_path, rows)
    monkeypatch.chdir(tmp_path)
    params = read_params("params.yaml")
    store = ReviewStore.create(params.review.db)
    seed(store, list(params.review.candidates), config=params.review, benchmarks=params.benchmarks)
    order = [r.candidate for r in store.queue()[0]]
    assert order == ["b-sel", "d-sel", "a-base", "c-base"]
    assert store.next_item("toy", "b-sel") == ("toy", "d-sel")
    assert store.next_item("toy", "d-sel") == ("toy", "a-base")
    assert store.next_item("toy", "c-base") == ("toy", "b-sel")  # wraps around
    assert store.progress("alice") == (0, 4)
    store.decide("toy", "b-sel", decision="rejected", reviewer="alice", version=1, supersedes=None)
    assert store.progress("alice") == (1, 4) and store.progress("bob") == (0, 4)
