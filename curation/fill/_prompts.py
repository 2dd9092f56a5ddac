"""The rewriter's prompts: templates kept as files in ``curation/fill/prompts/``.

* ``system.txt`` — the rewriter's role and the JSON-only rule;
* ``benchfill.txt`` — parent, target, direction and the reference list;
* ``baseline.txt`` — parent and target only (the uniform-parent baseline: no
  references, no memory);
* ``reference.txt`` — one line of the reference list.

Placeholders are ``{name}`` and are filled by plain replacement (never
``str.format``: questions are full of LaTeX braces). Any template can be replaced by
a file of one's own through ``fill.prompts``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from curation.fill._memory import MemoryEntry
from curation.fill._settings import PROMPT_NAMES, PromptName
from curation.llm import Message

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"


@dataclass(frozen=True)
class Prompts:
    """The four templates and the sha256 of each (recorded in every candidate's lineage)."""

    system: str
    benchfill: str
    baseline: str
    reference: str

    def sha(self, name: str) -> str:
        return hashlib.sha256(getattr(self, name).encode("utf-8")).hexdigest()


def load_prompts(overrides: Mapping[PromptName, str | Path] | None = None) -> Prompts:
    """The built-in templates, each replaced by its override file if one is given
    (``fill.prompts``; the stage checks first that each is a file,
    :meth:`~curation.fill.FillSettings.prompt_files`)."""
    texts = {}
    for name in PROMPT_NAMES:
        path = (overrides or {}).get(name) or PROMPT_DIR / f"{name}.txt"
        texts[name] = Path(path).read_text(encoding="utf-8").strip() + "\n"
    return Prompts(**texts)


def fill(template: str, values: Mapping[str, str]) -> str:
    """Replace each ``{key}`` by its value (unknown braces are left alone)."""
    out = template
    for key, value in values.items():
        out = out.replace("{" + key + "}", value)
    return out


def _cut(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def render_references(prompts: Prompts, references: Iterable[MemoryEntry], *, chars: int) -> str:
    lines = [
        fill(
            prompts.reference,
            {
                "z": f"{e.z:.3f}",
                "question": _cut(e.question, chars),
                "answer": e.answer if e.answer is not None else "(none)",
            },
        ).rstrip("\n")
        for e in references
    ]
    return "\n".join(lines) if lines else "(none available)"


def rewrite_messages(
    prompts: Prompts,
    *,
    kind: str,
    parent: MemoryEntry,
    parent_question: str,
    target_z: float,
    references: Sequence[MemoryEntry],
    reference_chars: int,
) -> tuple[Message, ...]:
    """System and user messages asking for one rewrite of ``parent`` toward ``target_z``.

    ``kind`` is ``benchfill`` (with the reference list) or ``baseline`` (without).
    ``parent_question`` is the parent's text as shown to the rewriter (a simulated
    parent is shown without its simulation header).
    """
    delta = target_z - parent.z
    values = {
        "parent_question": parent_question,
        "parent_answer": parent.answer if parent.answer is not None else "(none)",
        "parent_z": f"{parent.z:.3f}",
        "answer_type": parent.answer_type,
        "target_z": f"{target_z:.3f}",
        "direction": "harder" if delta > 0 else "easier",
        "delta": f"{delta:+.3f}",
    }
    if kind == "benchfill":
        values["references"] = render_references(prompts, references, chars=reference_chars)
        user = fill(prompts.benchfill, values)
    elif kind == "baseline":
        user = fill(prompts.baseline, values)
    else:
        raise ValueError(f"unknown prompt kind {kind!r}")
    if parent.choices:
        user += "\nThe parent's options, in order:\n" + "\n".join(
            f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(parent.choices)
        )
        user += '\nAdd a key "choices" with the new options, in order.\n'
    return (Message("system", prompts.system.strip()), Message("user", user.strip()))


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 of the filled messages (template and values): the candidate's ``prompt_hash``."""
    blob = json.dumps([[m.role, m.content] for m in messages], ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
