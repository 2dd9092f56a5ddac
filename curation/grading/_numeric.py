"""Parsing numbers the way models and answer keys write them.

Numbers are parsed to exact :class:`fractions.Fraction` so that ``3/4``, ``0.75`` and
``\\frac{3}{4}`` compare equal without float noise; a tolerance is applied only when
the two values differ (rounded decimals, ``0.333`` for ``1/3``).
"""

from __future__ import annotations

import re
from fractions import Fraction

_SPACES = re.compile(r"\\[,;:! ]|\\quad|\\qquad|~")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|textit|mathrm|mathbf|mbox|operatorname)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_FRAC_SHORT = re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")
_SPACED_THOUSANDS = re.compile(r"^[+-]?\d{1,3}( \d{3})+(\.\d+)?$")
_PLAIN = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_SLASH = re.compile(r"^([+-]?\d+)\s*/\s*([+-]?\d+)$")
_LEAD_UNIT = re.compile(r"^(?:\\\$|\$|USD|US\$|€|£)\s*")
_NUM_THEN_REST = re.compile(r"^([+-]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*)$")
_UNIT_WORDS = re.compile(r"^[A-Za-z][A-Za-z .'/^\-]*[0-9²³]?\.?$")
_NOT_UNITS = {"pi", "i", "e", "sqrt", "x", "y", "n", "k"}

NUMBER_IN_TEXT = re.compile(
    r"(?<![\w.])[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:\s*/\s*\d+)?(?![\w])|(?<![\w.])[+-]?\.\d+"
)
"""A number as it appears inside prose (thousands separators, decimals, a/b)."""


def clean_math(text: str) -> str:
    """Strip LaTeX wrappers and spacing that never change a value."""
    s = text.strip()
    s = s.replace("\u2212", "-").replace("\u2009", "").replace("\u202f", "").replace("\xa0", " ")
    for wrapper in (r"\(", r"\)", r"\[", r"\]", "$$"):
        s = s.replace(wrapper, "")
    s = s.replace(r"\left", "").replace(r"\right", "").replace(r"\displaystyle", "")
    s = s.replace("{,}", ",")
    s = _SPACES.sub(" ", s)
    s = re.sub(r"\^\s*\{?\\circ\}?|°", "", s)
    prev = None
    while prev != s:
        prev = s
        s = _TEXT_CMD.sub(r" \1", s)
    s = s.replace(r"\%", "%").replace(r"\$", "$")
    return " ".join(s.split())


def _to_fraction(token: str) -> Fraction | None:
    token = token.strip()
    if _SPACED_THOUSANDS.match(token):
        token = token.replace(" ", "")
    token = re.sub(r"\s*/\s*", "/", token)
    token = re.sub(r"^([+-])\s+", r"\1", token)
    if _THOUSANDS.match(token):
        token = token.replace(",", "")
    if _PLAIN.match(token):
        try:
            return Fraction(token)
        except (ValueError, ZeroDivisionError):
            return None
    m = _SLASH.match(token)
    if m:
        num, den = int(m.group(1)), int(m.group(2))
        return Fraction(num, den) if den else None
    return None


def parse_number(text: str | None) -> Fraction | None:
    """The value of ``text`` if it is one number (possibly with a unit), else None.

    Accepts ``1,234`` (thousands separators, only in groups of three, so ``1,5`` is
    not read as 1.5 or 15), ``$18``, ``18 dollars``, ``50%`` (as 50), ``\\frac{3}{4}``,
    ``-\\dfrac12``, ``3/4``, ``x = 5``, ``\\boxed``-free LaTeX. Anything with a
    remaining operator or symbol (``5\\sqrt{2}``, ``2^{10}``) is not a number.
    """
    if text is None:
        return None
    s = clean_math(text)
    if "=" in s:
        s = s.rsplit("=", 1)[1].strip()
    s = s.rstrip(".").strip()
    s = _LEAD_UNIT.sub("", s)
    if s.startswith("-") and _LEAD_UNIT.match(s[1:]):
        s = "-" + _LEAD_UNIT.sub("", s[1:])
    s = s.replace("$", "").strip()
    if s.endswith("%"):
        s = s[:-1].strip()
    s = s.strip("{}() ") if s.count("{") == s.count("}") and "\\" not in s else s
    sign = 1
    if s.startswith("-") and ("\\frac" in s[:8] or "\\dfrac" in s[:8] or "\\tfrac" in s[:8]):
        sign, s = -1, s[1:].strip()
    m = _FRAC.fullmatch(s) or _FRAC_SHORT.fullmatch(s)
    if m:
        num, den = _to_fraction(m.group(1)), _to_fraction(m.group(2))
        if num is None or den is None or den == 0:
            return None
        return sign * num / den
    value = _to_fraction(s)
    if value is not None:
        return sign * value
    m = _NUM_THEN_REST.match(s)
    if m and m.group(2):
        rest = m.group(2).strip()
        if rest.lower() in _NOT_UNITS or not _UNIT_WORDS.match(rest):
            return None
        value = _to_fraction(m.group(1))
        return None if value is None else sign * value
    return None


def numbers_equal(
    a: Fraction, b: Fraction, *, rel_tol: float = 1e-4, abs_tol: float = 1e-9
) -> bool:
    """Exact equality; for non-integers also within ``max(abs_tol, rel_tol * max(|a|, |b|))``.

    Two integers must be equal: a relative tolerance would accept 70000001 for
    70000000. Tolerance is for rounded decimals (``0.3333`` against ``1/3``).
    """
    if a == b:
        return True
    if a.denominator == 1 and b.denominator == 1:
        return False
    diff = abs(float(a) - float(b))
    return diff <= max(abs_tol, rel_tol * max(abs(float(a)), abs(float(b))))


def last_number(text: str) -> str | None:
    """The last number written in prose, as text (used when no answer marker exists)."""
    found = NUMBER_IN_TEXT.findall(clean_math(text))
    return found[-1].strip() if found else None
