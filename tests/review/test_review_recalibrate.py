"""An edit goes back to calibration: export -> recalibrate (offline) -> seed -> pending."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml
from review_fixtures import PARAMS, make_project

from curation.cli import main
from curation.irt import Calibration
from curation.params_model import read_params
from curation.paths import judged_path
from curation.review import ReviewStore, export, recalibrate
from curation.review._edits import latent_b
from curation.review._store import ReviewError
from curation.schemas import validate_frame
from tests.conftest import params_of

EDITED_Q = "Tom has 4 apples and buys 9 more. How many apples does he have now?"


def _params(root: Path) -> None:
    params = yaml.safe_load(PARAMS)
    params["review"] = {"db": "data/review/queue.sqlite"}  # default candidate paths
    params["collect"] = {"backend": "simulate", "seed": 3, "progress": False}
    params["llm"] = {"cache": ".llm-cache/completions.sqlite"}
    params["calibrate"] = {
        "seed": 7,
        "tolerance": 0.05,
        "adaptive": {"first_batch": 4, "batch": 4, "max_trials": 16, "se_accept": 0.15},
    }
    params["judge"] = {"enabled": True}
    (root / "params.yaml").write_text(yaml.safe_dump(params))


@pytest.fixture
def recal_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    make_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    # where the judge stage writes candidates: the review section's default input
    judged = judged_path("toy")
    judged.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "data" / "candidates.parquet").rename(judged)
    Calibration(
        model="1pl",
        abilities={"weak": -1.5, "mid": -0.5, "strong": 0.5, "top": 1.5},
        scale={"method": "panel", "theta_min": -1.5, "theta_max": 1.5},
        panel=("weak", "mid", "strong", "top"),
        settings={"b_sd": 3.0},
        benchmark="toy",
    ).save(tmp_path / "data" / "calibration" / "toy.json")
    _params(tmp_path)
    return tmp_path


def test_edit_is_recalibrated_and_returns_pending(recal_project: Path):
    params = read_params("params.yaml")
    config = params.review
    assert main(["review", "seed"]) == 0  # default paths; the recalibrated one is missing
    store = ReviewStore.open(config.db)
    decision = store.decide(
        "toy",
        "c-edit",
        decision="edited",
        reviewer="alice",
        version=1,
        supersedes=None,
        question=EDITED_Q,
        answer="13",
    )
    assert store.state("toy", "c-edit").status == "needs-calibration"
    export(store, config=config, benchmarks=params.benchmarks)

    report = recalibrate(config=config, params=params_of(params))
    stats = report.benchmarks["toy"]
    assert (stats.edited, stats.recalibrated, stats.unchanged) == (1, 1, 0)
    assert report.requests > 0 and report.judge_requests > 0 and report.source == "simulated"
    out = config.recalibrated_path("toy")
    df = pl.read_parquet(out)
    validate_frame(df, "candidate", file=str(out))
    rec = df.row(0, named=True)
    assert (rec["candidate"], rec["question"], rec["answer"]) == ("c-edit", EDITED_Q, "13")
    assert rec["status"] == "calibrated" and rec["source"] == "simulated"
    assert rec["z"] is not None and 0 < rec["n_trials"] <= 4 * 16
    assert rec["judge_model"] == "simulated" and rec["judge_correct"] is not None
    assert (rec["parent"], rec["target_z"], rec["method"]) == ("q1", 0.6, "benchfill")
    lineage = json.loads(rec["lineage"])
    assert lineage["edit"]["decision_id"] == decision.id
    assert lineage["edit"]["reviewer"] == "alice"
    assert lineage["original"] == {"parents": ["q1"], "cost": {"calls": 3}}
    # collected fixture candidate: no simulation lineage, so its calibrated b is kept
    assert lineage["simulation"]["latent_b"] == pytest.approx(0.4)
    assert lineage["simulation"]["latent_from"] == "original candidate calibrated b"
    assert "#" + str(decision.id) in rec["change"]

    assert main(["review", "seed"]) == 0  # reads the recalibrated file by default
    view = store.item("toy", "c-edit")
    assert view.state.status == "pending"
    assert view.state.version == 3  # 1 seeded, 2 the edit (unmeasured), 3 measured
    assert view.current.question == EDITED_Q
    assert view.current.text_hash == view.versions[1].text_hash
    assert view.current.z == pytest.approx(rec["z"])
    assert view.current.judge in ("pass", "fail")

    # idempotent: nothing asked again, the file untouched, re-seeding adds nothing
    before = out.read_bytes()
    again = recalibrate(config=config, params=params_of(params))
    assert (again.requests, again.cache_hits, again.judge_requests) == (0, 0, 0)
    assert again.benchmarks["toy"].unchanged == 1 and not again.benchmarks["toy"].written
    assert out.read_bytes() == before
    assert main(["review", "recalibrate", "-b", "toy"]) == 0
    assert main(["review", "seed"]) == 0
    assert store.item("toy", "c-edit").state.version == 3

    # once pending, the item leaves the edited export; its record stays in the file
    export(store, config=config, benchmarks=params.benchmarks)
    assert pl.read_parquet(config.edited_path("toy")).height == 0
    later = recalibrate(config=config, params=params_of(params))
    assert later.benchmarks["toy"].kept == 1
    assert pl.read_parquet(out)["candidate"].to_list() == ["c-edit"]
    acc = pl.read_parquet(config.accepted_path("toy")).filter(pl.col("item") == "c-edit")
    assert acc.row(0, named=True)["origin"] == "edited"
    assert acc.row(0, named=True)["review_status"] == "pending"


def test_simulated_latent_comes_from_the_lineage_first():
    lineage = {"simulation": {"latent_b": -0.25}}
    base = {"question": "[simulated rewrite of q1; latent b = 0.500000] Q", "b": 0.1}
    assert latent_b(base, lineage) == (-0.25, "original candidate lineage (simulation.latent_b)")
    assert latent_b(base, {})[0] == pytest.approx(0.5)
    assert latent_b({"question": "Q", "b": 0.1}, {})[0] == pytest.approx(0.1)


def test_judge_rejected_unmeasured_candidate_can_be_accepted_with_a_reason(recal_project: Path):
    """BenchFill's judge rejected c-nocal before it was measured: it waits in
    needs-calibration with Accept off. Sent to calibration unchanged, it comes back
    pending with a difficulty and is accepted with a written reason (issue 32, item 3)."""
    judged = judged_path("toy")  # as fill records it: the simulated world's latent b
    lineage = json.dumps({"parents": ["q1"], "simulation": {"latent_b": 0.3}})
    pl.read_parquet(judged).with_columns(
        pl.when(pl.col("candidate") == "c-nocal")
        .then(pl.lit(lineage))
        .otherwise(pl.col("lineage"))
        .alias("lineage")
    ).write_parquet(judged)
    params = read_params("params.yaml")
    config = params.review
    assert main(["review", "seed"]) == 0
    store = ReviewStore.open(config.db)
    view = store.item("toy", "c-nocal")
    assert view.state.status == "needs-calibration" and not view.current.measured
    with pytest.raises(ReviewError, match="send it to calibration"):
        store.decide("toy", "c-nocal", decision="accepted", reviewer="alice", version=1,
                     supersedes=None, comment="fine")  # fmt: skip
    store.decide(
        "toy", "c-nocal", decision="edited", reviewer="alice", version=1, supersedes=None,
        question=view.current.question, answer=view.current.answer,
    )  # fmt: skip
    export(store, config=config, benchmarks=params.benchmarks)
    assert pl.read_parquet(config.edited_path("toy"))["item"].to_list() == ["c-nocal"]
    report = recalibrate(config=config, params=params_of(params))
    assert report.benchmarks["toy"].recalibrated == 1
    assert main(["review", "seed"]) == 0
    view = store.item("toy", "c-nocal")
    assert view.state.status == "pending" and view.current.measured
    last = view.state.last_decision.id if view.state.last_decision else None
    if view.current.judge == "fail":
        with pytest.raises(ReviewError, match="reason"):
            store.decide("toy", "c-nocal", decision="accepted", reviewer="alice",
                         version=view.state.version, supersedes=last)  # fmt: skip
    store.decide(
        "toy", "c-nocal", decision="accepted", reviewer="alice", version=view.state.version,
        supersedes=last, comment="the judge misread the units",
    )  # fmt: skip
    assert store.state("toy", "c-nocal").status == "accepted"
    # a measured version's unchanged edit still changes nothing
    with pytest.raises(ReviewError, match="changes nothing"):
        store.decide("toy", "c-acc", decision="edited", reviewer="alice", version=1,
                     supersedes=None, question=store.item("toy", "c-acc").current.question,
                     answer="4")  # fmt: skip
