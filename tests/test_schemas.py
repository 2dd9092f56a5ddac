"""Schemas are valid JSON Schema and the one source of the tables' columns."""

from __future__ import annotations

import json

import jsonschema
import polars as pl
import pytest

from curation.errors import InputError
from curation.schemas import (
    conform,
    empty_frame,
    field_names,
    polars_schema,
    schema_dir,
    validate_frame,
    validate_record,
)

SCHEMAS = sorted(p.name.removesuffix(".schema.json") for p in schema_dir().glob("*.schema.json"))


def test_core_record_types_exist():
    assert {"item", "response", "panel_model", "check_metrics"} <= set(SCHEMAS)


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_is_valid_draft_2020_12(name):
    schema = json.loads((schema_dir() / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["title"] == name
    for prop in schema.get("properties", {}).values():
        assert prop.get("description"), f"{name}: every field says what it is"


def test_polars_columns_come_from_the_schema():
    assert list(polars_schema("response")) == field_names("response")
    assert polars_schema("response")["n_trials"] == pl.Int64
    assert polars_schema("item")["choices"] == pl.List(pl.String)
    assert empty_frame("item").columns == field_names("item")


def _response(**over):
    row = {k: None for k in field_names("response")}
    row.update(benchmark="b", model="m", item="i", n_trials=2, n_correct=1, source="imported")
    row.update(over)
    return row


def test_validate_record_names_the_field():
    assert validate_record(_response(), "response") is None
    assert validate_record(_response(source="guessed"), "response")[0] == "source"
    assert validate_record(_response(n_trials=0), "response")[0] == "n_trials"
    row = _response()
    del row["model"]
    assert validate_record(row, "response")[0] == "model"


def test_validate_frame_reports_first_bad_row():
    df = conform(pl.DataFrame([_response(), _response(item="j", n_trials=-1)]), "response")
    with pytest.raises(InputError) as err:
        validate_frame(df, "response", file="out.parquet")
    assert str(err.value).startswith("out.parquet: row 2: field 'n_trials'")


def test_validate_frame_rejects_unknown_columns():
    df = conform(pl.DataFrame([_response()]), "response").with_columns(pl.lit(1).alias("extra"))
    with pytest.raises(InputError, match="field 'extra'"):
        validate_frame(df, "response", file="x")


def test_metadata_must_be_json_text():
    item = {k: None for k in field_names("item")}
    item.update(
        benchmark="b",
        item="1",
        domain="math",
        question="q",
        answer_type="numeric",
        source="s",
        license="MIT",
        origin="original",
        metadata="{not json",
    )
    assert validate_record(item, "item")[0] == "metadata"


def test_conform_is_strict_about_types():
    with pytest.raises(pl.exceptions.InvalidOperationError):
        conform(pl.DataFrame([_response(n_trials="two")]), "response")
