"""Hugging Face ``Features`` derived from a JSON Schema (schemas/ stay the one source)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets

from curation.schemas import array_items, json_kind, load_schema

PUBLISHED = "published_item"


def _feature(prop: Mapping[str, Any]) -> Any:
    kind = json_kind(prop)
    if kind == "array":
        return datasets.List(_feature(array_items(prop)))
    return datasets.Value(
        {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}[kind]
    )


def hf_features(name: str = PUBLISHED) -> datasets.Features:
    """Typed features of a record type, in schema order (enums and JSON text are strings)."""
    props = load_schema(name)["properties"]
    return datasets.Features({key: _feature(prop) for key, prop in props.items()})
