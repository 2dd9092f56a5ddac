"""Decisions as data: the exported log, the reviewed items for the build, stats, CLI."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from curation.cli import main
from curation.errors import InputError
from curation.review import ReviewStore, export, queue_stats, read_decisions
from curation.review._stats import format_stats
from curation.schemas import validate_frame


def _decide_three(store: ReviewStore) -> None:
    store.decide("toy", "c-acc", decision="accepted", reviewer="alice", version=1, supersedes=None)
    store.decide(
        "toy",
        "c-rej",
        decision="rejected",
        reviewer="bob",
        version=1,
        supersedes=None,
        comment="answer is wrong",
    )
    store.decide(
        "toy",
        "c-edit",
        decision="edited",
        reviewer="alice",
        version=1,
        supersedes=None,
        question="Tom has 4 apples and buys 9 more. How many?",
        answer="13",
        comment="clearer",
    )
    store.decide("toy", "c-sim", decision="accepted", reviewer="bob", version=1, supersedes=None)


def test_export_writes_the_log_and_the_reviewed_items(store, config, params, project):
    _decide_three(store)
    report = export(store, config=config, benchmarks=params.benchmarks)
    assert report.n_decisions == 4

    records = read_decisions(config.decisions)  # validated against decision.schema.json
    assert [(r["candidate"], r["decision"]) for r in records] == [
        ("c-acc", "accepted"),
        ("c-edit", "edited"),
        ("c-rej", "rejected"),
        ("c-sim", "accepted"),
    ]
    rej = records[2]
    assert (rej["reviewer"], rej["comment"], rej["version"]) == ("bob", "answer is wrong", 1)
    edit = records[1]
    assert (edit["version"], edit["new_version"], edit["answer"]) == (1, 2, "13")
    assert records[3]["source"] == "simulated"

    acc = pl.read_parquet(config.accepted_path("toy"))
    validate_frame(acc, "accepted_item", file="accepted")
    status = dict(acc.select("item", "review_status").iter_rows())
    # needs-calibration items (the edit, the unmeasured one) have no z: not offered
    assert status == {
        "c-acc": "accepted",
        "c-rej": "rejected",
        "c-sim": "accepted",
        "c-xss": "pending",
    }
    row = acc.filter(pl.col("item") == "c-acc").row(0, named=True)
    assert (row["reviewer"], row["origin"], row["difficulty_source"]) == (
        "alice",
        "benchfill",
        "collected",
    )
    assert row["calibration"] == "toy:0123456789ab" and row["z"] == pytest.approx(0.58)
    lineage = json.loads(row["lineage"])
    assert lineage["review"]["decision"] == "accepted" and lineage["parent"] == "q2"
    sim = acc.filter(pl.col("item") == "c-sim").row(0, named=True)
    assert (sim["source"], sim["difficulty_source"]) == ("simulated", "simulated")

    edited = pl.read_parquet(config.edited_path("toy"))
    validate_frame(edited, "item", file="edited")
    assert edited.get_column("item").to_list() == ["c-edit"]
    assert edited.item(0, "origin") == "edited" and edited.item(0, "answer") == "13"


def test_export_is_deterministic_and_keeps_decisions_across_reseeds(store, config, params):
    _decide_three(store)
    export(store, config=config, benchmarks=params.benchmarks)
    first = [
        config.decisions.read_bytes(),
        config.accepted_path("toy").read_bytes(),
        config.edited_path("toy").read_bytes(),
    ]
    from curation.review import seed

    seed(
        store, list(config.candidates), config=config, benchmarks=params.benchmarks
    )  # re-seed: no change
    export(store, config=config, benchmarks=params.benchmarks)
    again = [
        config.decisions.read_bytes(),
        config.accepted_path("toy").read_bytes(),
        config.edited_path("toy").read_bytes(),
    ]
    assert first == again
    assert len(config.decisions.read_text().splitlines()) == 4


def test_export_of_an_empty_queue_writes_empty_files(project, config, params):
    store = ReviewStore.create(config.db)
    export(store, config=config, benchmarks=params.benchmarks)
    assert config.decisions.read_text() == ""
    assert pl.read_parquet(config.accepted_path("toy")).height == 0  # build deps always exist


def test_stats_throughput_per_reviewer(project, config, params):
    t0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
    ticks = iter([t0] + [t0 + timedelta(minutes=30 * i) for i in range(10)])
    store = ReviewStore.create(config.db, clock=lambda: next(ticks))
    from curation.review import seed

    seed(store, list(config.candidates), config=config, benchmarks=params.benchmarks)
    for cand, who in (("c-acc", "alice"), ("c-rej", "bob"), ("c-xss", "alice"), ("c-sim", "alice")):
        store.decide("toy", cand, decision="rejected", reviewer=who, version=1, supersedes=None)
    stats = queue_stats(store)
    assert stats.total == 6 and stats.by_status["rejected"] == 4 and stats.simulated == 1
    alice = next(r for r in stats.reviewers if r.reviewer == "alice")
    # alice decided at 09:00, 10:00 and 10:30 UTC: two pauses, each counted as 15 min
    assert (alice.decisions, alice.active_hours, alice.per_hour) == (3, 0.5, 4.0)
    bob = next(r for r in stats.reviewers if r.reviewer == "bob")
    assert bob.per_hour is None  # one decision has no span


def test_stats_pace_leaves_out_bulk_decisions(project, config, params):
    """A bulk accept records many decisions in one instant: no 23684.2/h over 0.00 h."""
    t0 = datetime(2025, 1, 1, 9, 0, tzinfo=UTC)
    ticks = iter([t0] + [t0 + timedelta(seconds=40 * i) for i in range(20)])
    store = ReviewStore.create(config.db, clock=lambda: next(ticks))
    from curation.review import seed

    seed(store, list(config.candidates), config=config, benchmarks=params.benchmarks)
    store.decide("toy", "c-acc", decision="rejected", reviewer="alice", version=1, supersedes=None)
    store.decide("toy", "c-xss", decision="rejected", reviewer="alice", version=1, supersedes=None)
    keys = [("toy", "c-rej"), ("toy", "c-sim"), ("toy", "c-edit")]
    store.decide_many(keys, decision="rejected", reviewer="alice")
    (alice,) = queue_stats(store).reviewers
    assert alice.decisions == 5 and alice.bulk == 3
    assert alice.per_hour is None  # 40 s of one-by-one reviewing: too little to say
    assert "pace n/a" in format_stats(queue_stats(store))


def test_cli_seed_export_stats(project, capsys):
    assert main(["review", "seed"]) == 0
    assert "6 new item(s)" in capsys.readouterr().out
    assert main(["review", "stats", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_status"]["pending"] == 5
    assert main(["review", "export"]) == 0
    assert "0 decision(s)" in capsys.readouterr().out


def test_cli_refuses_a_public_bind_without_token(project, capsys):
    assert main(["review", "seed"]) == 0
    assert main(["review", "serve", "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err
    assert "refusing to serve" in err and "--token" in err
    assert main(["review", "serve", "--host", "0.0.0.0", "--token", "short"]) == 2
    assert "at least 16 characters" in capsys.readouterr().err


def test_export_never_silently_drops_exported_decisions(store, config, params, project):
    _decide_three(store)
    export(store, config=config, benchmarks=params.benchmarks)
    before = config.decisions.read_bytes()
    other = ReviewStore.create(project / "other.sqlite")  # e.g. a wrong --db
    with pytest.raises(InputError, match="would lose them"):
        export(other, config=config, benchmarks=params.benchmarks)
    assert config.decisions.read_bytes() == before
    # more decisions later: the old export is a prefix of the new one, so it is fine
    store.decide("toy", "c-xss", decision="rejected", reviewer="bob", version=1, supersedes=None)
    assert export(store, config=config, benchmarks=params.benchmarks).n_decisions == 5
    assert export(other, config=config, benchmarks=params.benchmarks, force=True).n_decisions == 0
