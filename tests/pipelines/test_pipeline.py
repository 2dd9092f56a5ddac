"""The real DVC pipeline: runs, does nothing the second time, reruns only what changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines._dvc import PER_BENCHMARK, BuiltRepo, dvc, ran


@pytest.mark.long(seconds=165)
def test_repro_twice_then_change_one_mapping(built_repo: BuiltRepo, repo: Path):
    expected = {f"{s}@{b}" for s in PER_BENCHMARK for b in ("toy", "toy2")} | {
        "code",
        "gaps",
        "headline",
        "mirt",
    }
    assert ran(built_repo.first_repro) == expected
    # one warning once: the empty decision log was a dep of every build stage, and DVC
    # warned "'data/review/decisions.jsonl' is empty." for each of them
    assert "is empty" not in built_repo.first_repro
    assert (repo / "metrics" / "check" / "toy2.json").is_file()

    second = dvc(repo, "repro")
    assert ran(second) == set()
    assert "Data and pipelines are up to date" in second

    # same params, same outputs: forced reruns of the fitting stages change no hash
    lock = (repo / "dvc.lock").read_text()
    dvc(repo, "repro", "-f", "-s", "annotate@toy", "gaps", "mirt", "subsets@toy")
    assert (repo / "dvc.lock").read_text() == lock

    params = repo / "params.yaml"
    text = params.read_text()
    head, tail = text.split("  toy2:", 1)
    params.write_text(
        head + "  toy2:" + tail.replace("answer_type: numeric", "answer_type: exact", 1)
    )
    third = dvc(repo, "repro")
    # only toy2's chain reruns, and it stops where an output came out unchanged
    assert "ingest@toy2" in ran(third)
    toy2_chain = {f"{s}@toy2" for s in PER_BENCHMARK} | {
        "gaps",
        "mirt",
        "build@toy",
        "headline",
    }
    assert ran(third) <= toy2_chain

    metrics = dvc(repo, "metrics", "show")
    assert "metrics/headline.json" in metrics and "toy2.ddm" in metrics

    # a code edit reruns the code stage and exactly the stages that import the file
    # (code-hashes/<stage>.txt changed); fill's outputs come out the same, so it stops there
    edited = repo / "curation" / "fill" / "_search.py"
    edited.write_text(edited.read_text() + "\n# an edit that changes no output\n")
    fourth = dvc(repo, "repro")
    assert ran(fourth) == {"code", "fill@toy", "fill@toy2"}
    assert "changed: fill" in fourth
    assert ran(dvc(repo, "repro")) == set()
