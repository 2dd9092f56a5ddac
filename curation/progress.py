"""Progress bars for long numeric loops (bootstrap refits, validation folds, MIRT fits).

A leaderboard-sized stage can work for a minute without printing: a bar (tqdm, on
stderr) says what it is doing and how long is left. It appears only after
:data:`DELAY` seconds (short runs, the bundled benchmarks, stay silent), only on a
terminal (DVC passes the user's terminal through to the stage; logs and tests get
nothing) and never with ``TQDM_DISABLE=1``. A bar writes nothing a stage outputs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tqdm import tqdm

T = TypeVar("T")

DELAY = 5.0
"""Seconds of work before a bar is drawn."""


def disabled() -> bool:
    """``TQDM_DISABLE`` says no bars (True if set to 1 or true)."""
    return os.environ.get("TQDM_DISABLE", "").lower() in ("1", "true")


def progress(
    iterable: Iterable[T] | None = None, *, total: int | None = None, desc: str, unit: str
) -> tqdm[Any]:
    """A tqdm bar over ``iterable`` (or updated by hand up to ``total``), drawn after
    :data:`DELAY` seconds on a terminal only (module doc)."""
    from tqdm.auto import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        delay=DELAY,
        mininterval=0.5,
        dynamic_ncols=True,
        disable=True if disabled() else None,  # None: off unless stderr is a terminal
    )


__all__ = ["DELAY", "disabled", "progress"]
