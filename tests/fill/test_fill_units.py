"""Targets, the oracle's closed form, memory and journal, duplicates, parsing, settings.

The stopping rule, the panel selection and gradability are tested in tests/calibrate.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml

from curation.calibrate import (
    AdaptiveSettings,
    CalibrateSettings,
    latent_of,
    simulated_header,
    strip_simulated_header,
)
from curation.candidates import Candidate
from curation.errors import ConfigError
from curation.fill import (
    SKILLS,
    FillSettings,
    RefineSettings,
    RewriteSimulationSettings,
    next_target,
    oracle_insertions,
    top_k_reduction,
)
from curation.fill._journal import Journal
from curation.fill._memory import Memory, MemoryEntry, entry_from_candidate
from curation.fill._parse import ParseFailure, Rewrite, parse_rewrite
from curation.fill._settings import MOVED_TO_CALIBRATE
from curation.fill._targets import gap_containing
from curation.fill._validity import DuplicateIndex
from curation.params_model import ParamsFile, read_params, validate_params
from tests.conftest import REPO, minimal_benchmark

# ---- targets and the oracle ----------------------------------------------------------------


def test_largest_gap_midpoint_and_recompute():
    z = [0.1, 0.5, 0.6]
    t = next_target(z, 0, mode="largest", z_start=z, insertions=3)
    assert t.z == pytest.approx(0.3) and (t.gap.z_left, t.gap.z_right) == (0.1, 0.5)
    t2 = next_target([*z, 0.3], 1, mode="largest", z_start=z, insertions=3)
    assert t2.z == pytest.approx(0.8)  # [0.6, 1.0] is now the widest


def test_top_k_and_explicit_targets():
    z = [0.1, 0.5, 0.6]
    plan = [next_target(z, i, mode="top_k", z_start=z, insertions=3).z for i in range(3)]
    assert plan == pytest.approx([0.3, 0.8, 0.05])  # fixed at the start, ties by z_left
    t = next_target(z, 1, mode=(0.55, 0.7), z_start=z, insertions=3)
    assert t.z == 0.7 and (t.gap.z_left, t.gap.z_right) == (0.6, 1.0)
    assert gap_containing(z, 0.05).z_left == 0.0


def test_oracle_top3_reduction_matches_closed_form():
    # z = 1/8, 5/8, 3/4 (exact in binary, so ties are real ties): gaps 1/8 | 1/2 | 1/8 | 1/4,
    # Top-3 = 1/2 + 1/4 + 1/8 = 7/8. Midpoint insertions: 3/8 (halves the 1/2 gap), then the
    # widest 1/4-gap with the smallest left end, [1/8, 3/8] -> 1/4, then [3/8, 5/8] -> 1/2.
    # Items 1/8 .. 6/8 leave six gaps of 1/8 and [3/4, 1]: Top-3 = 1/4 + 1/8 + 1/8 = 1/2,
    # a reduction of (7/8 - 1/2) / (7/8) = 3/7 = 42.857...%.
    z = np.array([0.125, 0.625, 0.75])
    targets = oracle_insertions(z, insertions=3)
    assert [t.z for t in targets] == [0.375, 0.25, 0.5]
    after = np.concatenate([z, [t.z for t in targets]])
    assert top_k_reduction(z, after, 3) == pytest.approx(100 * 3 / 7)
    # general closed form: k midpoint insertions into one gap of width w among small ones
    # halve it, then its halves: w -> w/2, w/2 -> w/2, w/4, w/4 ...
    w = 0.6
    z2 = np.array([0.0, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.8])
    t2 = oracle_insertions(z2, insertions=1)
    after2 = np.append(z2, t2[0].z)
    assert top_k_reduction(z2, after2, 3) == pytest.approx(
        100 * ((w + 0.2 + 0.02) - (w / 2 + w / 2 + 0.2)) / (w + 0.2 + 0.02)
    )


# ---- memory and journal ------------------------------------------------------------------


def _entry(item: str, z: float, **kw) -> MemoryEntry:
    return MemoryEntry(
        item=item,
        question=f"What is {item}?",
        answer="1",
        answer_type="numeric",
        choices=None,
        b=z,
        se=kw.pop("se", 0.1),
        z=z,
        z_low=None,
        z_high=None,
        origin="benchmark",
        **kw,
    )


def test_memory_parents_and_balanced_references():
    m = Memory([_entry(f"i{k}", z) for k, z in enumerate([0.1, 0.2, 0.3, 0.6, 0.7, 0.9])])
    assert sorted(e.item for e in m.closest(0.45, 2)) == ["i2", "i3"]  # 0.3 and 0.6
    refs = m.references(0.45, 4)
    assert [e.z for e in refs] == [0.2, 0.3, 0.6, 0.7]
    # at an end of the axis the other side fills in
    assert [e.z for e in m.references(0.05, 3)] == [0.1, 0.2, 0.3]
    assert [e.item for e in m.references(0.45, 2, exclude={"i2"})] == ["i1", "i3"]
    with pytest.raises(ValueError, match="already"):
        m.add(_entry("i0", 0.5))


def _record(cid: str, z: float) -> dict:
    return Candidate(
        benchmark="toy",
        candidate=cid,
        method="benchfill",
        parent="i1",
        round=1,
        target_z=0.45,
        question=f"[child {cid}] What is 2 + 2?",
        answer="4",
        answer_type="numeric",
        status="calibrated",
        source="collected",
        rewriter_model="rw",
        prompt_hash=None,
        b=z,
        se=0.2,
        z=z,
        z_low=z - 0.1,
        z_high=z + 0.1,
        calibration="cal.json",
        lineage=json.dumps({"parents": ["i1"], "insertion": 0}),
    ).to_row()


def test_journal_round_trip_torn_tail_and_fingerprint(tmp_path):
    path = tmp_path / "journal.jsonl"
    j = Journal(path, "fp1")
    assert not j.resumed and not j.restarted
    recs = [_record("c1", 0.4), _record("c2", 0.5)]
    j.record_round("benchfill", 0, 1, target_z=0.45, candidates=recs)
    j.record_insertion("benchfill", 0, target_z=0.45, selected="c1", rounds=1)
    with open(path, "a") as fh:  # a write cut short by kill -9
        fh.write('{"kind": "round", "method": "benchfill", "insertion": 0, "rou')
    j2 = Journal(path, "fp1")
    assert j2.resumed and j2.round("benchfill", 0, 1)["candidates"] == recs
    assert j2.insertion("benchfill", 0)["selected"] == "c1"
    assert path.read_text().endswith("}\n")  # torn tail cut off
    rows = j2.round("benchfill", 0, 1)["candidates"]
    memory = Memory([entry_from_candidate(Candidate.from_row(r)) for r in rows])
    assert [e.item for e in memory] == ["c1", "c2"] and memory["c1"].chain == ["i1", "c1"]
    frame = memory.to_frame("toy", "cal.json")
    assert frame["item"].to_list() == ["c1", "c2"] and frame["origin"].unique().to_list() == [
        "candidate"
    ]
    j3 = Journal(path, "fp2")  # params changed: start afresh, nothing kept beside it
    assert j3.restarted and j3.round("benchfill", 0, 1) is None
    assert sorted(p.name for p in tmp_path.iterdir() if "journal" in p.name) == ["journal.jsonl"]


# ---- validity -------------------------------------------------------------------------------


def test_duplicates_need_same_answer_and_numbers():
    idx = DuplicateIndex(0.9)
    q = "Tom has 3 apples and buys 4 more at the market today. How many apples does he have?"
    idx.add("q1", q, "7", "numeric")
    assert idx.find(q.upper() + "  ", "7", "numeric").reason() == "same question as q1"
    para = q.replace("at the market today", "at the market this morning")
    assert idx.find(para, "7.0", "numeric").item == "q1"  # paraphrase, same numbers/answer
    assert idx.find(para, "8", "numeric") is None  # different answer
    assert idx.find(q.replace("4 more", "5 more"), "8", "numeric") is None  # one constant
    assert idx.find(q.replace("4 more", "5 more"), "7", "numeric") is None  # numbers differ
    sim = f"{simulated_header('q1', -1.25)} {q}"
    assert idx.find(sim, "7", "numeric") is None  # a simulated child states its own b
    assert latent_of(sim) == -1.25 and strip_simulated_header(sim) == q
    assert idx.find("Something else entirely, with 3 and 4?", "7", "numeric") is None


# ---- parsing ------------------------------------------------------------------------------

GOOD = {"question": "What is 2 + 3?", "answer": "5", "answer_type": "numeric", "change": "c"}


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(GOOD),
        "Here is the rewrite:\n```json\n" + json.dumps(GOOD) + "\n```\nDone.",
        "<think>maybe {not json} here</think>" + json.dumps(GOOD),
        "Sure! " + json.dumps(GOOD) + " Let me know.",
        json.dumps({**GOOD, "answer": 5}),
        json.dumps({k: v for k, v in GOOD.items() if k != "answer_type"}),
    ],
)
def test_parse_rewrite_accepts_wrapped_json(text):
    out = parse_rewrite(text, answer_type="numeric")
    assert out == Rewrite("What is 2 + 3?", "5", "numeric", "c")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty output"),
        ("I cannot do this.", "no JSON object"),
        ('{"question": "What is', "no JSON object"),
        (json.dumps({"answer": "5"}), "no non-empty 'question'"),
        (json.dumps({"question": "Q?"}), "no 'answer'"),
        (json.dumps({"question": "Q?", "answer": ""}), "'answer' is not"),
        (json.dumps({"question": "Q?", "answer": True}), "'answer' is not"),
        (json.dumps({"question": "Q?", "answer": "1", "answer_type": "essay"}), "'answer_type'"),
        (json.dumps({"question": "Q?", "answer": "1", "choices": "A, B"}), "'choices'"),
    ],
)
def test_parse_rewrite_failures_say_why(text, reason):
    out = parse_rewrite(text, answer_type="numeric")
    assert isinstance(out, ParseFailure) and reason in out.reason


def test_parse_rewrite_cut_off_output():
    out = parse_rewrite('{"question": "a long', answer_type="numeric", finish_reason="length")
    assert isinstance(out, ParseFailure) and "max_tokens" in out.reason


# ---- settings -------------------------------------------------------------------------------


def _params(**sections: object) -> ParamsFile:
    return validate_params({"benchmarks": {"toy": minimal_benchmark("toy")}, **sections})


def _fails(where: str, **sections: object) -> str:
    """The one message validation gives, checked to name ``where`` (a key path)."""
    with pytest.raises(ConfigError, match=f"^params\\.yaml: {re.escape(where)}: ") as err:
        _params(**sections)
    return str(err.value)


def test_settings_defaults_and_errors():
    s = _params().fill
    assert (s.insertions, s.targets, s.rounds, s.parents, s.children) == (3, "largest", 8, 4, 4)
    assert s.rewriter.temperature == 1.0 and s.references == 16
    assert s.fixed_budget(12, AdaptiveSettings()) == 8 * 16 * 12 * 32
    assert _params(fill={"targets": [0.2, 0.7]}).fill.targets == [0.2, 0.7]
    for bad, where in [
        ({"tagets": "largest"}, "fill.tagets"),
        ({"targets": "widest"}, "fill.targets"),
        ({"targets": [1.5]}, "fill.targets[0]"),
        ({"targets": []}, "fill.targets"),
        ({"rounds": 0}, "fill.rounds"),
        ({"insertions": 0}, "fill.insertions"),
        ({"reference_chars": 19}, "fill.reference_chars"),
        ({"duplicate_similarity": 0}, "fill.duplicate_similarity"),
        ({"rewriter": {"temperature": -1}}, "fill.rewriter.temperature"),
        ({"judge": 3}, "fill.judge"),
        ({"prompts": {"systm": "x.txt"}}, "fill.prompts.systm"),
    ]:
        _fails(where, fill=bad)


def test_prompt_overrides_must_be_files(tmp_path):
    given = tmp_path / "system.txt"
    given.write_text("You rewrite.")
    ok = _params(fill={"prompts": {"system": str(given)}}).fill
    assert ok.prompt_files() == {"system": given}
    missing = _params(fill={"prompts": {"benchfill": str(tmp_path / "nope.txt")}}).fill
    with pytest.raises(ConfigError, match=r"^p\.yaml: fill\.prompts\.benchfill: .* is not a file"):
        missing.prompt_files(params_file="p.yaml")


def test_calibration_keys_under_fill_name_their_new_key_path():
    """An old params file (calibration keys under ``fill:``) gets one error naming the new
    key path (issue 27): nothing is silently ignored or silently moved."""
    for key, value in [
        ("adaptive", {"max_trials": 16}),
        ("tolerance", 0.05),
        ("backend", "openai"),
        ("panel", ["a", "b"]),
    ]:
        message = _fails(f"fill.{key}", fill={"rounds": 2, key: value})
        assert f"fill.{key}: moved to calibrate.{key} " in message
    # the moved keys are exactly calibrate's, but the seed (both sections have one)
    assert set(MOVED_TO_CALIBRATE) == set(CalibrateSettings.model_fields) - {"seed"}
    assert "seed" in FillSettings.model_fields


def test_an_old_params_file_fails_validate_with_the_new_key_path(tmp_path, capsys):
    """The shipped file as it was before ``calibrate:`` (its keys under ``fill:``): one
    line naming the new key path, exit 2, before any stage work."""
    from curation.cli import main

    old = yaml.safe_load((REPO / "params.yaml").read_text())
    old["fill"] = {**old.pop("calibrate"), **old["fill"]}
    copy = tmp_path / "params.yaml"
    copy.write_text(yaml.safe_dump(old, sort_keys=False))
    assert main(["validate", "--params", str(copy), "--schema-only"]) == 2
    err = capsys.readouterr().err.strip()
    assert re.match(rf"error: {re.escape(str(copy))}: fill\.\w+: moved to calibrate\.\w+ ", err)
    assert err.count("\n") == 0


def test_the_shipped_params_file_is_migrated_and_its_fingerprint_keeps_the_old_layout():
    params = read_params(REPO / "params.yaml")
    fill, cal = params.fill, params.calibrate
    assert fill.seed == cal.seed  # one seed before the split: the same value in both
    fp = fill.fingerprint_dict(cal, backend=cal.backend_or(params.collect.backend))
    # the fields of fill's settings before calibrate had a section: the journal's
    # fingerprint (and so data/fill/<b>/) is the same for the same settings
    assert set(fp) == {
        *("backend", "seed", "panel", "adaptive", "tolerance"),
        *("insertions", "targets", "rounds", "parents", "children", "references"),
        *("reference_chars", "duplicate_similarity", "rewriter", "simulation", "judge"),
        *("baseline", "oracle", "prompts", "confirm_trials", "world", "refine"),
        *("correction", "intervals"),  # issue 29: the rewriter's correction, the intervals
    }
    assert fp["adaptive"] == cal.adaptive.model_dump() and fp["tolerance"] == cal.tolerance
    assert fp["backend"] == "simulate" and "concurrency" not in fp["rewriter"]
    own = cal.model_copy(update={"seed": cal.seed + 1})
    assert fill.fingerprint_dict(own, backend="simulate")["calibrate_seed"] == cal.seed + 1
    for changed in (
        cal.model_copy(update={"tolerance": 0.02}),
        cal.model_copy(update={"panel": ["a", "b"]}),
        cal.model_copy(update={"adaptive": AdaptiveSettings(max_trials=16)}),
    ):
        assert fill.fingerprint_dict(changed, backend="simulate") != fp


def test_refine_max_trials_has_one_default_the_code_s():
    """Reproduced on main: the schema said fill.refine.max_trials 96, the code used 160."""
    assert FillSettings().refine.max_trials == RefineSettings().max_trials == 320
    schema = json.loads((REPO / "schemas" / "params.schema.json").read_text())
    refine = schema["$defs"]["RefineSettings"]["properties"]
    assert refine["max_trials"]["default"] == RefineSettings().max_trials
    shipped = read_params(REPO / "params.yaml").fill.refine
    assert shipped == RefineSettings()  # params.yaml states the defaults it runs with


def test_rewriter_skill_presets_confirmation_and_world_settings():
    none = _params(fill={"simulation": {"skill": "none"}}).fill
    assert (none.simulation.eta, none.simulation.sigma, none.simulation.skill) == (0.0, 1.0, "none")
    for skill, (eta, sigma) in SKILLS.items():
        sim = RewriteSimulationSettings(skill=skill)  # type: ignore[arg-type]
        assert (sim.eta, sim.sigma) == (eta, sigma)
    d = _params().fill
    assert d.confirm_trials == 16 and d.world.interaction_sd > 0 and d.world.a_sd > 0
    assert _params(fill={"confirm_trials": 0}).fill.confirm_trials == 0
    w = _params(fill={"world": {"theta_sd": 0, "a_sd": 0}}).fill.world
    assert (w.theta_sd, w.a_sd, w.b_sd) == (0.0, 0.0, d.world.b_sd)
    # the fingerprint (resume journal) sees the world and the confirmation
    cal = CalibrateSettings()
    b_sd = _params(fill={"world": {"b_sd": 0.3}}).fill
    assert b_sd.fingerprint_dict(cal, backend="simulate") != d.fingerprint_dict(
        cal, backend="simulate"
    )
    for bad, where in [
        ({"simulation": {"skill": "expert"}}, "fill.simulation.skill"),
        ({"simulation": {"skill": "good", "eta": 0.5}}, "fill.simulation"),
        ({"simulation": {"sigma": -0.1}}, "fill.simulation.sigma"),
        ({"world": {"a_sd": -1}}, "fill.world.a_sd"),
        ({"world": {"tilt": 1}}, "fill.world.tilt"),
        ({"confirm_trials": -1}, "fill.confirm_trials"),
    ]:
        _fails(where, fill=bad)
    assert "give skill or eta/sigma, not both" in _fails(
        "fill.simulation", fill={"simulation": {"skill": "good", "sigma": 0.5}}
    )


def test_an_unbounded_se_of_z_is_unknown_not_printed():
    """A child every trial failed has only a bound on b: its delta-method SE (1e22 in a
    real stand-in run) is no SE on a [0, 1] axis. Metrics report none, not ± 1.6e22."""
    from curation.fill._metrics import method_metrics

    def child(cid: str, se_z: float) -> Candidate:
        row = _record(cid, 0.5)
        row["status"] = "inserted"
        row["lineage"] = json.dumps({"parents": ["i1"], "insertion": 0, "se_z": se_z})
        return Candidate.from_row(row)

    z_before = np.array([0.1, 0.4, 0.6, 0.9])
    for se_z, expected in ((0.02, 0.02), (1.6e22, None), (float("inf"), None)):
        c = child("c1", se_z)
        m = method_metrics(
            [c], [c], z_before=z_before, n_targets=1, rounds=[1], fixed_budget=1, tolerance=0.01
        )
        assert m["target_dev_se"] == expected
        assert m["target_dev"] == pytest.approx(0.05)
