"""Hugging Face ``Features`` derived from a JSON Schema (schemas/ stay the one source)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import datasets

from curation.schemas import load_schema

PUBLISHED = "published_item"


def _feature(prop: Mapping[str, Any]) -> Any:
    if "enum" in prop:
        return datasets.Value("string")
    types = prop.get("type", "string")
    types = [types] if isinstance(types, str) else [t for t in types if t != "null"]
    if len(types) != 1:
        raise ValueError(f"cannot map JSON Schema type {prop.get('type')!r} to one feature")
    kind = types[0]
    if kind == "array":
        return datasets.List(_feature(prop.get("items", {"type": "string"})))
    return datasets.Value(
        {"string": "string", "integer": "int64", "number": "float64", "boolean": "bool"}[kind]
    )


def hf_features(name: str = PUBLISHED) -> datasets.Features:
    """Typed features of a record type, in schema order (enums and JSON text are strings)."""
    props = load_schema(name)["properties"]
    return datasets.Features({key: _feature(prop) for key, prop in props.items()})
