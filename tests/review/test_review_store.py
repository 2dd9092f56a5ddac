"""The queue store: seeding, versions, decisions, the append-only log, conflicts."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from review_fixtures import candidate, standard_candidates, write_candidates

from curation.errors import InputError
from curation.review import (
    DecisionConflict,
    ReviewError,
    ReviewStore,
    read_candidates,
    seed,
)


def _seed(store, config, params, rows=None, path: Path | None = None):
    path = path or Path("data/candidates.parquet")
    if rows is not None:
        write_candidates(path, rows)
    return seed(store, [path], config=config, benchmarks=params.benchmarks)


def test_seed_takes_reviewable_candidates_and_is_idempotent(store, config, params):
    rows, total = store.queue()
    assert total == 6  # invalid and oracle candidates never reach a reviewer
    assert {r.candidate for r in rows} == {"c-acc", "c-rej", "c-edit", "c-sim", "c-xss", "c-nocal"}
    assert store.state("toy", "c-nocal").status == "needs-calibration"  # no z: cannot be accepted
    assert store.state("toy", "c-sim").source == "simulated"
    view = store.item("toy", "c-acc")
    assert view.current.parent_kind == "item"
    assert view.current.parent_question == "Solve $x + 2 = 5$ for $x$."
    assert view.domain == "math" and view.license == "MIT"

    again = _seed(store, config, params)
    assert (again.new_items, again.new_versions, again.unchanged, again.filtered) == (0, 0, 6, 2)


def test_reseeding_adds_versions_and_keeps_every_decision(store, config, params):
    d1 = store.decide(
        "toy",
        "c-acc",
        decision="accepted",
        reviewer="alice",
        version=1,
        supersedes=None,
        comment="good",
    )
    store.decide("toy", "c-rej", decision="rejected", reviewer="bob", version=1, supersedes=None)
    rows = [r for r in standard_candidates() if r["candidate"] != "c-rej"]  # c-rej left out
    for r in rows:
        if r["candidate"] == "c-acc":
            r.update(z=0.71, z_low=0.6, z_high=0.8)  # re-measured
    rows.append(candidate("c-new"))
    report = _seed(store, config, params, rows)
    assert (report.new_items, report.new_versions) == (1, 1)

    acc = store.item("toy", "c-acc")
    assert acc.state.version == 2 and acc.state.status == "pending"  # decided on v1, not v2
    assert [d.id for d in acc.history] == [d1.id]
    assert acc.history[0].version == 1 and acc.history[0].comment == "good"
    # a candidate missing from the new file keeps its item and its decision
    assert store.state("toy", "c-rej").status == "rejected"
    assert len(store.decisions()) == 2


def test_reseeding_never_undoes_an_edit(store, config, params):
    store.decide(
        "toy",
        "c-edit",
        decision="edited",
        reviewer="alice",
        version=1,
        supersedes=None,
        question="Tom has 3 apples and buys 10 more. How many?",
        answer="13",
        comment="rounder numbers",
    )
    state = store.state("toy", "c-edit")
    assert (state.status, state.version) == ("needs-calibration", 2)
    with pytest.raises(ReviewError, match="no measured difficulty"):
        store.decide(
            "toy",
            "c-edit",
            decision="accepted",
            reviewer="alice",
            version=2,
            supersedes=state.last_decision.id,
        )

    assert _seed(store, config, params).unchanged == 6  # the same file: nothing happens
    rows = standard_candidates()
    for r in rows:
        if r["candidate"] == "c-edit":
            r["z"] = 0.59  # the original text, re-measured: must not replace the edit
    assert _seed(store, config, params, rows).stale == 1
    assert store.state("toy", "c-edit").version == 2

    # the edited text comes back calibrated: a new pending version that can be accepted
    recal = candidate(
        "c-edit",
        question="Tom has 3 apples and buys 10 more. How many?",
        answer="13",
        z=0.62,
        z_low=0.55,
        z_high=0.7,
    )
    assert _seed(store, config, params, [recal], Path("data/recal.parquet")).new_versions == 1
    state = store.state("toy", "c-edit")
    assert (state.status, state.version) == ("pending", 3)
    store.decide(
        "toy",
        "c-edit",
        decision="accepted",
        reviewer="bob",
        version=3,
        supersedes=state.last_decision.id,
    )
    assert store.state("toy", "c-edit").status == "accepted"


def test_decision_log_and_versions_are_append_only(store):
    store.decide("toy", "c-acc", decision="accepted", reviewer="alice", version=1, supersedes=None)
    conn = sqlite3.connect(store.path)
    try:
        for sql in (
            "UPDATE decisions SET decision = 'rejected'",
            "UPDATE decisions SET reviewer = 'mallory' WHERE id = 1",
            "DELETE FROM decisions",
            "UPDATE versions SET question = 'x'",
            "DELETE FROM versions",
            "DELETE FROM items",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="append-only|never deleted"):
                conn.execute(sql)
    finally:
        conn.close()
    [d] = store.decisions()
    assert (d.decision, d.reviewer) == ("accepted", "alice")


def test_a_stale_decision_is_refused_with_the_current_state(store):
    first = store.decide(
        "toy",
        "c-rej",
        decision="rejected",
        reviewer="bob",
        version=1,
        supersedes=None,
        comment="wrong answer",
    )
    with pytest.raises(DecisionConflict) as err:
        store.decide(
            "toy", "c-rej", decision="accepted", reviewer="alice", version=1, supersedes=None
        )
    assert err.value.current.status == "rejected"
    assert "rejected by bob" in str(err.value) and "wrong answer" in str(err.value)
    # deciding again on what one has seen is a new decision that supersedes the first
    second = store.decide(
        "toy",
        "c-rej",
        decision="accepted",
        reviewer="alice",
        version=1,
        supersedes=first.id,
        comment="on reflection fine",
    )
    assert second.supersedes == first.id
    assert [d.decision for d in store.history("toy", "c-rej")] == ["rejected", "accepted"]


def test_concurrent_decisions_exactly_one_wins(store):
    n = 6
    barrier = threading.Barrier(n)
    results: list[object] = [None] * n

    def worker(i: int) -> None:
        barrier.wait()
        try:
            results[i] = store.decide(
                "toy",
                "c-acc",
                decision="accepted" if i % 2 else "rejected",
                reviewer=f"r{i}",
                version=1,
                supersedes=None,
            )
        except DecisionConflict as exc:
            results[i] = exc

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wins = [r for r in results if not isinstance(r, DecisionConflict)]
    losses = [r for r in results if isinstance(r, DecisionConflict)]
    assert len(wins) == 1 and len(losses) == n - 1
    assert len(store.history("toy", "c-acc")) == 1
    assert all(exc.current.last_decision.id == wins[0].id for exc in losses)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"decision": "maybe"}, "unknown decision"),
        ({"reviewer": "   "}, "reviewer name"),
        ({"decision": "edited", "question": ""}, "non-empty question"),
        (
            {
                "decision": "edited",
                "question": "Tom has 3 apples and buys 9 more. How many apples?",
                "answer": "12",
            },
            "changes nothing",
        ),
    ],
)
def test_decisions_that_cannot_apply_are_refused(store, kw, message):
    args = {"decision": "accepted", "reviewer": "alice", "version": 1, "supersedes": None, **kw}
    with pytest.raises(ReviewError, match=message):
        store.decide("toy", "c-edit", **args)
    assert store.decisions() == []


def test_a_bad_candidate_table_names_file_row_and_field(project):
    rows = [candidate("ok"), candidate("bad", z=1.5)]
    path = write_candidates(project / "bad.parquet", rows)
    with pytest.raises(InputError) as err:
        read_candidates(path)
    assert "bad.parquet: row 2: field 'z'" in str(err.value)
    path = write_candidates(project / "dupe.parquet", [candidate("x"), candidate("x")])
    with pytest.raises(InputError, match="repeats"):
        read_candidates(path)
    with pytest.raises(InputError, match="review seed"):
        ReviewStore.open(project / "nowhere.sqlite")
