"""How many models a figure or table shows one by one, and which ones when it cannot.

A bundled panel has a few dozen models: every figure labels each one and every table
has a row per model. A leaderboard has thousands: a label per model makes a figure
hundreds of inches tall (or, with a label-placement solver, runs out of memory) and a
table a page nobody reads. Above :data:`LISTED_MODELS` models, figures draw the panel as
a curve or a density and name only the :data:`SHOWN_EXTREMES` strongest and weakest;
tables list those and point to the full record (a JSON metric, a searchable HTML page).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

LISTED_MODELS = 120
"""Above this many models, figures and tables summarise the panel."""
SHOWN_EXTREMES = 10
"""Models named at each end of the panel when it is summarised."""


def many_models(n: int) -> bool:
    """Whether a panel of ``n`` models is summarised rather than listed."""
    return n > LISTED_MODELS


def extremes(values: Sequence[float] | np.ndarray, k: int = SHOWN_EXTREMES) -> list[int]:
    """Indices of the ``k`` highest values (highest first), then the ``k`` lowest
    (lowest last), without repeats: the rows a summarised table keeps, in its order."""
    order = np.argsort(-np.asarray(values, dtype=np.float64), kind="stable")
    if order.size <= 2 * k:
        return [int(i) for i in order]
    return [int(i) for i in (*order[:k], *order[-k:])]


__all__ = ["LISTED_MODELS", "SHOWN_EXTREMES", "extremes", "many_models"]
