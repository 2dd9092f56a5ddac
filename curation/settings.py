"""Reading a params.yaml section, with errors by key path (file: section.key: why).

Two layers, one message style:

* :class:`Section` + :func:`parse_section` — the way to declare a section: a frozen
  pydantic model (fields, types, bounds, defaults, a docstring per field). A misspelt key,
  a string where a number belongs or a value out of range is reported once, as
  ``params.yaml: annotate.seed: ...``, before any work starts. The stage sections
  (annotate, check, mirt) use it.
* :func:`mapping`, :func:`reject_unknown`, :func:`number`, :func:`integer`,
  :func:`boolean` — the checks the older frozen-dataclass parsers (``fill_settings``,
  ``calibration_settings``) share, so their messages read the same.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
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


def mapping(raw: Any, where: str) -> dict[str, Any]:
    """``raw`` as a section (None = empty); anything else than a mapping is an error."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: expected a mapping")
    return raw


def reject_unknown(
    section: Mapping[str, Any], known: Collection[str], where: str, *, list_valid: bool = False
) -> None:
    """An error naming the first key of ``section`` that is not in ``known``."""
    unknown = sorted(set(section) - set(known))
    if unknown:
        valid = f"; valid: {', '.join(sorted(known))}" if list_valid else ""
        raise ConfigError(f"{where}.{unknown[0]}: unknown setting{valid}")


def number(section: Mapping[str, Any], key: str, where: str, default: float) -> float:
    """A finite number (None or absent = ``default``)."""
    value = section.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ConfigError(f"{where}.{key}: expected a number, got {value!r}")
    return float(value)


def integer(section: Mapping[str, Any], key: str, where: str, default: int, *, low: int = 1) -> int:
    """An integer of at least ``low`` (None or absent = ``default``)."""
    value = section.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{where}.{key}: expected an integer, got {value!r}")
    if value < low:
        raise ConfigError(f"{where}.{key}: must be at least {low}, got {value}")
    return value


def boolean(section: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
    """true or false (None or absent = ``default``)."""
    value = section.get(key, default)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(f"{where}.{key}: expected true or false, got {value!r}")
    return value
