"""The candidate record: one type whose fields and enums are exactly the schema's."""

from __future__ import annotations

import json
from typing import get_args

import pytest

from curation.candidates import (
    CANDIDATE_STATUSES,
    FIELDS,
    METHODS,
    SOURCES,
    VERDICT_COLUMNS,
    Candidate,
    CandidateStatus,
    Judge,
    Verdict,
    candidates_frame,
    passed,
    verdict_columns,
)
from curation.schemas import load_schema, validate_frame, validate_record

SCHEMA = load_schema("candidate")


def _candidate(**over) -> Candidate:
    values = dict(
        benchmark="toy",
        candidate="benchfill-1-r1-00",
        method="benchfill",
        parent="q1",
        round=1,
        target_z=0.45,
        question="What is 2 + 3?",
        answer="5",
        answer_type="numeric",
        source="simulated",
        rewriter_model="simulated",
        prompt_hash="ab" * 32,
        calibration="data/calibration/toy.json",
    )
    return Candidate(**{**values, **over})


def test_fields_are_the_schema_properties_in_order():
    assert list(FIELDS) == list(SCHEMA["properties"])
    assert set(SCHEMA["required"]) == set(FIELDS)


def test_enums_are_the_schema_enums():
    props = SCHEMA["properties"]
    assert list(CANDIDATE_STATUSES) == props["status"]["enum"]
    assert list(get_args(CandidateStatus)) == props["status"]["enum"]
    assert list(METHODS) == props["method"]["enum"]
    assert list(SOURCES) == props["source"]["enum"]
    assert set(VERDICT_COLUMNS) == {f for f in FIELDS if f.startswith("judge_")}


def test_rows_validate_and_round_trip():
    fresh = _candidate()
    assert fresh.status == "invalid" and fresh.lineage == "{}" and fresh.panel == "{}"
    measured = fresh.replace(
        status="calibrated",
        b=0.1,
        se=0.2,
        z=0.47,
        z_low=0.4,
        z_high=0.55,
        n_trials=8,
        n_correct=3,
        panel=json.dumps({"m": [3, 8]}),
        lineage=json.dumps({"parents": ["q1"]}),
    ).with_verdict(Verdict(True, True, None, "[simulated] fine", "simulated"))
    for rec in (fresh, measured, _candidate(method="oracle", parent=None, status="inserted")):
        row = rec.to_row()
        assert list(row) == list(FIELDS)
        assert validate_record(row, "candidate") is None
        assert Candidate.from_row(row) == rec
    assert measured.judge_model == "simulated" and measured.judge_format_kept is None
    frame = candidates_frame([fresh, measured])
    validate_frame(frame, "candidate", file="candidates")
    assert frame.columns == list(FIELDS) and frame["status"].to_list() == ["invalid", "calibrated"]
    assert candidates_frame([]).columns == list(FIELDS)


def test_from_row_needs_exactly_the_fields():
    row = _candidate().to_row()
    with pytest.raises(ValueError, match="missing"):
        Candidate.from_row({k: v for k, v in row.items() if k != "lineage"})
    with pytest.raises(ValueError, match="unknown"):
        Candidate.from_row({**row, "_note": 1})


def test_judge_view_hides_the_status():
    view = _candidate().judge_view(choices=None, lineage={"parents": ["q1"]})
    assert "status" not in view and view["choices"] is None
    assert json.loads(view["lineage"]) == {"parents": ["q1"]}
    assert "lineage" not in _candidate().judge_view(choices=["a"])


def test_verdict_and_judge_protocol():
    assert passed(Verdict(True, True, None, "r", "m"))
    assert not Verdict(True, False, None, "r", "m").passed
    # a verdict that decided nothing is never a pass (an unparseable one is all-null)
    assert not passed(Verdict(None, None, None, "unparseable judge output", "m"))
    assert not passed(Verdict(None, True, True, "r", "m"))
    assert not passed(Verdict(True, None, True, "r", "m"))
    assert verdict_columns(None) == dict.fromkeys(VERDICT_COLUMNS)

    class Fixed:
        async def judge(self, candidate, parent):
            return Verdict(True, True, True, "ok", "fixed")

    assert isinstance(Fixed(), Judge)
