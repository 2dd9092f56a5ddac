"""What may be published: valid records, human-accepted additions, nothing simulated.

The build writes whatever the pipeline produced (and says so in the card); these checks
are the gate in front of the Hub (SPEC §8, invariants 4 and 5).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import polars as pl

from curation.candidates import SIMULATED
from curation.errors import CurationError
from curation.publish._layout import record_schema
from curation.schemas import validate_frame

_SOURCE_KEYS = {"source", "difficulty_source", "response_source", "backend", "data_source"}


class PublishRefused(CurationError):
    """The dataset holds a record that must not be published; nothing was uploaded."""


@dataclass(frozen=True)
class Problem:
    """One record that blocks publishing."""

    config: str
    item: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"config {self.config!r}, item {self.item!r}, field '{self.field}': {self.reason}"


def _simulated_path(obj: Any, path: str = "") -> str | None:
    """The JSON path of a ``"simulated"`` source marker inside ``obj``, if any."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            here = f"{path}.{key}" if path else str(key)
            if key in _SOURCE_KEYS and value == SIMULATED:
                return here
            if key == SIMULATED and value is True:
                return here
            found = _simulated_path(value, here)
            if found:
                return found
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            found = _simulated_path(value, f"{path}[{i}]")
            if found:
                return found
    return None


def record_problems(df: pl.DataFrame, *, config: str) -> list[Problem]:
    """Records that are simulated (anywhere) or added without a human acceptance."""
    problems: list[Problem] = []
    cols = ["item", "source", "origin", "difficulty_source", "review_status", "lineage", "metadata"]
    for item, source, origin, dsource, status, lineage, metadata in df.select(cols).iter_rows():
        if dsource == SIMULATED:
            problems.append(
                Problem(config, item, "difficulty_source", "z was measured on simulated responses")
            )
        elif source == SIMULATED:
            problems.append(Problem(config, item, "source", "the item text is simulated"))
        else:
            for field, text in (("lineage", lineage), ("metadata", metadata)):
                try:
                    where = _simulated_path(json.loads(text)) if text else None
                except ValueError:
                    where = None
                if where:
                    problems.append(
                        Problem(config, item, field, f"marked simulated at {field}.{where}")
                    )
                    break
        if origin != "original" and status != "accepted":
            problems.append(
                Problem(
                    config,
                    item,
                    "review_status",
                    f"{origin} item is {status!r}, not human-accepted",
                )
            )
    return problems


def check_publishable(frames: dict[str, pl.DataFrame], *, files: dict[str, str]) -> None:
    """Raise :class:`PublishRefused` naming the first offending record(s); validate every
    record against the published schema first (an invalid one raises ``InputError``)."""
    for config, df in frames.items():
        validate_frame(df, record_schema(config), file=files.get(config, config))
        dupes = df.filter(pl.col("item").is_duplicated())
        if dupes.height:
            raise PublishRefused(
                f"refusing to publish: config {config!r} repeats item {dupes.item(0, 'item')!r}"
            )
    problems = [p for config, df in frames.items() for p in record_problems(df, config=config)]
    if problems:
        shown = "; ".join(str(p) for p in problems[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise PublishRefused(
            f"refusing to publish {len(problems)} record(s): {shown}{more}. Simulated records "
            "never reach a published dataset, and added items need a human acceptance "
            "(curate review); rebuild after fixing the inputs."
        )
