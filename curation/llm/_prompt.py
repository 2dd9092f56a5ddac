"""Filling a prompt template (``collect.templates``) with an item's question and choices."""

from __future__ import annotations


def render_prompt(template: str, question: str, choices: list[str] | None) -> str:
    """Fill ``{question}`` and ``{choices}`` (``A. ...`` lines) into a template.

    Plain replacement, not ``str.format``: questions and templates are full of
    LaTeX braces.
    """
    listed = ""
    if choices:
        listed = "\n".join(f"{chr(ord('A') + i)}. {c}" for i, c in enumerate(choices))
    return template.replace("{question}", question).replace("{choices}", listed)
