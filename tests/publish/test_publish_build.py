"""The `build` stage: configs, typed features read back by `datasets`, card, versioning."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import polars as pl
import pytest
import yaml
from publish_project import (
    PARAMS,
    accepted_rows,
    params,
    run_subsets_and_build,
    write_accepted,
)

from curation.errors import InputError
from curation.publish import hf_features
from curation.publish._version import record_release
from curation.schemas import validate_frame
from tests.conftest import params_of

CONFIGS = ["original", "filled", "calibrated-uniform-12"]


def _front_matter(readme: Path) -> dict:
    text = readme.read_text()
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n")[1])


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "disk" not in p.parts
    }


def test_build_reads_back_with_datasets(project: Path):
    text = run_subsets_and_build(project)
    assert text.startswith("toy 1.0.0 (first build): original 40, filled 40")
    out = project / "dist/toy/toy-1.0.0"
    features = hf_features()
    for config in CONFIGS:
        shards = sorted((out / "data" / config).glob("*.parquet"))
        assert [s.name for s in shards] == ["test-00000-of-00001.parquet"]
        from_disk = datasets.load_from_disk(str(out / "disk" / config))
        assert list(from_disk) == ["test"]
        assert from_disk["test"].features == features
        loaded = datasets.load_dataset(
            "parquet",
            data_files={"test": str(out / "data" / config / "*.parquet")},
            cache_dir=str(project / ".hf-cache"),
        )
        assert loaded["test"].features == features
        assert loaded["test"].to_list() == from_disk["test"].to_list()
        validate_frame(pl.read_parquet(shards[0]), "published_item", file=str(shards[0]))
    original = datasets.load_from_disk(str(out / "disk/original"))["test"]
    row = original[0]
    assert row["calibration"].startswith("toy:") and 0 <= row["z"] <= 1
    assert row["difficulty_source"] == "imported" and row["review_status"] == "not-required"
    subset = pl.read_parquet(out / "data/calibrated-uniform-12/test-00000-of-00001.parquet")
    picked = pl.read_parquet("data/subsets/toy/uniform-12.parquet").sort("k")
    assert subset.get_column("item").to_list() == picked.get_column("item").to_list()


def test_card_metadata_figures_and_sections(project: Path):
    run_subsets_and_build(project)
    out = project / "dist/toy/toy-1.0.0"
    meta = _front_matter(out / "README.md")
    assert meta["license"] == "mit"
    assert meta["pretty_name"] == "toy (benchcurate)"
    assert meta["task_categories"] == ["question-answering"]
    assert meta["size_categories"] == ["n<1K"]
    assert meta["language"] == ["en"] and "synthetic" in meta["tags"]
    assert [c["config_name"] for c in meta["configs"]] == CONFIGS
    assert meta["configs"][0]["default"] is True
    assert meta["configs"][2]["data_files"] == [
        {"split": "test", "path": "data/calibrated-uniform-12/*.parquet"}
    ]
    card = (out / "README.md").read_text()
    for needle in (
        "**Version:** 1.0.0 (previous: none)",
        "figures/difficulty_histogram.png",
        "figures/difficulty_ecdf.png",
        "figures/ddm_gaps.png",
        "### Before and after filling",
        "### Calibrated subsets",
        "## Provenance",
        "synthetic test benchmark (tests/publish)",
        "No BenchFill item has been accepted by a human reviewer yet",
        "no reviewed additions were offered",
        "## Fields",
    ):
        assert needle in card, needle
    for fig in ("difficulty_histogram", "difficulty_ecdf", "ddm_gaps"):
        assert (out / f"figures/{fig}.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / f"figures/{fig}.svg").read_text(encoding="utf-8").startswith("<?xml")
    metrics = json.loads((project / "metrics/build/toy.json").read_text())
    assert metrics["version"] == "1.0.0" and metrics["publishable"] is True
    assert (
        metrics["configs"]["calibrated-uniform-12"]["ddm_uniform"]
        < (metrics["configs"]["original"]["ddm_uniform"])
    )


def _release(project: Path, version: str) -> None:
    """What `curate release` / `curate publish` record: the base of the next auto version."""
    record_release(project / f"dist/toy/toy-{version}", project / "releases", date="2025-01-01")


def test_accepted_items_fill_and_bump_minor(project: Path):
    run_subsets_and_build(project)
    _release(project, "1.0.0")
    write_accepted(
        project,
        accepted_rows(
            "toy",
            [
                ("toy-new-1", 0.7, "accepted"),
                ("toy-new-2", 0.8, "pending"),
                ("toy-new-3", 0.9, "rejected"),
            ],
        ),
    )
    text = run_subsets_and_build(project)
    assert "toy 1.1.0 (minor bump from 1.0.0)" in text
    out = project / "dist/toy/toy-1.1.0"
    filled = pl.read_parquet(out / "data/filled/test-00000-of-00001.parquet")
    assert filled.height == 41
    added = filled.filter(pl.col("origin") == "benchfill")
    assert added.get_column("item").to_list() == ["toy-new-1"]
    assert added.item(0, "calibration") == filled.item(0, "calibration")  # same scale
    assert added.item(0, "review_status") == "accepted"
    assert pl.read_parquet(out / "data/original/test-00000-of-00001.parquet").height == 40
    card = (out / "README.md").read_text()
    assert "| `toy-new-1` | benchfill | 0.700 |" in card
    assert '"parents": ["toy-001"]' in card  # lineage
    assert "offered: 3 (accepted 1, pending 1, rejected 1)" in card
    log = (out / "CHANGELOG.md").read_text()
    assert log.index("## 1.1.0") < log.index("## 1.0.0")
    assert "- `filled`: 1 item(s) added: `toy-new-1`" in log
    # dist/toy/ holds this build alone (the older one is in the DVC cache under its lock)
    assert sorted(p.name for p in (project / "dist/toy").iterdir()) == ["toy-1.1.0"]


def test_same_inputs_rebuild_the_same_version_byte_for_byte(project: Path):
    run_subsets_and_build(project)
    before = _digests(project / "dist/toy/toy-1.0.0")
    text = run_subsets_and_build(project)
    assert "toy 1.0.0 (first build)" in text
    assert _digests(project / "dist/toy/toy-1.0.0") == before
    assert sorted(p.name for p in (project / "dist/toy").iterdir()) == ["toy-1.0.0"]
    # unreleased, a rebuild stays 1.0.0 whatever dist/ holds: versions bump from releases/
    _release(project, "1.0.0")
    assert "toy 1.0.0 (" in run_subsets_and_build(project)


def test_removed_item_is_a_major_bump_and_card_change_a_patch(project: Path):
    run_subsets_and_build(project)
    _release(project, "1.0.0")
    # card-only change: a new tag in params
    (project / "params.yaml").write_text(
        PARAMS.replace("tags: [synthetic]", "tags: [synthetic, x]")
    )
    assert "toy 1.0.1 (patch bump from 1.0.0)" in run_subsets_and_build(project)
    log = (project / "dist/toy/toy-1.0.1/CHANGELOG.md").read_text()
    assert "no item added, removed or changed" in log
    assert "dataset card updated (no data change)" in log
    _release(project, "1.0.1")
    # drop one original item (the benchmark lost it)
    for table in ("items", "difficulty", "responses"):
        path = f"data/{table}/toy.parquet"
        pl.read_parquet(path).filter(pl.col("item") != "toy-039").write_parquet(path)
    assert "toy 2.0.0 (major bump from 1.0.1)" in run_subsets_and_build(project)
    log = (project / "dist/toy/toy-2.0.0/CHANGELOG.md").read_text()
    assert "- `original`: 1 item(s) removed: `toy-039`" in log
    assert log.count("## ") == 3


def test_explicit_version_and_under_bump_warning(project: Path):
    run_subsets_and_build(project, version="0.3.0")
    _release(project, "0.3.0")
    write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    text = run_subsets_and_build(project, version={"toy": "0.3.1"})
    assert "version 0.3.1 under-bumps 0.3.0" in text
    metrics = json.loads((project / "metrics/build/toy.json").read_text())
    assert metrics["version"] == "0.3.1" and metrics["bump"] == "minor"


def test_simulated_build_is_marked_not_publishable(project: Path):
    from publish_project import write_benchmark

    write_benchmark(project, "toy", source="simulated")
    text = run_subsets_and_build(project)
    assert "not publishable: 40 record(s)" in text
    card = (project / "dist/toy/toy-1.0.0/README.md").read_text()
    assert "**Not publishable as built.**" in card
    assert "z was measured on simulated responses" in card
    assert json.loads((project / "metrics/build/toy.json").read_text())["publishable"] is False


def test_bad_additions_and_records_are_errors(project: Path):
    run_subsets_and_build(project)
    write_accepted(project, accepted_rows("toy", [("toy-003", 0.7, "accepted")]))
    with pytest.raises(InputError, match="must have a new id"):
        run_subsets_and_build(project)
    write_accepted(project, accepted_rows("toy", [("toy-new", 1.7, "accepted")]))
    with pytest.raises(InputError, match=r"toy\.parquet: row 1: field 'z'"):
        run_subsets_and_build(project)
    Path("data/review/export/toy.parquet").unlink()
    diff = pl.read_parquet("data/difficulty/toy.parquet")
    bad_z = pl.when(pl.col("item") == "toy-005").then(1.5).otherwise(pl.col("z")).alias("z")
    diff.with_columns(bad_z).write_parquet("data/difficulty/toy.parquet")
    from pipelines import build

    with pytest.raises(InputError, match="toy config original: row 6: field 'z'"):
        build.run(params_of(params(project)), "toy")


def test_missing_subsets_metrics_names_the_stage(project: Path):
    from pipelines import build

    with pytest.raises(InputError, match="dvc repro subsets@toy"):
        build.run(params_of(params(project)), "toy")


def test_unmeasured_item_is_published_without_z(project: Path):
    path = "data/difficulty/toy.parquet"
    pl.read_parquet(path).filter(pl.col("item") != "toy-010").write_parquet(path)
    run_subsets_and_build(project)
    out = project / "dist/toy/toy-1.0.0"
    original = pl.read_parquet(out / "data/original/test-00000-of-00001.parquet")
    row = original.filter(pl.col("item") == "toy-010").row(0, named=True)
    assert row["z"] is None and row["calibration"] is None
    assert row["difficulty_source"] == "unmeasured"
    metrics = json.loads((project / "metrics/build/toy.json").read_text())
    assert (
        metrics["configs"]["original"] | {"n": 40, "n_measured": 39}
        == metrics["configs"]["original"]
    )


def test_build_folder_gets_the_usual_mode(project: Path):
    import os
    import stat

    run_subsets_and_build(project)
    mask = os.umask(0)
    os.umask(mask)
    mode = stat.S_IMODE((project / "dist/toy/toy-1.0.0").stat().st_mode)
    assert mode == 0o777 & ~mask


def test_two_builds_load_their_own_rows_through_one_fresh_datasets_cache(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Build folders are named <benchmark>-<version>, so `load_dataset(folder, config)`
    never serves one benchmark's cached rows for another's (they were all `1.0.0`)."""
    run_subsets_and_build(project, "toy")
    run_subsets_and_build(project, "toy2")
    cache = tmp_path / "fresh-hf-cache"
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache))
    rows = {}
    for benchmark in ("toy", "toy2"):
        folder = project / f"dist/{benchmark}/{benchmark}-1.0.0"
        ds = datasets.load_dataset(str(folder), "original", split="test", cache_dir=str(cache))
        rows[benchmark] = set(ds["item"])
    assert rows["toy"] and all(i.startswith("toy-") for i in rows["toy"])
    assert rows["toy2"] and all(i.startswith("toy2-") for i in rows["toy2"])


def test_dist_holds_the_current_build_alone_and_publish_trusts_no_record_beside_it(
    project: Path,
):
    """A rebuild leaves dist/<b>/ with this build alone (a leftover, an old version, goes),
    as a fresh clone's; the publish check trusts metrics/build (and dvc.lock), never a
    folder or record lying beside the build."""
    run_subsets_and_build(project)
    metrics_file = project / "metrics/build/toy.json"
    fresh = metrics_file.read_bytes()
    assert list(json.loads(fresh)["files"]) == ["toy-1.0.0"]
    stray = project / "dist/toy/toy-0.9.0"
    (stray / "data").mkdir(parents=True)
    (stray / "data/old.parquet").write_bytes(b"left over from an earlier build")
    run_subsets_and_build(project)
    assert metrics_file.read_bytes() == fresh
    assert sorted(p.name for p in (project / "dist/toy").iterdir()) == ["toy-1.0.0"]
    assert not (project / ".curate-tmp").exists() or not any(
        (project / ".curate-tmp").rglob("*.tmp")
    )

    from curation.publish._checks import PublishRefused
    from curation.publish._verify import verify_build

    (stray / "data").mkdir(parents=True)  # an old folder put back by hand, with a record
    (stray / "data/old.parquet").write_bytes(b"left over from an earlier build")
    (stray / "manifest.json").write_text('{"files": {}}')
    with pytest.raises(PublishRefused, match="is not the build that dvc.lock or metrics"):
        verify_build(Path("dist/toy/toy-0.9.0"), benchmark="toy")
    built = Path("dist/toy/toy-1.0.0")
    assert verify_build(built, benchmark="toy") == "metrics/build/toy.json"
    (built / "CHANGELOG.md").write_text("edited after the build\n")
    with pytest.raises(PublishRefused, match="CHANGELOG.md"):
        verify_build(built, benchmark="toy")
    metrics_file.unlink()  # no record outside dist/: refused
    with pytest.raises(PublishRefused, match="is not the build"):
        verify_build(built, benchmark="toy")
