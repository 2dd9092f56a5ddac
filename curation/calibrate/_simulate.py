"""The simulated panel's side of a new item: what latent difficulty it answers from.

The simulated panel (:class:`curation.llm.SimulatedBackend`) answers by σ(θ_j − b) and
cannot read a text, so a new item must be *registered* with the b it answers from
before it is asked (:func:`register_child`). A simulated rewrite states that b in a
header in front of its question, ``[simulated rewrite of <parent>; latent b = <b>]``
(written by BenchFill's simulated rewriter, read back by :func:`latent_of`), so a
simulated child is self-describing: a cached rewrite keeps its b, and two children
with different latent b never share a cached panel answer (their texts, hence their
cache keys, differ). Everything measured this way says ``source = simulated``
(:attr:`curation.calibrate.Panel.source`), and is never published.
"""

from __future__ import annotations

import re

from curation.llm import ItemTruth, SimulatedBackend

_HEADER = re.compile(
    r"^\[simulated rewrite of (?P<parent>[^;\]]+); latent b = (?P<b>-?\d+\.\d+)\]\s*"
)


def header(parent: str, latent_b: float) -> str:
    """The header a simulated rewrite of ``parent`` at latent difficulty ``latent_b`` carries."""
    return f"[simulated rewrite of {parent}; latent b = {latent_b:.6f}]"


def latent_of(question: str) -> float | None:
    """The latent b a simulated child's question states, or None."""
    m = _HEADER.match(question)
    return float(m.group("b")) if m else None


def strip_header(question: str) -> str:
    """The question without a simulation header (the text a rewriter should see)."""
    return _HEADER.sub("", question, count=1)


def register_child(
    panel: SimulatedBackend,
    item: str,
    *,
    answer: str | None,
    answer_type: str,
    choices: tuple[str, ...] | None,
    latent_b: float,
) -> None:
    """Make a child answerable by the simulated panel, at its latent difficulty."""
    panel.truths[item] = ItemTruth(reference=answer, answer_type=answer_type, choices=choices)
    panel.difficulties[item] = latent_b
