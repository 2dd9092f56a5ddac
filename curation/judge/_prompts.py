"""The judge's prompt templates: text files with ``{{name}}`` placeholders.

Built-in templates live in ``curation/judge/prompts/``; ``judge.prompts`` in params
names a folder that overrides any of them by file name. Placeholders are replaced
in one pass (values are never re-scanned), so item text full of LaTeX braces or
``{{...}}`` is inserted verbatim.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from curation.errors import ConfigError

BUILTIN_DIR = Path(__file__).resolve().parent / "prompts"
NAMES: tuple[str, ...] = ("system", "solve", "verdict", "repair")
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")
FIELDS: dict[str, frozenset[str]] = {
    "system": frozenset(),
    "solve": frozenset({"question", "choices", "answer_type", "answer_form"}),
    "verdict": frozenset(
        {
            "answer",
            "parent_question",
            "parent_answer",
            "parent_answer_type",
            "change",
            "format_note",
        }
    ),
    "repair": frozenset({"problem", "keys"}),
}
"""Placeholders each template may use."""

ANSWER_FORMS: dict[str, str] = {
    "numeric": "a single number (integer, decimal or fraction such as 3/4), without units",
    "exact": "the exact final answer text, as short as possible",
    "choice": "the letter of the correct option (A, B, C, ...)",
    "code": "the program is checked by tests: describe the expected behaviour in the "
    "solution and give null as the answer",
    "free": "a short final answer",
}


@dataclass(frozen=True)
class Prompts:
    """The four templates, and a hash of them (recorded by callers that want lineage)."""

    system: str
    solve: str
    verdict: str
    repair: str

    @property
    def sha256(self) -> str:
        blob = "\x1f".join(getattr(self, n) for n in NAMES)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def render(self, name: str, values: Mapping[str, str]) -> str:
        """Fill one template; every placeholder it uses must be given."""
        template = getattr(self, name)

        def sub(match: re.Match[str]) -> str:
            key = match.group(1)
            if key not in values:
                raise KeyError(f"judge prompt {name!r}: no value for {{{{{key}}}}}")
            return values[key]

        return _PLACEHOLDER.sub(sub, template).strip()


def load_prompts(folder: Path | None = None) -> Prompts:
    """The built-in templates, each overridden by ``folder/<name>.txt`` when it exists."""
    texts: dict[str, str] = {}
    for name in NAMES:
        path = BUILTIN_DIR / f"{name}.txt"
        if folder is not None:
            if not folder.is_dir():
                raise ConfigError(f"judge.prompts: {folder} is not a folder")
            override = folder / f"{name}.txt"
            if override.is_file():
                path = override
        text = path.read_text(encoding="utf-8")
        unknown = sorted(set(_PLACEHOLDER.findall(text)) - FIELDS[name])
        if unknown:
            raise ConfigError(
                f"{path}: unknown placeholder {{{{{unknown[0]}}}}}; "
                f"{name}.txt may use: {', '.join(sorted(FIELDS[name])) or 'none'}"
            )
        texts[name] = text
    return Prompts(**texts)
