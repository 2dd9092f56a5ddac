"""The local gate of `curate publish`: invalid, unaccepted or simulated records are refused
by item, before any network call; so are modified builds and version mismatches."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from publish_project import accepted_rows, run_subsets_and_build, write_accepted

from curation.errors import CurationError, InputError
from curation.publish import PublishRefused, SemVer, check_dataset_dir, diff_records, publish

FILLED = "data/filled/test-00000-of-00001.parquet"


def _tamper(out: Path, rel: str, expr: pl.Expr) -> None:
    path = out / rel
    pl.read_parquet(path).with_columns(expr).write_parquet(path)


@pytest.fixture
def built(project: Path) -> Path:
    write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    run_subsets_and_build(project)
    return project / "dist/toy/toy-1.0.0"


def test_a_clean_build_passes(built: Path):
    files = check_dataset_dir(built, version="1.0.0")
    assert {f.path for f in files} >= {"README.md", "CHANGELOG.md", FILLED}
    result = publish(built, repo_id="org/name", version="1.0.0", dry_run=True)
    assert result.status == "dry-run" and "would upload" in result.summary()


def test_unaccepted_item_is_refused_by_name(built: Path):
    status = (
        pl.when(pl.col("item") == "toy-new-1")
        .then(pl.lit("pending"))
        .otherwise(pl.col("review_status"))
        .alias("review_status")
    )
    _tamper(built, FILLED, status)
    with pytest.raises(PublishRefused) as err:
        check_dataset_dir(built, version="1.0.0")
    msg = str(err.value)
    assert "config 'filled', item 'toy-new-1', field 'review_status'" in msg
    assert "benchfill item is 'pending', not human-accepted" in msg


def test_invalid_record_names_file_row_and_field(built: Path):
    z = pl.when(pl.col("item") == "toy-002").then(1.5).otherwise(pl.col("z")).alias("z")
    _tamper(built, "data/original/test-00000-of-00001.parquet", z)
    with pytest.raises(InputError, match=r"data/original: row 3: field 'z'"):
        check_dataset_dir(built, version="1.0.0")


def test_invalid_enum_is_refused(built: Path):
    _tamper(built, FILLED, pl.lit("guessed").alias("difficulty_source"))
    with pytest.raises(InputError, match="field 'difficulty_source'"):
        check_dataset_dir(built, version="1.0.0")


@pytest.mark.parametrize(
    ("over", "needle"),
    [
        (
            {"difficulty_source": "simulated"},
            "field 'difficulty_source': z was measured on simulated",
        ),
        ({"source": "simulated"}, "field 'source': the item text is simulated"),
        (
            {"lineage": json.dumps({"generator": {"model": "x", "backend": "simulated"}})},
            "marked simulated at lineage.generator.backend",
        ),
        ({"metadata": json.dumps({"simulated": True})}, "marked simulated at metadata.simulated"),
    ],
)
def test_simulated_anywhere_is_refused_by_name(project: Path, over: dict, needle: str):
    write_accepted(project, accepted_rows("toy", [("toy-sim", 0.7, "accepted")], **over))
    run_subsets_and_build(project)
    with pytest.raises(PublishRefused) as err:
        publish(project / "dist/toy/toy-1.0.0", repo_id="org/name", version="1.0.0", dry_run=True)
    assert "item 'toy-sim'" in str(err.value)
    assert needle in str(err.value)
    assert "never reach a published dataset" in str(err.value)


def test_modified_build_and_wrong_version_are_refused(built: Path):
    with pytest.raises(PublishRefused, match="built as version '1.0.0', not '1.0.1'"):
        check_dataset_dir(built, version="1.0.1")
    with pytest.raises(CurationError, match="not a semantic version"):
        check_dataset_dir(built, version="v1")
    readme = built / "README.md"
    readme.write_text(readme.read_text() + "\nhand edit\n")
    with pytest.raises(PublishRefused, match=r"changed since it was built \(README.md\)"):
        check_dataset_dir(built, version="1.0.0")


def test_duplicate_items_in_a_config_are_refused(built: Path):
    path = built / FILLED
    df = pl.read_parquet(path)
    pl.concat([df, df.head(1)]).write_parquet(path)
    with pytest.raises(PublishRefused, match="repeats item 'toy-000'"):
        check_dataset_dir(built, version="1.0.0")


def test_online_publish_needs_token_and_online_mode(built: Path, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(CurationError, match="set the environment variable HF_TOKEN"):
        publish(built, repo_id="org/name", version="1.0.0")
    monkeypatch.setenv("MY_TOKEN", "hf_abc")
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(CurationError, match="HF_HUB_OFFLINE is set"):
        publish(built, repo_id="org/name", version="1.0.0", token_env="MY_TOKEN")
    with pytest.raises(CurationError, match="expected ORG/NAME"):
        publish(built, repo_id="no-slash", version="1.0.0", dry_run=True)


def test_semver_and_diff():
    assert SemVer.parse("1.2.3").bump("major") == SemVer(2, 0, 0)
    assert SemVer.parse("1.2.3").bump("minor") == SemVer(1, 3, 0)
    assert str(SemVer.parse("1.2.3").bump("patch")) == "1.2.4"
    assert SemVer.parse("1.10.0") > SemVer.parse("1.9.9")
    with pytest.raises(ValueError):
        SemVer.parse("01.2.3")
    old = {"a": {"i1": {"z": 0.1}, "i2": {"z": 0.2}}, "gone": {"i1": {"z": 0.1}}}
    new = {"a": {"i1": {"z": 0.15}, "i3": {"z": 0.3}}, "b": {"i1": {"z": 0.1}}}
    d = diff_records(old, new)
    assert d.added == {"a": ["i3"], "b": ["i1"]}
    assert d.removed == {"a": ["i2"], "gone": ["i1"]}
    assert d.changed == {"a": {"i1": ["z"]}}
    assert d.configs_added == ["b"] and d.configs_removed == ["gone"]
    assert d.required_bump(card_changed=False) == "major"
    assert diff_records(new, new).required_bump(card_changed=True) == "patch"
    assert diff_records(new, new).required_bump(card_changed=False) is None


def test_unknown_license_is_refused_unless_allowed(project: Path):
    """`curate benchmark add` writes `license: unknown` when not told; publishing such a
    build (a dry run too) is refused, naming the card, until the license is set or the
    refusal is overridden (issue 32, item 8)."""
    params = project / "params.yaml"
    params.write_text(params.read_text().replace("license: MIT", "license: unknown", 1))
    write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    run_subsets_and_build(project)
    built = project / "dist/toy/toy-1.0.0"
    with pytest.raises(PublishRefused, match=r"toy-1.0.0/README.md: license: unknown"):
        publish(built, repo_id="org/name", version="1.0.0", dry_run=True)
    allowed = publish(
        built, repo_id="org/name", version="1.0.0", dry_run=True, allow_unknown_license=True
    )
    assert allowed.status == "dry-run"
