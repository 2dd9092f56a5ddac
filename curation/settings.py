"""One way to read a params.yaml section: a frozen pydantic model, errors by key path.

Every stage section is declared as a :class:`Section` subclass (fields, types, bounds,
defaults, one docstring per field) and read with :func:`parse_section`, so a misspelt
key, a string where a number belongs or a value out of range is reported once, as
``params.yaml: annotate.seed: ...``, before any work starts — never as a traceback
half-way through a stage.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from curation.errors import ConfigError

S = TypeVar("S", bound="Section")


class Section(BaseModel):
    """Base of every params section: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _message(error: Mapping[str, Any], cls: type[Section]) -> str:
    if error["type"] == "extra_forbidden":
        return f"unknown setting; valid: {', '.join(sorted(cls.model_fields))}"
    got = error.get("input")
    text = str(error["msg"])
    return f"{text} (got {got!r})" if not isinstance(got, Mapping | list) else text


def parse_section(cls: type[S], raw: Any, *, where: str) -> S:
    """``raw`` (a params mapping, or None for "all defaults") as a ``cls`` instance.

    ``where`` names the section for messages, e.g. ``"params.yaml: annotate"``.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a mapping, got {type(raw).__name__}")
    try:
        return cls.model_validate(dict(raw))
    except ValidationError as exc:
        first = exc.errors()[0]
        path = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"{where}.{path}: {_message(first, cls)}") from None
