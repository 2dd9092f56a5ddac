"""The offline rewriter: a seeded stand-in for the rewriting model.

It answers the very requests a real rewriter gets (same prompts, same cache, same
parser) with a JSON rewrite whose difficulty follows the documented model of
:class:`~curation.fill.RewriteSimulationSettings`. It cannot write a new problem, so it says
so: the child's question is the parent's behind the header of
:func:`curation.calibrate.simulated_header`
(``[simulated rewrite of <parent>; latent b = <b>]``) and its answer is the parent's.
The header carries the child's latent difficulty, which the simulated panel answers
from (see :mod:`curation.calibrate._simulate`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from curation.calibrate import simulated_header
from curation.fill._settings import RewriteSimulationSettings
from curation.hashing import hashed_normal, hashed_uniform
from curation.llm import ChatRequest, Completion

SIMULATED_REWRITER = "simulated"
"""``rewriter_model`` of simulated candidates."""


@dataclass(frozen=True)
class Brief:
    """What the simulated rewriter needs to know about one request."""

    parent: str
    parent_body: str
    answer: str | None
    answer_type: str
    choices: tuple[str, ...] | None
    parent_b: float
    """The parent's latent difficulty (a benchmark item's: its calibrated b)."""
    target_b: float
    steered: bool
    """True when the prompt carries references (BenchFill), False for the baseline."""


class SimulatedRewriter:
    """A :class:`curation.llm.Backend` that rewrites by the simulation model."""

    name = "simulated"

    def __init__(self, *, seed: int, simulation: RewriteSimulationSettings) -> None:
        self.seed = seed
        self.simulation = simulation
        blob = json.dumps(
            {
                "seed": seed,
                "sim": [simulation.eta, simulation.sigma, simulation.free_sigma],
                **({"bias": simulation.bias} if simulation.bias else {}),
            }
        )
        self._namespace = "simulated-rewriter:" + hashlib.sha256(blob.encode()).hexdigest()[:16]
        self._briefs: dict[str, Brief] = {}

    @property
    def namespace(self) -> str:
        """Includes the seed and the model's parameters: change one, nothing is reused."""
        return self._namespace

    def max_in_flight(self) -> int:
        return 8

    def expect(self, request: ChatRequest, brief: Brief) -> None:
        """Tell the simulation what ``request`` is about (before it is sent)."""
        self._briefs[request.key(self._namespace)] = brief

    def child_b(self, key: str, brief: Brief) -> float:
        """The child's latent difficulty, drawn from (seed, request key)."""
        sim = self.simulation
        z = hashed_normal("eps", self.seed, key)
        if brief.steered:
            step = sim.eta * (brief.target_b - brief.parent_b) + sim.sigma * z
            return brief.parent_b + sim.bias + step
        sign = 1.0 if hashed_uniform("sign", self.seed, key) < 0.5 else -1.0
        return brief.parent_b + sim.bias + sign * abs(sim.free_sigma * z)

    async def complete(self, request: ChatRequest) -> Completion:
        key = request.key(self._namespace)
        brief = self._briefs.get(key)
        if brief is None:
            raise KeyError("the simulated rewriter was not told about this request (expect())")
        b = self.child_b(key, brief)
        how = "steered by the references" if brief.steered else "undirected (no references)"
        out: dict[str, Any] = {
            "question": f"{simulated_header(brief.parent, b)} {brief.parent_body}",
            "answer": brief.answer,
            "answer_type": brief.answer_type,
            "change": (
                f"[simulated] latent difficulty moved from b = {brief.parent_b:.3f} to "
                f"{b:.3f} (target {brief.target_b:.3f}), {how}; text and answer kept"
            ),
        }
        if brief.choices:
            out["choices"] = list(brief.choices)
        text = json.dumps(out, ensure_ascii=False)
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=sum(len(m.content.split()) for m in request.messages),
            completion_tokens=len(text.split()),
            latency_s=0.0,
            ttft_s=None,
            retries=0,
            served_model="simulated/rewriter",
            backend="simulated",
        )

    async def aclose(self) -> None:
        return None
