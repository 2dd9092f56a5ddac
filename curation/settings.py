"""Parsing a params.yaml section into a frozen dataclass: the checks every parser shares.

Each settings parser (``fill_settings``, ``calibration_settings``, ``llm_settings``, …)
reads its section into a frozen dataclass before any work starts, rejects keys it does
not know, and says which key is wrong and why. These helpers are the shared checks, so
the messages read the same everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from typing import Any

from curation.errors import ConfigError


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
