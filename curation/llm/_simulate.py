"""The simulation backend: a seeded panel that answers by a 1PL IRT model, offline.

A drop-in for :class:`~curation.llm._client.OpenAIBackend` (same ``complete``), so
``collect`` runs the very same code path — prompts, cache, grading, tables —
without a network. Model j answers item i correctly with probability
σ(θ_j − b_i):

* θ_j comes from ``panel.models[].ability``; models without one are spread evenly
  over [-2, 2] in panel order (first = weakest).
* b_i comes from a difficulty file (``collect.simulation.difficulties``, e.g. a
  calibration written by ``annotate``) or, for items it does not list, from a
  deterministic hash of (benchmark, item): b_i = scale · Φ⁻¹(u_i). Hash-based
  difficulties depend on nothing but the item id, so they are stable across runs,
  seeds and panel changes.

Each draw uses u = hash(seed, model, item, sample) rather than a shared RNG stream,
so the answer to one call does not depend on the order calls complete in (they
run concurrently). Every answer text starts with ``[simulated]`` and the backend
reports itself as ``simulated``; collect marks the records ``source = simulated``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from curation.errors import InputError
from curation.grading import parse_number, reference_letter
from curation.hashing import hashed_normal, hashed_uniform
from curation.llm._settings import PanelModel
from curation.llm._types import ChatRequest, Completion

SIMULATED_PREFIX = "[simulated]"
_ABILITY_SPAN = 2.0


def hashed_difficulty(benchmark: str, item: str, *, scale: float = 1.5) -> float:
    """A deterministic latent difficulty ~ N(0, scale²) for an item without calibration."""
    return scale * hashed_normal("difficulty", benchmark, item)


def default_abilities(models: Sequence[PanelModel]) -> dict[str, float]:
    """θ per model: the declared ``ability``, else evenly spaced from weakest to strongest."""
    n = len(models)
    abilities = {}
    for i, m in enumerate(models):
        spread = 0.0 if n == 1 else -_ABILITY_SPAN + 2 * _ABILITY_SPAN * i / (n - 1)
        abilities[m.name] = float(m.ability) if m.ability is not None else spread
    return abilities


def load_difficulties(path: Path) -> dict[str, float]:
    """Item -> b from a JSON mapping (optionally under ``items`` or ``b``) or a table."""
    if not path.exists():
        raise InputError("difficulty file does not exist", file=str(path))
    if path.suffix in (".parquet", ".csv"):
        import polars as pl

        df = pl.read_parquet(path) if path.suffix == ".parquet" else pl.read_csv(path)
        for col in ("item", "b"):
            if col not in df.columns:
                raise InputError("required column missing", file=str(path), field=col)
        return {str(i): float(b) for i, b in zip(df["item"], df["b"], strict=True)}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InputError(f"not valid JSON: {exc}", file=str(path)) from None
    if isinstance(data, dict):
        for key in ("items", "b", "difficulty"):
            if isinstance(data.get(key), dict):
                data = data[key]
                break
    if not isinstance(data, dict):
        raise InputError("expected a JSON object mapping item -> b", file=str(path))
    out: dict[str, float] = {}
    for item, value in data.items():
        if isinstance(value, dict):
            value = value.get("b")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise InputError("difficulty is not a number", file=str(path), field=str(item))
        out[str(item)] = float(value)
    return out


@dataclass(frozen=True)
class ItemTruth:
    """What the simulation needs to know about an item to answer it right or wrong."""

    reference: str | None
    answer_type: str
    choices: tuple[str, ...] | None = None


def _wrong_number(reference: str) -> str | None:
    value = parse_number(reference)
    if value is None:
        return None
    wrong = value + max(Fraction(1), abs(value))  # at least 1 and 100% away: never within tolerance
    return str(wrong.numerator) if wrong.denominator == 1 else f"{float(wrong):.6g}"


def simulated_text(truth: ItemTruth, correct: bool) -> str:
    """An answer in the format the default prompt templates ask for."""
    ref = truth.reference
    if truth.answer_type == "choice":
        n = len(truth.choices) if truth.choices else 4
        letter = reference_letter(ref or "", truth.choices) or "A"
        if not correct:
            letter = chr(ord("A") + (ord(letter) - ord("A") + 1) % max(n, 2))
        return f"{SIMULATED_PREFIX} Answer: {letter}"
    if truth.answer_type == "numeric":
        if correct and ref is not None:
            return f"{SIMULATED_PREFIX} The answer is \\boxed{{{ref}}}."
        wrong = _wrong_number(ref or "") or "\\text{simulated wrong answer}"
        return f"{SIMULATED_PREFIX} The answer is \\boxed{{{wrong}}}."
    if truth.answer_type == "code":
        return f"{SIMULATED_PREFIX}\n```python\n# simulated: no program\n```"
    if correct and ref is not None:
        return f"{SIMULATED_PREFIX} [ANSWER]{ref}[/ANSWER]"
    return f"{SIMULATED_PREFIX} [ANSWER]<simulated wrong answer>[/ANSWER]"


class SimulatedBackend:
    """Seeded IRT panel behind the :class:`~curation.llm.Backend` interface."""

    name = "simulated"

    def __init__(
        self,
        *,
        benchmark: str,
        truths: Mapping[str, ItemTruth],
        abilities: Mapping[str, float],
        seed: int,
        difficulties: Mapping[str, float] | None = None,
        difficulty_scale: float = 1.5,
    ) -> None:
        self.benchmark = benchmark
        self.truths = dict(truths)
        self.abilities = dict(abilities)
        self.seed = seed
        given = dict(difficulties or {})
        self.difficulties = {
            item: given.get(item, hashed_difficulty(benchmark, item, scale=difficulty_scale))
            for item in self.truths
        }
        fingerprint = json.dumps(
            {
                "seed": seed,
                "abilities": sorted(self.abilities.items()),
                "difficulties": hashlib.sha256(
                    json.dumps(sorted(self.difficulties.items())).encode()
                ).hexdigest(),
            },
            sort_keys=True,
        )
        self._namespace = "simulated:" + hashlib.sha256(fingerprint.encode()).hexdigest()[:16]

    @property
    def namespace(self) -> str:
        """Includes seed, abilities and difficulties: change one, and nothing is reused."""
        return self._namespace

    def max_in_flight(self) -> int:
        """Answers are instant; a few workers suffice."""
        return 8

    def p_correct(self, model: str, item: str) -> float:
        """σ(θ_model − b_item)."""
        z = self.abilities[model] - self.difficulties[item]
        return 1.0 / (1.0 + math.exp(-z))

    def is_correct(self, model: str, item: str, sample: int) -> bool:
        """The seeded draw for one (model, item, sample)."""
        return hashed_uniform("draw", self.seed, model, item, sample) < self.p_correct(model, item)

    async def complete(self, request: ChatRequest) -> Completion:
        item = request.item
        if item is None or item not in self.truths:
            raise KeyError(f"simulation has no item {item!r}")
        if request.model not in self.abilities:
            raise KeyError(f"simulation has no ability for model {request.model!r}")
        correct = self.is_correct(request.model, item, request.sample)
        text = simulated_text(self.truths[item], correct)
        prompt_tokens = sum(len(m.content.split()) for m in request.messages)
        return Completion(
            text=text,
            finish_reason="stop",
            prompt_tokens=prompt_tokens,
            completion_tokens=len(text.split()),
            latency_s=0.0,
            ttft_s=0.0 if request.stream else None,
            retries=0,
            served_model=f"simulated/{request.model}",
            backend="simulated",
        )

    async def aclose(self) -> None:
        return None
