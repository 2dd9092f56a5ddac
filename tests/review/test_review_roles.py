"""Roles hold in review: a reviewer undoes only their own batches (an adjudicator any);
a rotated or removed token stops working on a running server at its next request; the
link `curate review serve` prints opens the page in every mode (shared token, accounts,
both)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from review_fixtures import Client, csrf_of
from test_review_team import _team, _vote

from curation.errors import ConfigError
from curation.review import ReviewServer, add_account, load_accounts, remove_account
from curation.review._store import ReviewError

REPO = Path(__file__).resolve().parents[2]
TOKEN = "shared-token-for-the-role-tests-0123"


def test_a_reviewer_undoes_only_their_own_batch_an_adjudicator_any(tmp_path, monkeypatch):
    store, _config, _params = _team(tmp_path, monkeypatch, n=2)
    for i in range(4):
        _vote(store, f"c{i}", "accepted", "alice")
        _vote(store, f"c{i}", "rejected", "bob")  # 4 conflicts
    keys = [("toy", f"c{i}") for i in range(4)]
    resolved = store.decide_many(keys, decision="accepted", reviewer="carol", role="adjudicator")
    assert {store.state(*k).status for k in keys} == {"accepted"}
    with pytest.raises(ReviewError, match="made by carol: a reviewer undoes only their own"):
        store.undo_batch(resolved.batch, reviewer="bob")
    assert {store.state(*k).status for k in keys} == {"accepted"}  # nothing re-opened
    mine = store.decide_many([("toy", "c7")], decision="accepted", reviewer="bob")
    assert store.undo_batch(mine.batch, reviewer="bob").recorded == 1
    assert store.undo_batch(resolved.batch, reviewer="dan", role="adjudicator").recorded == 4


def test_cli_undo_takes_the_role_from_the_users_file(tmp_path, monkeypatch):
    store, config, _params = _team(tmp_path, monkeypatch, n=1)
    users = tmp_path / "users.yaml"
    params = (tmp_path / "params.yaml").read_text()
    (tmp_path / "params.yaml").write_text(
        params.replace("review:\n", "review:\n  users: users.yaml\n", 1)
    )
    add_account(users, "carol", role="adjudicator")
    add_account(users, "bob")
    batch = store.decide_many([("toy", "c1"), ("toy", "c2")], decision="accepted", reviewer="carol")

    def undo(who: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "curation.cli",
                "review",
                "undo",
                batch.batch,
                "--reviewer",
                who,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=_env(),
        )

    refused = undo("bob")
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.count("\n") == 1 and "made by carol" in refused.stderr
    assert undo("carol").returncode == 0


def test_rotate_and_remove_take_effect_on_a_running_server(store, tmp_path):
    users = tmp_path / "users.yaml"
    alice = add_account(users, "alice")
    carol = add_account(users, "carol", role="adjudicator")
    with pytest.raises(ConfigError, match="pass --rotate"):
        add_account(users, "alice")
    accounts = load_accounts(users)
    with ReviewServer(store, host="127.0.0.1", public=True, accounts=accounts) as srv:
        browser = Client(srv.url)
        assert browser.get(f"/?token={alice}")[0] == 303
        assert browser.get("/")[0] == 200  # the cookie holds alice's token
        time.sleep(0.01)  # a new mtime even on coarse clocks
        new = add_account(users, "alice", rotate=True)
        assert load_accounts(users).role_of("alice") == "reviewer"  # the role is kept
        assert browser.get("/")[0] == 401  # the old token: refused at once, no restart
        assert Client(srv.url, {"Authorization": f"Bearer {alice}"}).get("/")[0] == 401
        assert Client(srv.url, {"Authorization": f"Bearer {new}"}).get("/")[0] == 200
        assert Client(srv.url, {"Authorization": f"Bearer {carol}"}).get("/")[0] == 200
        remove_account(users, "carol")
        assert Client(srv.url, {"Authorization": f"Bearer {carol}"}).get("/")[0] == 401
    with pytest.raises(ConfigError, match="no account 'carol'"):
        remove_account(users, "carol")


def test_a_shared_token_with_accounts_works_and_claims_no_account(store, tmp_path):
    users = tmp_path / "users.yaml"
    add_account(users, "carol", role="adjudicator")
    with ReviewServer(
        store, host="127.0.0.1", public=True, token=TOKEN, accounts=load_accounts(users)
    ) as srv:
        browser = Client(srv.url)
        assert browser.get(f"/?token={TOKEN}")[0] == 303
        status, _, body = browser.get("/")
        assert status == 200
        status, _, _ = browser.post(
            "/reviewer", {"csrf": csrf_of(body), "reviewer": "carol", "next": "/"}
        )
        assert status == 303
        assert "carol has an account" in browser.get("/")[2]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


@pytest.mark.parametrize("mode", ["local", "token", "accounts", "accounts+token"])
def test_the_printed_link_opens_the_page(tmp_path, monkeypatch, mode):
    """`curate review serve` as a user runs it; its printed link, opened as printed (an
    account's placeholder filled in with that reviewer's token)."""
    _team(tmp_path, monkeypatch, n=1)
    args = ["--port", "0"]
    if "token" in mode:
        args += ["--token", TOKEN]
    personal = None
    if "accounts" in mode:
        users = tmp_path / "users.yaml"
        personal = add_account(users, "carol", role="adjudicator")
        params = (tmp_path / "params.yaml").read_text()
        (tmp_path / "params.yaml").write_text(
            params.replace("review:\n", "review:\n  users: users.yaml\n", 1)
        )
    if mode == "accounts":
        args += ["--host", "0.0.0.0"]  # accounts without a shared token: a public server
    proc = subprocess.Popen(
        [sys.executable, "-m", "curation.cli", "review", "serve", *args],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_env(),
    )
    try:
        assert proc.stdout is not None
        printed = ""
        for line in proc.stdout:
            printed += line
            if line.startswith("open "):
                break
        found = re.search(r"^open (\S+)", printed, re.M)
        assert found, printed
        link = found.group(1)
        if personal is not None:
            link = link.replace("YOUR-REVIEWER-TOKEN", personal)
        link = link.replace("0.0.0.0", "127.0.0.1")
        base, _, path = link.partition("/?")
        browser = Client(base)
        status, headers, _ = browser.get("/?" + path if path else "/")
        if status == 303:  # the token moves into a cookie and leaves the address bar
            assert headers["location"] == "/"
            status = browser.get("/")[0]
        assert status == 200, (mode, link)
    finally:
        proc.kill()
        proc.wait()


def test_a_failed_rebuild_leaves_no_half_built_database(tmp_path, monkeypatch):
    from curation.errors import InputError
    from curation.review import export
    from curation.review._rebuild import rebuild

    store, config, params = _team(tmp_path, monkeypatch, n=1)
    _vote(store, "c0", "accepted", "alice")
    export(store, config=config, benchmarks=params.benchmarks)
    log = Path(config.decisions)
    log.write_text(log.read_text().replace('"c0"', '"c-ghost"'))
    with pytest.raises(InputError, match="which no candidate table holds"):
        rebuild(
            config=config, benchmarks=params.benchmarks, files=list(config.candidates), force=True
        )
    assert sorted(p.name for p in Path(config.db).parent.glob("*.rebuild*")) == []
