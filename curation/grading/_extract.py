"""Finding the final answer inside a model's free text.

Models bury the answer in reasoning, so extraction looks for the most explicit
marker first (``\\boxed{}``, answer tags, "the answer is") and only then falls
back to weaker evidence (the last number). Every function returns the extracted
text, never a verdict, so the caller can store it beside the raw output.
"""

from __future__ import annotations

import re
import string

from curation.grading._numeric import last_number

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
_ANSWER_TAG = re.compile(r"\[ANSWER\](.*?)\[/ANSWER\]", re.S | re.I)
_XML_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S | re.I)
_HASHES = re.compile(r"^\s*####\s*(.+?)\s*$", re.M)
_MARKER = re.compile(r"(?:final answer|the answer|answer)\s*(?:is|:|=)\s*[:\-]?\s*(.+)", re.I)
_CODE_BLOCK = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.S)
LETTERS = string.ascii_uppercase


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` (braces balanced), or None."""
    found = None
    for m in _BOXED.finditer(text):
        depth, start = 1, m.end()
        for i in range(start, len(text)):
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    found = text[start:i]
                    break
    return found.strip() if found is not None else None


def _tail_marker(text: str) -> str | None:
    tags = _ANSWER_TAG.findall(text) or _XML_ANSWER.findall(text)
    if tags:
        return tags[-1].strip()
    hashes = _HASHES.findall(text)
    if hashes:
        return hashes[-1].strip()
    markers = list(_MARKER.finditer(text))
    if markers:
        line = markers[-1].group(1).strip().splitlines()[0].strip()
        # the sentence that states the answer ends it ("The answer is 17. Check: 12 + 5")
        line = re.split(r"(?<=\S)\.\s+(?=\S)", line)[0]
        # markdown emphasis and a closing period are decoration, not the answer
        return line.rstrip(".").strip().strip("*").strip() or None
    return None


def explicit_answer(text: str) -> str | None:
    """A final answer the text states explicitly (boxed, tags, ``####``, "the answer is"),
    never a fallback guess; None if there is none or it is empty."""
    boxed = last_boxed(text)
    if boxed:
        return boxed
    return _tail_marker(text) or None


def extract_numeric(text: str) -> str | None:
    """Boxed content, then an answer marker, then the last number in the text."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    marked = _tail_marker(text)
    if marked is not None:
        return marked
    return last_number(text)


def extract_exact(text: str) -> str | None:
    """Boxed content, then answer tags/markers, then the whole (stripped) output."""
    boxed = last_boxed(text)
    if boxed is not None:
        return boxed
    marked = _tail_marker(text)
    if marked is not None:
        return marked
    stripped = text.strip()
    return stripped or None


_LETTER_PATTERNS = (
    re.compile(r"(?i:answer)\s*(?i:is|:)?\s*(?i:option\s*)?[\(\[]?([A-Z])[\)\]]?(?![A-Za-z])"),
    re.compile(r"^\s*[\(\[]?([A-Z])[\)\].:]?\s*$", re.M),
    re.compile(r"\(([A-Z])\)"),
)


def extract_choice(text: str, n_choices: int | None = None) -> str | None:
    """The chosen option letter (``A``, ``B``, ...), or None.

    Only letters within the first ``n_choices`` count, so the pronoun "I" or a
    stray capital is not read as an answer.
    """
    valid = LETTERS[: n_choices or 10]

    def ok(letter: str) -> str | None:
        letter = letter.upper()
        return letter if letter in valid else None

    boxed = last_boxed(text)
    if boxed is not None:
        inner = re.sub(r"\\text\s*\{([^{}]*)\}", r"\1", boxed).strip().strip("()[]. ")
        if len(inner) == 1 and ok(inner):
            return ok(inner)
    for pattern in _LETTER_PATTERNS:
        hits = [h for h in pattern.findall(text) if ok(h)]
        if hits:
            return ok(hits[-1])
    return None


def extract_code(text: str) -> str | None:
    """The last fenced code block (preferring Python), else the whole output."""
    blocks = _CODE_BLOCK.findall(text)
    if blocks:
        python = [code for lang, code in blocks if lang.lower() in ("python", "py", "python3")]
        return (python or [code for _, code in blocks])[-1]
    return text.strip() or None
