"""Scratch files live outside every output; folder outputs are written whole.

Under `dvc repro` every output is persisted, so whatever a stage leaves in an output
folder would be hashed into dvc.lock: a scratch file there (a kill -9 mid-write) or a
file of an earlier run that this run no longer writes. These tests pin both down."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from curation.io.atomic import (
    SCRATCH_DIR,
    all_or_nothing,
    atomic_dir,
    atomic_path,
    clean_scratch,
    drop_own_scratch,
    replaces_dir,
    write_text,
)


def test_the_scratch_file_is_outside_the_target_folder(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "data" / "items"
    with atomic_path(out / "toy.parquet") as tmp:
        assert tmp.parent == tmp_path / SCRATCH_DIR / str(os.getpid())
        assert not out.exists() or list(out.iterdir()) == []
        tmp.write_text("x")
    assert (out / "toy.parquet").read_text() == "x"
    drop_own_scratch()
    assert not (tmp_path / SCRATCH_DIR).exists()


def test_outside_the_working_directory_the_scratch_file_sits_beside(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    with atomic_path(tmp_path / "elsewhere" / "f.txt") as tmp:
        assert tmp.parent == tmp_path / "elsewhere"


def test_a_killed_process_leaves_scratch_only_and_the_next_clears_it(tmp_path) -> None:
    code = (
        "import os, signal\n"
        "from curation.io.atomic import all_or_nothing, write_text\n"
        "with all_or_nothing():\n"
        "    write_text('out/a.txt', 'half')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env)
    assert proc.returncode == -9
    assert not (tmp_path / "out" / "a.txt").exists()
    assert list((tmp_path / "out").iterdir()) == []  # nothing in the output folder
    left = list((tmp_path / SCRATCH_DIR).rglob("*.tmp"))
    assert len(left) == 1
    assert clean_scratch(tmp_path) and not (tmp_path / SCRATCH_DIR).exists()


def test_replaces_dir_removes_what_this_run_did_not_write(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "subsets"
    write_text(folder / "old-10.parquet", "stale")
    write_text(folder / "keep-5.parquet", "old")
    (folder / "nested").mkdir()
    write_text(folder / "nested" / "x", "stale")
    with pytest.raises(RuntimeError), all_or_nothing():
        replaces_dir(folder)
        write_text(folder / "keep-5.parquet", "new")
        raise RuntimeError  # a failure removes nothing
    assert sorted(p.name for p in folder.iterdir()) == [
        "keep-5.parquet",
        "nested",
        "old-10.parquet",
    ]
    with all_or_nothing():
        replaces_dir(folder)
        write_text(folder / "keep-5.parquet", "new")
    assert [p.name for p in folder.iterdir()] == ["keep-5.parquet"]
    assert (folder / "keep-5.parquet").read_text() == "new"


def test_atomic_dir_swaps_a_whole_folder_at_commit(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    final = tmp_path / "dist" / "toy" / "toy-1.0.0"
    write_text(final / "README.md", "old")
    with all_or_nothing():
        with atomic_dir(final) as staged:
            (staged / "README.md").write_text("new")
            (staged / "data").mkdir()
        assert (final / "README.md").read_text() == "old"  # held until the block ends
    assert (final / "README.md").read_text() == "new" and (final / "data").is_dir()
    with pytest.raises(RuntimeError), all_or_nothing(), atomic_dir(final) as staged:
        (staged / "README.md").write_text("never")
        raise RuntimeError
    assert (final / "README.md").read_text() == "new"
    assert not any((tmp_path / SCRATCH_DIR).rglob("*.tmp"))
