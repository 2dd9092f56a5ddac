"""A judge-rejected candidate that a reviewer accepts with a reason (an overrule) goes
through export into the `filled` config, and the card's review summary counts it."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import polars as pl
import yaml
from publish_project import params, run_subsets_and_build

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "review"))
from review_fixtures import candidate, write_candidates  # noqa: E402

from curation.params_model import validate_params  # noqa: E402
from curation.review import ReviewStore, export, seed  # noqa: E402


def test_an_overruled_judge_rejection_reaches_the_filled_config(project: Path) -> None:
    raw = yaml.safe_load((project / "params.yaml").read_text())
    raw["review"] = {"db": "data/review/queue.sqlite", "candidates": "data/candidates.parquet"}
    (project / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    common = dict(benchmark="toy", parent="toy-001", source="collected", z=0.75)
    write_candidates(
        project / "data/candidates.parquet",
        [
            candidate(
                "toy-over-1",
                status="judge-rejected",
                judge_correct=False,
                judge_reason="the reference answer is wrong",
                question="Tom has 3 apples and buys 5 more. How many apples now?",
                **common,
            ),
            candidate("toy-plain-1", question="Tom has 4 apples; he eats 1. How many?", **common),
        ],
    )
    p = validate_params(params(project))
    config = p.review
    store = ReviewStore.create(config.db, required_reviews=config.required_reviews)
    seed(store, list(config.candidates), config=config, benchmarks=p.benchmarks)
    for cand, comment in (("toy-over-1", "3 + 5 = 8: the judge misread it"), ("toy-plain-1", "")):
        state = store.state("toy", cand)
        store.decide(
            "toy",
            cand,
            decision="accepted",
            reviewer="alice",
            version=state.version,
            supersedes=None,
            comment=comment,
        )
    export(store, config=config, benchmarks=p.benchmarks)

    run_subsets_and_build(project)
    out = project / "dist/toy/toy-1.0.0"
    filled = pl.read_parquet(out / "data/filled/test-00000-of-00001.parquet")
    added = filled.filter(pl.col("origin") == "benchfill")
    assert sorted(added["item"].to_list()) == ["toy-over-1", "toy-plain-1"]
    over = added.filter(pl.col("item") == "toy-over-1")
    assert json.loads(over["lineage"][0])["review"]["overrules_judge"] is True
    card = (out / "README.md").read_text()
    assert "accepted over the LLM judge's rejection (reviewer overrule): 1" in card
