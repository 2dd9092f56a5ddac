"""Accounting: tokens, latency, time to first token, retries and cost, per stage and model.

Usage is summed over every sample an output is built from, using the usage stored
with each cached completion, so the figures describe what the table cost and are
identical on a rerun. ``requests`` and ``cache_hits`` describe this run only (a fully
cached rerun makes 0 requests): the stages print them, and :meth:`Accounting.to_metrics`
leaves them out, because a DVC-tracked metrics file must depend on the inputs alone,
not on what the completion cache held (a rerun after a failure finds it warm, a fresh
clone cold).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from curation.llm._types import CallResult


@dataclass(frozen=True)
class Price:
    """USD per 1M tokens."""

    input_per_1m: float
    output_per_1m: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_1m + completion_tokens * self.output_per_1m) / 1e6


@dataclass
class Tally:
    """Running sums for one (stage, model) or a total."""

    samples: int = 0
    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unknown_usage: int = 0
    latency_s: float = 0.0
    ttft_s: float = 0.0
    ttft_n: int = 0
    cost_usd: float = 0.0
    priced: bool = False

    def add(self, result: CallResult, price: Price | None) -> None:
        c = result.completion
        self.samples += 1
        if result.cached:
            self.cache_hits += 1
        else:
            self.requests += 1
        self.retries += c.retries
        self.latency_s += c.latency_s
        if c.ttft_s is not None:
            self.ttft_s += c.ttft_s
            self.ttft_n += 1
        if c.prompt_tokens is None or c.completion_tokens is None:
            self.unknown_usage += 1
        pt, ct = c.prompt_tokens or 0, c.completion_tokens or 0
        self.prompt_tokens += pt
        self.completion_tokens += ct
        if price is not None:
            self.priced = True
            self.cost_usd += price.cost(pt, ct)

    def merge(self, other: Tally) -> None:
        for name in (
            "samples",
            "requests",
            "cache_hits",
            "retries",
            "prompt_tokens",
            "completion_tokens",
            "unknown_usage",
            "latency_s",
            "ttft_s",
            "ttft_n",
            "cost_usd",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.priced = self.priced or other.priced

    def to_dict(self) -> dict[str, Any]:
        """Plain numbers for a DVC metrics file (keys without a value are left out): what
        the samples cost, not this run's requests and cache hits (run state, printed)."""
        out: dict[str, Any] = {
            "samples": self.samples,
            "retries": self.retries,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "samples_without_usage": self.unknown_usage,
            "latency_s_total": round(self.latency_s, 6),
            "latency_s_mean": round(self.latency_s / self.samples, 6) if self.samples else 0.0,
        }
        if self.ttft_n:
            out["ttft_s_mean"] = round(self.ttft_s / self.ttft_n, 6)
        if self.priced:
            out["cost_usd"] = round(self.cost_usd, 6)
        return out


class Accounting:
    """Sums calls per stage and model; ``to_metrics`` gives the DVC metrics dict."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices = dict(prices or {})
        self._tallies: dict[tuple[str, str], Tally] = {}

    def record(self, result: CallResult) -> None:
        key = (result.request.stage, result.request.model)
        tally = self._tallies.setdefault(key, Tally())
        tally.add(result, self.prices.get(result.request.model))

    def tally(self, *, stage: str | None = None, model: str | None = None) -> Tally:
        """Sum over the matching (stage, model) pairs."""
        total = Tally()
        for (s, m), t in self._tallies.items():
            if (stage is None or s == stage) and (model is None or m == model):
                total.merge(t)
        return total

    def to_metrics(self) -> dict[str, Any]:
        """``{"total": {...}, "stages": {stage: {"total": {...}, "models": {m: {...}}}}}``."""
        stages: dict[str, Any] = {}
        for stage in sorted({s for s, _ in self._tallies}):
            models = sorted({m for s, m in self._tallies if s == stage})
            stages[stage] = {
                "total": self.tally(stage=stage).to_dict(),
                "models": {m: self._tallies[stage, m].to_dict() for m in models},
            }
        return {"total": self.tally().to_dict(), "stages": stages}
