"""Team review: required reviews, conflict and adjudication, agreement (kappa, alpha
against hand computations), judge overrule, bulk + undo, rebuild from the log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from review_fixtures import candidate, make_project

from curation.params import load_params
from curation.params_model import validate_params
from curation.review import ReviewStore, export, seed
from curation.review._agreement import agreement
from curation.review._rebuild import rebuild
from curation.review._stats import format_stats, queue_stats
from curation.review._store import ReviewError


def _team(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int = 2):
    rows = [
        candidate(f"c{i}", question=f"Tom has {i} apples and buys 5 more?", answer=str(i + 5))
        for i in range(10)
    ]
    rows.append(candidate("c-fail", judge_correct=False, judge_reason="wrong"))
    make_project(tmp_path, rows)
    monkeypatch.chdir(tmp_path)
    raw = load_params(tmp_path / "params.yaml")
    raw["review"]["required_reviews"] = n
    params = validate_params(raw)
    config = params.review
    store = ReviewStore.create(config.db, required_reviews=config.required_reviews)
    seed(store, list(config.candidates), config=config, benchmarks=params.benchmarks)
    return store, config, params


def _vote(store, c, decision, reviewer, role="reviewer", comment=None):
    s = store.state("toy", c)
    return store.decide(
        "toy",
        c,
        decision=decision,
        reviewer=reviewer,
        version=s.version,
        supersedes=s.last_decision.id if s.last_decision else None,
        role=role,
        comment=comment,
    )


A = ["accepted"] * 7 + ["rejected"] * 3
B = ["accepted"] * 6 + ["rejected", "rejected", "rejected", "accepted"]


def test_two_reviewers_conflicts_adjudication_and_agreement(tmp_path, monkeypatch):
    store, _config, _params = _team(tmp_path, monkeypatch, n=2)
    for i in range(10):
        _vote(store, f"c{i}", A[i], "alice")
    assert {store.state("toy", f"c{i}").status for i in range(10)} == {"pending"}
    for i in range(10):
        _vote(store, f"c{i}", B[i], "bob")
    status = {i: store.state("toy", f"c{i}").status for i in range(10)}
    assert [i for i, s in status.items() if s == "conflict"] == [6, 9]
    assert sum(s in ("accepted", "rejected") for s in status.values()) == 8
    with pytest.raises(ReviewError, match="adjudicator"):
        _vote(store, "c6", "accepted", "alice")
    _vote(store, "c6", "accepted", "carol", role="adjudicator")
    _vote(store, "c9", "rejected", "carol", role="adjudicator")
    assert store.state("toy", "c6").status == "accepted"
    assert store.state("toy", "c9").status == "rejected"

    # hand computation: 6 both accept, 2 both reject, 2 disagree (one each way)
    po = 8 / 10
    pe = 0.7 * 0.7 + 0.3 * 0.3  # both reviewers: 7 accepts, 3 rejects
    kappa = (po - pe) / (1 - pe)  # = 0.5238...
    # Krippendorff (nominal, 2 coders, 20 values: 14 accept, 6 reject, 2 split units)
    alpha = 1 - (4 / 20) / (2 * 14 * 6 / (20 * 19))  # = 0.5476...
    pairs, groups = agreement(store.decisions())
    (p,) = pairs
    assert (p.a, p.b, p.n, p.agree, p.percent) == ("alice", "bob", 10, 8, 80.0)
    assert p.kappa == pytest.approx(kappa, abs=1e-4)
    assert groups[0].alpha == pytest.approx(alpha, abs=1e-4)
    text = format_stats(queue_stats(store))
    assert "alice vs bob: 10 item(s) both reviewed, 8 agree (80.0%), Cohen's kappa 0.524" in text


def test_overruling_the_judge_needs_a_reason_and_is_recorded(tmp_path, monkeypatch):
    store, config, params = _team(tmp_path, monkeypatch, n=1)
    with pytest.raises(ReviewError, match="overrules the judge"):
        _vote(store, "c-fail", "accepted", "alice")
    d = _vote(store, "c-fail", "accepted", "alice", comment="the judge misread the units")
    assert d.overrules_judge and store.state("toy", "c-fail").status == "accepted"
    export(store, config=config, benchmarks=params.benchmarks)
    rec = [json.loads(x) for x in config.decisions.read_text().splitlines()]
    assert rec[-1]["overrules_judge"] is True
    import polars as pl

    acc = pl.read_parquet(config.accepted_path("toy")).filter(pl.col("item") == "c-fail")
    review = json.loads(acc["lineage"][0])["review"]
    assert acc["review_status"][0] == "accepted" and review["overrules_judge"] is True
    assert queue_stats(store).overrules == 1


def test_bulk_accept_of_a_filter_then_undo(tmp_path, monkeypatch):
    store, config, params = _team(tmp_path, monkeypatch, n=1)
    _vote(store, "c0", "rejected", "alice")
    before = {k: store.state(*k).status for k in store.queue_keys()}
    keys = store.queue_keys(verdict="pass", max_distance=0.03)
    assert ("toy", "c-fail") not in keys and len(keys) == 10
    report = store.decide_many(keys, decision="accepted", reviewer="bob")
    assert report.recorded == 10
    assert all(store.state(*k).status == "accepted" for k in keys)
    undo = store.undo_batch(report.batch, reviewer="bob")
    assert undo.recorded == 10
    assert {k: store.state(*k).status for k in store.queue_keys()} == before
    batches = {d.batch for d in store.decisions() if d.batch}
    assert batches == {report.batch, undo.batch}
    with pytest.raises(ReviewError):
        store.undo_batch(undo.batch, reviewer="bob")


def test_rebuild_from_the_log_reproduces_the_queue(tmp_path, monkeypatch):
    store, config, params = _team(tmp_path, monkeypatch, n=2)
    for i in range(10):
        _vote(store, f"c{i}", A[i], "alice")
        _vote(store, f"c{i}", B[i], "bob")
    _vote(store, "c6", "accepted", "carol", role="adjudicator")
    s = store.state("toy", "c-fail")
    store.decide(
        "toy",
        "c-fail",
        decision="edited",
        reviewer="alice",
        version=s.version,
        supersedes=None,
        question="Tom has 3 apples and buys 6 more. How many?",
        answer="9",
    )
    report = store.decide_many(
        store.queue_keys(status="conflict"),
        decision="rejected",
        reviewer="carol",
        role="adjudicator",
    )
    store.undo_batch(report.batch, reviewer="carol", role="adjudicator")

    def snapshot(st):
        return [
            (
                s.benchmark,
                s.candidate,
                s.status,
                s.version,
                s.last_decision.id if s.last_decision else None,
                v.text_hash,
            )
            for s, v, _d, _l in st.current_versions()
        ], [d.to_record() for d in st.decisions()]

    expected = snapshot(store)
    export(store, config=config, benchmarks=params.benchmarks)
    Path(config.db).unlink()
    with pytest.raises(Exception, match="exists"):
        Path(config.db).touch()
        rebuild(config=config, benchmarks=params.benchmarks, files=list(config.candidates))
    Path(config.db).unlink()
    rebuild(config=config, benchmarks=params.benchmarks, files=list(config.candidates))
    again = ReviewStore.open(config.db, required_reviews=config.required_reviews)
    assert snapshot(again) == expected
