"""Numbers as report text, one function per kind of figure.

Every report used to carry its own ``_f``/``_pct`` helpers, and they disagreed on what a
missing value prints as: the terminal summary writes "-", the MIRT report "–", the gap
report "—" and the dataset card "n/a". Those choices are kept (the outputs are DVC
outputs and must not change), but they are now stated once per report as a
:class:`Blanks` and passed to the shared formatters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

DASH = "-"
"""Missing value in plain-text tables (``curate summary``)."""
EN_DASH = "–"
"""Missing value in the MIRT report."""
EM_DASH = "—"
"""Empty cell in the gap report."""
NOT_AVAILABLE = "n/a"
"""Missing value on the dataset card."""
INFINITY = "∞"
"""An infinite bound in the gap report."""


@dataclass(frozen=True)
class Blanks:
    """What a value that is not a finite number prints as.

    ``missing`` is for None. ``nonfinite``, when set, is for NaN and ±inf; when None they
    print as Python prints them ("nan", "inf"). ``infinite``, when set, is for ±inf and
    takes precedence over ``nonfinite``.
    """

    missing: str = DASH
    nonfinite: str | None = None
    infinite: str | None = None

    def spell(self, value: float | None, number: Callable[[float], str]) -> str:
        """``value`` written by ``number``, or the blank that stands in for it."""
        if value is None:
            return self.missing
        if math.isinf(value) and self.infinite is not None:
            return self.infinite
        if not math.isfinite(value) and self.nonfinite is not None:
            return self.nonfinite
        return number(value)


PLAIN = Blanks()
"""None prints "-", NaN and ±inf as Python prints them."""


def fixed(
    value: float | None, digits: int = 3, *, blanks: Blanks = PLAIN, grouping: bool = False
) -> str:
    """``value`` with ``digits`` decimals, e.g. ``0.250``; ``grouping`` adds thousands
    separators (``12,345.6``)."""
    spec = f",.{digits}f" if grouping else f".{digits}f"
    return blanks.spell(value, lambda v: format(v, spec))


def percent(
    share: float | None, digits: int = 1, *, suffix: str = "%", blanks: Blanks = PLAIN
) -> str:
    """A share as a percentage: ``0.123`` -> ``12.3%`` (the same digits as Python's ``%``
    format). ``suffix=""`` gives bare percentage points; a blank gets no suffix."""
    return blanks.spell(share, lambda v: fixed(100 * v, digits) + suffix)


def signed(value: float | None, digits: int = 2, *, blanks: Blanks = PLAIN) -> str:
    """``value`` with an explicit sign, e.g. ``+0.42`` / ``-1.30``, for loadings and
    differences where the direction is the point."""
    return blanks.spell(value, lambda v: f"{v:+.{digits}f}")


def general(value: float | None, *, blanks: Blanks = PLAIN) -> str:
    """``value`` in Python's general format (``0.5``, ``1``, ``1e-07``): for observed
    rates and settings, which should print as short as they were written."""
    return blanks.spell(value, lambda v: f"{v:g}")


def count(n: int) -> str:
    """An integer count with thousands separators: ``12,345``."""
    return f"{n:,}"


def interval(
    low: float | None, high: float | None, digits: int = 3, *, blanks: Blanks = PLAIN
) -> str:
    """A closed interval, ``[0.412, 0.577]``."""
    return f"[{fixed(low, digits, blanks=blanks)}, {fixed(high, digits, blanks=blanks)}]"


def with_interval(
    value: float | None,
    low: float | None,
    high: float | None,
    digits: int = 3,
    *,
    blanks: Blanks = PLAIN,
) -> str:
    """A point value and its interval, ``0.250 [0.231, 0.270]``."""
    point = fixed(value, digits, blanks=blanks)
    return f"{point} {interval(low, high, digits, blanks=blanks)}"
