"""The one exit path (curation.failure) and all-or-nothing stage outputs (curation.io.atomic)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.errors import InputError
from curation.failure import guarded
from curation.io.atomic import all_or_nothing, write_text, writes_now


def _raise(exc: BaseException):
    def step() -> int:
        raise exc

    return step


def test_input_error_is_one_line_exit_2(capsys: pytest.CaptureFixture) -> None:
    code = guarded(_raise(InputError("bad\nvalue", file="f.csv", record="row 2")), doing=str)
    assert code == 2
    assert capsys.readouterr().err == "error: f.csv: row 2: bad value\n"


def test_a_bug_is_exit_3_without_traceback(capsys: pytest.CaptureFixture, monkeypatch) -> None:
    monkeypatch.delenv("CURATE_DEBUG", raising=False)
    code = guarded(_raise(KeyError("x")), doing=lambda: "annotate@toy")
    err = capsys.readouterr().err
    assert code == 3
    assert err.startswith("error: annotate@toy: internal error KeyError: 'x' (a bug")
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_the_traceback(capsys: pytest.CaptureFixture, monkeypatch, how: str) -> None:
    monkeypatch.delenv("CURATE_DEBUG", raising=False)
    if how == "env":
        monkeypatch.setenv("CURATE_DEBUG", "1")
    code = guarded(_raise(ZeroDivisionError("z")), doing=str, debug=how == "flag")
    err = capsys.readouterr().err
    assert code == 3 and "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("error: ")


def test_os_error_is_an_input_error_naming_the_file(capsys: pytest.CaptureFixture) -> None:
    exc = PermissionError(13, "Permission denied", "data/x.parquet")
    assert guarded(_raise(exc), doing=lambda: "check@toy") == 2
    assert capsys.readouterr().err == "error: check@toy: data/x.parquet Permission denied\n"


def test_the_hint_is_on_the_same_line(capsys: pytest.CaptureFixture) -> None:
    guarded(_raise(InputError("no")), doing=str, hint=lambda: "restore with: x")
    assert capsys.readouterr().err == "error: no; restore with: x\n"


def test_success_passes_the_code_through() -> None:
    assert guarded(lambda: 0, doing=str) == 0
    assert guarded(lambda: None, doing=str) == 0


def test_stage_main_turns_a_bug_into_exit_3(toy_project: Path, capsys, monkeypatch) -> None:
    from curation.stage_main import stage_main

    monkeypatch.delenv("CURATE_DEBUG", raising=False)

    def run(params, benchmark, *, params_file):
        write_text("data/half.txt", "written before the crash")
        raise RuntimeError("boom")

    assert stage_main("demo", run, []) == 3
    err = capsys.readouterr().err
    assert err.startswith("error: demo@toy: internal error RuntimeError: boom")
    assert not (toy_project / "data/half.txt").exists()  # nothing of the failed run is left


def test_all_or_nothing_renames_only_on_success(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    write_text(a, "old a")
    with pytest.raises(RuntimeError), all_or_nothing():
        write_text(a, "new a")
        write_text(b, "new b")
        assert a.read_text() == "old a"  # held back until the block ends
        raise RuntimeError
    assert a.read_text() == "old a" and not b.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]  # no temporary files left
    with all_or_nothing():
        write_text(a, "first")
        write_text(a, "second")
        write_text(b, "new b")
    assert a.read_text() == "second" and b.read_text() == "new b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_writes_now_inside_a_block(tmp_path: Path) -> None:
    with all_or_nothing():
        with writes_now():
            write_text(tmp_path / "staged.txt", "x")
        assert (tmp_path / "staged.txt").read_text() == "x"


def test_metrics_json_never_holds_nan(tmp_path: Path) -> None:
    from curation.io.atomic import write_json

    with pytest.raises(ValueError, match=r"non-finite numbers at loo\.spearman\[1\]"):
        write_json(tmp_path / "m.json", {"loo": {"spearman": [1.0, float("nan")]}})
    assert not (tmp_path / "m.json").exists()
