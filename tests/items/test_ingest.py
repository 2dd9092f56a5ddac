"""Ingest reads every supported raw format into the same item table."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import polars as pl
import pytest

from curation.items import ingest_benchmark
from curation.params import load_params
from curation.params_model import validate_params
from tests.conftest import TOY_ITEMS
from tests.stage_cli import run_stage


def _spec(root: Path, path: str, **items_over):
    params = load_params(root / "params.yaml")
    params["benchmarks"]["toy"]["items"].update(path=path, **items_over)
    return validate_params(params).benchmark("toy")


def _write_formats(root: Path) -> dict[str, str]:
    df = pl.DataFrame(TOY_ITEMS)
    df.write_csv(root / "raw" / "items.csv")
    df.write_parquet(root / "raw" / "items.parquet")
    (root / "raw" / "items.json").write_text(json.dumps(TOY_ITEMS))
    datasets.DatasetDict({"test": datasets.Dataset.from_list(TOY_ITEMS)}).save_to_disk(
        str(root / "raw" / "items_hf")
    )
    return {
        "jsonl": "raw/items.jsonl",
        "csv": "raw/items.csv",
        "parquet": "raw/items.parquet",
        "json": "raw/items.json",
        "hf-disk": "raw/items_hf",
    }


def test_every_format_gives_the_same_items(toy_project: Path):
    paths = _write_formats(toy_project)
    tables = {fmt: ingest_benchmark("toy", _spec(toy_project, p)) for fmt, p in paths.items()}
    ref = tables["jsonl"].drop("metadata")
    assert ref.height == len(TOY_ITEMS)
    assert ref["item"].to_list() == [r["id"] for r in TOY_ITEMS]
    assert ref["answer"].to_list() == [r["target"] for r in TOY_ITEMS]
    for fmt, table in tables.items():
        assert table.drop("metadata").equals(ref), fmt
    meta = json.loads(tables["jsonl"]["metadata"][1])
    assert meta == {"level": 1}, "unmapped source fields are kept as metadata"


def test_answer_pattern_extracts_the_final_answer(toy_project: Path):
    rows = [{"id": "a", "prompt": "p", "target": "2 + 2 = 4\n#### 4"}]
    (toy_project / "raw" / "x.jsonl").write_text(json.dumps(rows[0]) + "\n")
    table = ingest_benchmark(
        "toy", _spec(toy_project, "raw/x.jsonl", answer_pattern=r"####\s*(.*)$")
    )
    assert table["answer"].to_list() == ["4"]


def test_numeric_ids_become_text_and_metadata_fields_can_be_chosen(toy_project: Path):
    (toy_project / "raw" / "n.jsonl").write_text(
        json.dumps({"id": 7, "prompt": "p", "target": 3, "level": 2, "junk": "x"}) + "\n"
    )
    table = ingest_benchmark("toy", _spec(toy_project, "raw/n.jsonl", metadata_fields=["level"]))
    assert table["item"].to_list() == ["7"] and table["answer"].to_list() == ["3"]
    assert json.loads(table["metadata"][0]) == {"level": 2}


def test_choices_are_read_as_a_list(toy_project: Path):
    row = {"id": "c", "prompt": "Pick", "target": "B", "options": ["x", "y", "z"]}
    (toy_project / "raw" / "c.jsonl").write_text(json.dumps(row) + "\n")
    spec = _spec(
        toy_project,
        "raw/c.jsonl",
        answer_type="choice",
        fields={"item": "id", "question": "prompt", "answer": "target", "choices": "options"},
    )
    table = ingest_benchmark("toy", spec)
    assert table["choices"].to_list() == [["x", "y", "z"]]
    assert table["answer_type"].to_list() == ["choice"]


def test_cli_writes_the_table(toy_project: Path, capsys):
    assert run_stage(["ingest"]) == 0
    out = pl.read_parquet(toy_project / "data" / "items" / "toy.parquet")
    assert out.height == 6 and set(out["origin"]) == {"original"}
    assert "toy: 6 items" in capsys.readouterr().out


def test_hf_dataset_with_several_splits_needs_a_split(toy_project: Path):
    datasets.DatasetDict(
        {"a": datasets.Dataset.from_list(TOY_ITEMS), "b": datasets.Dataset.from_list(TOY_ITEMS)}
    ).save_to_disk(str(toy_project / "raw" / "two"))
    from curation.errors import InputError

    with pytest.raises(InputError, match="set `split`"):
        ingest_benchmark("toy", _spec(toy_project, "raw/two"))
    assert ingest_benchmark("toy", _spec(toy_project, "raw/two", split="b")).height == 6
