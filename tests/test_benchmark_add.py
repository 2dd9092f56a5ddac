"""`curate benchmark add`: the entry it writes is checked by ParamsFile, and a name DVC
cannot take is refused before anything is written (issue 31: ``my.bench``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curation.commands.benchmark import add_benchmark
from curation.errors import ConfigError, InputError
from curation.params_model import read_params
from tests.conftest import TOY_ITEMS


def _add(
    name: str,
    root: Path,
    items_name: str = "new_items.jsonl",
    wide_name: str = "new_wide.csv",
    *,
    license: str = "MIT",
    cell: str = "0",
) -> str:
    items = root / items_name
    items.parent.mkdir(parents=True, exist_ok=True)
    items.write_text("".join(json.dumps(r) + "\n" for r in TOY_ITEMS))
    wide = root / wide_name
    wide.parent.mkdir(parents=True, exist_ok=True)
    ids = [r["id"] for r in TOY_ITEMS]
    wide.write_text(
        "model," + ",".join(ids) + "\n" + "a,1,0,1,0,1,0\n" + f"b,1,1,0,0,0,{cell}\n",
        encoding="utf-8",
    )
    return add_benchmark(
        name,
        items=items,
        responses=wide,
        fmt="wide",
        field_map={"item": "id", "question": "prompt", "answer": "target"},
        domain="math",
        license=license,
        source=None,
        answer_type="numeric",
        model_column="model",
        n_trials=1,
        item_field=None,
        reference=False,
    )


@pytest.mark.parametrize("name", ["my.bench", "-x", "a/b"])
def test_a_name_dvc_cannot_take_writes_nothing(toy_project: Path, name: str) -> None:
    before = (toy_project / "params.yaml").read_text()
    with pytest.raises(ConfigError, match=r"not a benchmark name: use letters, digits, '-'"):
        _add(name, toy_project)
    assert (toy_project / "params.yaml").read_text() == before
    assert not (toy_project / "data" / "raw" / name).exists()


def test_the_written_entry_is_what_the_stages_read(toy_project: Path) -> None:
    line = _add("toy-2", toy_project)
    assert "toy-2: 6 items, 12 responses (2 models)" in line
    entry = read_params(toy_project / "params.yaml").benchmark("toy-2")
    assert entry.items.path == Path("data/raw/toy-2/items.jsonl")
    assert entry.responses is not None
    assert entry.responses.path == Path("data/raw/toy-2/responses.csv")
    assert entry.responses is not None and entry.responses.n_trials == 1
    assert entry.in_domain_reference is False
    with pytest.raises(ConfigError, match="already exists"):
        _add("toy-2", toy_project)


def test_a_bad_cell_names_the_users_file(toy_project: Path) -> None:
    """Not the scratch copy the entry is checked in (/tmp/tmpw_imxuxi/matrix.csv)."""
    with pytest.raises(InputError) as err:
        _add("toy-2", toy_project, cell="7")
    assert str(err.value).startswith(f"{toy_project / 'new_wide.csv'}: row 2: field 'q5'")
    assert not (toy_project / "data" / "raw" / "toy-2").exists()


def test_an_unknown_license_is_warned_about(toy_project: Path, capsys) -> None:
    _add("toy-2", toy_project, license="unknown")
    err = capsys.readouterr().err
    assert "benchmarks.toy-2.license is unknown" in err and "curate publish` refuses" in err
    _add("toy-3", toy_project)
    assert "license" not in capsys.readouterr().err


def test_items_and_responses_of_one_file_name_are_copied_apart(toy_project: Path) -> None:
    """items a/data.jsonl and responses b/data.jsonl: two files, neither overwrites the other."""
    from tests.stage_cli import run_stage

    items = toy_project / "a" / "data.jsonl"
    items.parent.mkdir()
    items.write_text("".join(json.dumps(r) + "\n" for r in TOY_ITEMS))
    responses = toy_project / "b" / "data.jsonl"
    responses.parent.mkdir()
    responses.write_text(
        "".join(
            json.dumps({"model": m, "item": r["id"], "n_trials": 1, "n_correct": int(m == "b")})
            + "\n"
            for m in ("a", "b")
            for r in TOY_ITEMS
        )
    )
    add_benchmark(
        "toy-3",
        items=items,
        responses=responses,
        fmt="long",
        field_map={"item": "id", "question": "prompt", "answer": "target"},
        domain="math",
        license="MIT",
        source=None,
        answer_type="numeric",
        model_column="model",
        n_trials=1,
        item_field=None,
        reference=False,
    )
    raw = toy_project / "data/raw/toy-3"
    assert (raw / "items.jsonl").read_bytes() == items.read_bytes()
    assert (raw / "responses.jsonl").read_bytes() == responses.read_bytes()
    assert run_stage(["ingest", "--benchmark", "toy-3"]) == 0
    assert run_stage(["responses", "--benchmark", "toy-3"]) == 0


def test_an_error_in_an_added_file_names_that_file(toy_project: Path) -> None:
    bad = toy_project / "c" / "data.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"id": "q0", "prompt": "x", "target": "0"}\n{"id": "q1"\n')
    wide = toy_project / "d" / "data.csv"
    wide.parent.mkdir()
    wide.write_text("model,q0\na,1\n")
    with pytest.raises(Exception) as caught:
        add_benchmark(
            "toy-4",
            items=bad,
            responses=wide,
            fmt="wide",
            field_map={"item": "id", "question": "prompt", "answer": "target"},
            domain="math",
            license="MIT",
            source=None,
            answer_type="numeric",
            model_column="model",
            n_trials=1,
            item_field=None,
            reference=False,
        )
    assert str(bad) in str(caught.value) and "tmp" not in str(caught.value).replace(str(bad), "")
    assert not (toy_project / "data/raw/toy-4").exists()
