"""Item text for the page: math spans, a word-level diff, the difficulty bar, the panel.

Everything here returns plain data (strings, numbers); the templates escape every
piece of item text (Jinja autoescape), so nothing a candidate says becomes markup.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Literal

Op = Literal["eq", "ins", "del"]

# $$…$$, \[…\], \(…\) and $…$ (pandoc's rule: no space just inside the dollars and no
# digit right after the closing one, so "$5 and $10" stays text).
_MATH = re.compile(
    r"(?P<dd>\$\$(?P<dd_tex>.+?)\$\$)"
    r"|(?P<bk>\\\[(?P<bk_tex>.+?)\\\])"
    r"|(?P<pr>\\\((?P<pr_tex>.+?)\\\))"
    r"|(?P<il>\$(?![\s$])(?P<il_tex>(?:\\.|[^$\\\n])+?)(?<!\s)\$(?!\d))",
    re.DOTALL,
)
_WORDS = re.compile(r"\s+|[^\s]+")
MAX_MATH_DEPTH = 12
"""Deepest brace nesting (``\\frac{\\frac{…}}``) rendered as math; deeper TeX is shown as
its source: a 300-deep ``\\frac`` froze the reviewer's tab in KaTeX's layout."""
MAX_MATH_CHARS = 2000
"""Longest formula rendered as math (longer ones are shown as source)."""


def renderable(tex: str) -> bool:
    """Whether KaTeX may lay ``tex`` out: its brace depth and length are bounded."""
    if len(tex) > MAX_MATH_CHARS:
        return False
    depth = deepest = 0
    escaped = False
    for ch in tex:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == "{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == "}":
            depth -= 1
    return deepest <= MAX_MATH_DEPTH


@dataclass(frozen=True)
class Segment:
    """A run of text: plain words (``math`` False) or one formula (TeX source)."""

    text: str
    math: bool = False
    display: bool = False
    op: Op = "eq"


def _tokens(text: str) -> list[Segment]:
    out: list[Segment] = []
    pos = 0
    for m in _MATH.finditer(text):
        out.extend(Segment(w) for w in _WORDS.findall(text[pos : m.start()]))
        kind = m.lastgroup or ""
        tex = next(m.group(g) for g in ("dd_tex", "bk_tex", "pr_tex", "il_tex") if m.group(g))
        if renderable(tex):
            out.append(Segment(tex, math=True, display=kind in ("dd", "bk")))
        else:  # the source, as text: too deep or long for the browser to lay out
            out.extend(Segment(w) for w in _WORDS.findall(m.group(0)))
        pos = m.end()
    out.extend(Segment(w) for w in _WORDS.findall(text[pos:]))
    return out


def _merge(segments: list[Segment]) -> list[Segment]:
    """Join neighbouring plain segments with the same mark (fewer spans on the page)."""
    out: list[Segment] = []
    for s in segments:
        if out and not s.math and not out[-1].math and out[-1].op == s.op:
            out[-1] = Segment(out[-1].text + s.text, op=s.op)
        else:
            out.append(s)
    return out


def segments(text: str | None) -> list[Segment]:
    """``text`` as plain and math segments, unmarked."""
    return _merge(_tokens(text or ""))


def word_diff(old: str | None, new: str | None) -> tuple[list[Segment], list[Segment]]:
    """Word-level diff: (old with deletions marked, new with insertions marked).

    A formula is one token, so a changed formula is marked whole and still renders.
    """
    a, b = _tokens(old or ""), _tokens(new or "")
    key_a = [(s.text, s.math) for s in a]
    key_b = [(s.text, s.math) for s in b]
    left: list[Segment] = []
    right: list[Segment] = []
    matcher = difflib.SequenceMatcher(None, key_a, key_b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            left.extend(a[i1:i2])
            right.extend(b[j1:j2])
            continue
        left.extend(_mark(a[i1:i2], "del"))
        right.extend(_mark(b[j1:j2], "ins"))
    return _merge(left), _merge(right)


def _mark(tokens: list[Segment], op: Op) -> list[Segment]:
    """Mark a changed run; its leading and trailing whitespace stays unmarked."""
    marked = [Segment(t.text, t.math, t.display, op) for t in tokens]
    blank = [not t.math and t.text.isspace() for t in tokens]
    for i in range(len(marked)):
        if not blank[i]:
            break
        marked[i] = tokens[i]
    for i in reversed(range(len(marked))):
        if not blank[i]:
            break
        marked[i] = tokens[i]
    return marked


def diff_stats(left: list[Segment], right: list[Segment]) -> tuple[int, int]:
    """(words deleted, words inserted)."""

    def count(segs: list[Segment], op: str) -> int:
        return sum(1 if s.math else len(s.text.split()) for s in segs if s.op == op)

    return count(left, "del"), count(right, "ins")


@dataclass(frozen=True)
class DifficultyBar:
    """Target vs achieved difficulty on [0, 1], for an inline SVG bar."""

    target: float | None
    z: float | None
    low: float | None
    high: float | None
    width: int = 360
    x0: float = 14.0
    x1: float = 346.0

    def x(self, value: float | None) -> float | None:
        """Horizontal position of ``value`` (clipped to [0, 1]) in the SVG."""
        if value is None:
            return None
        return round(self.x0 + max(0.0, min(1.0, float(value))) * (self.x1 - self.x0), 2)

    @property
    def ticks(self) -> list[tuple[float, str]]:
        return [(self.x(t) or 0.0, f"{t:g}") for t in (0, 0.25, 0.5, 0.75, 1)]

    @property
    def distance(self) -> float | None:
        if self.target is None or self.z is None:
            return None
        return abs(self.z - self.target)

    @property
    def inside(self) -> bool | None:
        """Is the target inside the interval of z?"""
        if self.target is None or self.low is None or self.high is None:
            return None
        return self.low <= self.target <= self.high


@dataclass(frozen=True)
class PanelRow:
    model: str
    correct: int
    trials: int

    @property
    def rate(self) -> float | None:
        return self.correct / self.trials if self.trials else None


def panel_rows(panel: str | None) -> tuple[list[PanelRow], str | None]:
    """Per-model success from the candidate's panel JSON ``{model: [correct, trials]}``,
    sorted by rate (best first); (rows, problem) — problem says why it could not be read."""
    if not panel:
        return [], None
    try:
        data = json.loads(panel)
    except ValueError as exc:
        return [], f"panel is not valid JSON ({exc})"
    if not isinstance(data, dict):
        return [], "panel is not a JSON object"
    rows = []
    for model, value in data.items():
        try:
            correct, trials = (int(value[0]), int(value[1]))
        except (TypeError, ValueError, IndexError, KeyError):
            return [], f"panel entry {model!r} is not [n_correct, n_trials]"
        rows.append(PanelRow(str(model), correct, trials))
    rows.sort(key=lambda r: (-(r.rate if r.rate is not None else -1), r.model))
    return rows, None


def pretty_json(text: str | None) -> str:
    """Indented JSON for display (the original text if it is not JSON)."""
    if not text:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False)
    except ValueError:
        return text
