"""`curate publish` with the real huggingface_hub client against a fake Hub on 127.0.0.1.

Each publish runs in a subprocess (``python -m curation.cli publish``) so that huggingface_hub
reads HF_ENDPOINT / HF_HUB_OFFLINE / HF_HUB_DISABLE_XET at import, as it does for a user.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
from fake_hub import FakeHub
from publish_project import (
    accepted_rows,
    hub_env,
    run_publish,
    run_subsets_and_build,
    write_accepted,
)

from curation.publish import upload_files
from curation.publish._version import record_release

TOKEN = "hf_test_secret_0123"
REPO = "bench-org/toy-benchfill"


def _publish(hub: FakeHub, root: Path, version: str, *extra: str, token: str | None = TOKEN):
    proc = run_publish(
        hub_env(hub.url, root, token=token),
        root,
        "toy",
        "--repo-id",
        REPO,
        "--version",
        version,
        *extra,
    )
    assert TOKEN not in proc.stdout + proc.stderr  # the token is never printed
    return proc


def _posts(hub: FakeHub, suffix: str) -> list[str]:
    return [p for m, p in hub.requests if m == "POST" and suffix in p]


def test_publish_creates_repo_uploads_one_commit_and_tags(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    proc = _publish(hub, project, "1.0.0")
    assert proc.returncode == 0, proc.stderr
    assert "created repo, one commit" in proc.stdout and "tagged 1.0.0" in proc.stdout
    assert _posts(hub, "/api/repos/create") == ["/api/repos/create"]
    assert len(_posts(hub, "/commit/")) == 1
    commits = hub.commits(REPO)
    assert len(commits) == 1
    out = project / "dist/toy/toy-1.0.0"
    expected = upload_files(out)
    assert sorted(commits[0].files) == sorted([".gitattributes", *expected])
    assert not any(p.startswith("disk/") or p == "manifest.json" for p in commits[0].files)
    for path in expected:  # content arrived intact, parquet and PNG through LFS
        blob, data = commits[0].files[path], (out / path).read_bytes()
        if path.endswith((".parquet", ".png")):
            assert blob.sha256 == hashlib.sha256(data).hexdigest()
            assert hub.lfs[blob.sha256] == data
        else:
            assert blob.content == data
    repo = hub.repos[f"datasets/{REPO}"]
    assert repo.tags == {"1.0.0": commits[0].oid}
    assert repo.branches["main"] == commits[0].oid
    assert hub.validated_yaml and "config_name: calibrated-uniform-12" in hub.validated_yaml[0]
    assert hub.tokens == {TOKEN}


def test_same_version_again_is_already_published(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    assert _publish(hub, project, "1.0.0").returncode == 0
    n_requests = len(hub.requests)
    proc = _publish(hub, project, "1.0.0")
    assert proc.returncode == 0, proc.stderr
    assert "already published with the same content" in proc.stdout
    later = hub.requests[n_requests:]
    assert not [p for m, p in later if m in ("POST", "PUT")]  # read-only second run
    assert len(hub.commits(REPO)) == 1


def test_next_version_is_one_more_commit_and_tag(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    assert _publish(hub, project, "1.0.0").returncode == 0
    write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    run_subsets_and_build(project)
    proc = _publish(hub, project, "1.1.0")
    assert proc.returncode == 0, proc.stderr
    assert "created repo" not in proc.stdout
    first, second = hub.commits(REPO)
    assert second.parent == first.oid
    changed = {p for p in second.files if second.files[p] != first.files.get(p)}
    assert "data/filled/test-00000-of-00001.parquet" in changed
    assert "data/original/test-00000-of-00001.parquet" not in changed
    repo = hub.repos[f"datasets/{REPO}"]
    assert repo.tags == {"1.0.0": first.oid, "1.1.0": second.oid}
    # dist/toy/ holds the current build alone (as a fresh clone's does): publishing the
    # old version asks for it to be checked out again, and changes nothing on the Hub
    assert sorted(p.name for p in (project / "dist/toy").iterdir()) == ["toy-1.1.0"]
    again = _publish(hub, project, "1.0.0")
    assert again.returncode == 2
    assert "dvc checkout build@toy" in again.stderr
    assert len(hub.commits(REPO)) == 2


def test_different_content_under_an_existing_tag_is_refused(project: Path, hub: FakeHub):
    run_subsets_and_build(project, version="1.0.0")
    assert _publish(hub, project, "1.0.0").returncode == 0
    write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    run_subsets_and_build(project, version="1.0.0")  # rebuilt in place with new content
    proc = _publish(hub, project, "1.0.0")
    assert proc.returncode == 2
    assert "tag 1.0.0 of bench-org/toy-benchfill already holds different content" in proc.stderr
    assert "data/filled/test-00000-of-00001.parquet" in proc.stderr
    assert len(hub.commits(REPO)) == 1


def test_files_dropped_from_the_build_are_deleted_in_the_same_commit(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    assert _publish(hub, project, "1.0.0").returncode == 0
    params_file = project / "params.yaml"
    params_file.write_text(params_file.read_text().replace("sizes: [12]", "sizes: [10]"))
    run_subsets_and_build(project)
    assert _publish(hub, project, "2.0.0").returncode == 0
    last = hub.commits(REPO)[-1]
    assert "data/calibrated-uniform-10/test-00000-of-00001.parquet" in last.files
    assert not any("uniform-12" in p for p in last.files)
    assert len(hub.commits(REPO)) == 2


def test_dry_run_lists_files_without_network_or_token(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    proc = _publish(hub, project, "1.0.0", "--dry-run", token=None)
    assert proc.returncode == 0, proc.stderr
    assert "dry run: would upload 11 file(s)" in proc.stdout
    assert "data/original/test-00000-of-00001.parquet" in proc.stdout
    assert hub.requests == []


def test_refusals_happen_before_any_request(project: Path, hub: FakeHub):
    write_accepted(
        project,
        accepted_rows("toy", [("toy-sim", 0.7, "accepted")], difficulty_source="simulated"),
    )
    run_subsets_and_build(project)
    proc = _publish(hub, project, "1.0.0")
    assert proc.returncode == 2
    assert "refusing to publish 1 record(s)" in proc.stderr
    assert "item 'toy-sim'" in proc.stderr and "simulated" in proc.stderr
    assert hub.requests == []


def test_missing_token_and_unknown_version(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    proc = _publish(hub, project, "1.0.0", token=None)
    assert proc.returncode == 2
    assert "set the environment variable HF_TOKEN" in proc.stderr
    proc = _publish(hub, project, "9.9.9")
    assert proc.returncode == 2 and "no build of 'toy' version 9.9.9" in proc.stderr
    assert hub.requests == []


def test_main_already_holding_the_build_is_tagged_without_a_commit(project: Path, hub: FakeHub):
    """A publish interrupted after its commit but before its tag completes on rerun."""
    run_subsets_and_build(project)
    assert _publish(hub, project, "1.0.0").returncode == 0
    repo = hub.repos[f"datasets/{REPO}"]
    repo.tags.clear()
    proc = _publish(hub, project, "1.0.0")
    assert proc.returncode == 0, proc.stderr
    assert len(hub.commits(REPO)) == 1
    assert repo.tags == {"1.0.0": repo.branches["main"]}


def test_published_shards_match_the_local_build(project: Path, hub: FakeHub):
    run_subsets_and_build(project)
    assert _publish(hub, project, "1.0.0").returncode == 0
    blob = hub.commits(REPO)[0].files["data/original/test-00000-of-00001.parquet"]
    remote = project / "remote.parquet"
    remote.write_bytes(hub.lfs[blob.sha256])
    local = pl.read_parquet(
        project / "dist/toy/toy-1.0.0/data/original/test-00000-of-00001.parquet"
    )
    assert pl.read_parquet(remote).equals(local)


def test_an_older_version_after_a_newer_one_is_refused(project: Path, hub: FakeHub):
    run_subsets_and_build(project)  # 1.0.0, released but not published
    record_release(project / "dist/toy/toy-1.0.0", project / "releases", date="2025-01-01")
    accepted = write_accepted(project, accepted_rows("toy", [("toy-new-1", 0.7, "accepted")]))
    run_subsets_and_build(project)  # 1.1.0
    assert _publish(hub, project, "1.1.0").returncode == 0
    accepted.unlink()  # back to the 1.0.0 content
    run_subsets_and_build(project, version="1.0.0")
    proc = _publish(hub, project, "1.0.0")
    assert proc.returncode == 2
    assert "already has the newer version 1.1.0" in proc.stderr
    assert len(hub.commits(REPO)) == 1
