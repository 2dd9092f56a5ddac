"""LaTeX that a JSON decoder read as escapes, put back.

Models write ``\\frac``, ``\\times``, ``\\beta`` inside JSON strings with one
backslash, and JSON decodes ``\\f``, ``\\t``, ``\\b``, ``\\r``, ``\\n`` as control
characters: the answer a grader then reads is not the one the model wrote. The judge's
replies and BenchFill's rewrites are both decoded JSON, so the repair lives here, beside
the graders that must see the answer as written.
"""

from __future__ import annotations

import re
from typing import Any

# LaTeX inside JSON strings: models write `\frac`, `\times`, `\beta`, `\right`, `\neq`
# with ONE backslash, which JSON decodes as the escapes \f \t \b \r \n ("\x0crac").
# A form feed or backspace is never meant in a model's answer; a tab, carriage return or
# newline is read back as a command only before the rest of a common LaTeX command name.
_LATEX_RE: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile("\x0c(?=[a-z])"), "\\f"),
    (re.compile("\x08(?=[a-z])"), "\\b"),
    (re.compile(r"\t(?=imes|ext|heta|frac|an\b|au\b|riangle|ilde|o\b|op\b)"), "\\t"),
    (re.compile(r"\r(?=ight|ho\b|angle|floor|ceil|m\b|vert)"), "\\r"),
    (re.compile(r"\n(?=eq\b|e\b|ot\b|u\b|abla|eg\b|otin|mid\b|ewline|i\b)"), "\\n"),
)


def restore_latex(value: Any) -> Any:
    """``value`` (a decoded JSON value) with LaTeX commands that JSON read as escapes put
    back: form feed + ``rac{1}{2}`` becomes ``\\frac{1}{2}``, tab + ``imes`` ``\\times``."""
    if isinstance(value, str):
        for pattern, command in _LATEX_RE:
            value = pattern.sub(command.replace("\\", "\\\\"), value)
        return value
    if isinstance(value, dict):
        return {k: restore_latex(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restore_latex(v) for v in value]
    return value
