"""Symbolic equivalence of two math answers through the maintained ``math-verify`` library.

Hand rules cannot know that ``\\sqrt{117}`` and ``3\\sqrt{13}`` are the same number, or
``\\frac{\\pi}{2}`` and ``\\pi/2``; ``math-verify`` (latex2sympy2 + SymPy) parses both
sides and compares them symbolically. It is the last step of :func:`values_match`, after
the exact-number and normalised-text comparisons, so plain numbers never pay for SymPy.

``math-verify`` guards its parse and compare with a SIGALRM timeout, which only works in
the main thread; elsewhere (a worker thread) it is called without one. Any failure inside
the library means "not shown equal".
"""

from __future__ import annotations

import threading
from functools import lru_cache
from typing import Any

_TIMEOUT_S = 5


def _wrap(text: str) -> str:
    """Bare LaTeX as math-verify's extractor expects it (inside ``$...$``)."""
    s = text.strip()
    if s.startswith("$") or "\\boxed" in s:
        return s
    return f"${s}$"


@lru_cache(maxsize=4096)
def _parsed(text: str, main: bool) -> tuple[Any, ...]:
    from math_verify import parse  # imported lazily: SymPy costs ~1 s to import

    try:
        value = parse(_wrap(text), parsing_timeout=_TIMEOUT_S if main else None)
    except Exception:  # noqa: BLE001 - an unparseable answer is simply not equal
        return ()
    return tuple(value)


def symbolically_equal(answer: str, reference: str) -> bool:
    """True if math-verify shows ``answer`` equals ``reference`` (False when unsure)."""
    if not answer.strip() or not reference.strip():
        return False
    from math_verify import verify

    main = threading.current_thread() is threading.main_thread()
    gold, target = _parsed(reference, main), _parsed(answer, main)
    if not gold or not target:
        return False
    try:
        return bool(verify(list(gold), list(target), timeout_seconds=_TIMEOUT_S if main else None))
    except Exception:  # noqa: BLE001
        return False
