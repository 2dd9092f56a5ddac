"""Wire types of the LLM layer: what is asked, what comes back, and how it is keyed.

Frozen dataclasses, because a request is also a cache key: once built it must not
change, and two equal requests must hash equal.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from curation.llm._settings import LLMSettings, PanelModel

CACHE_KEY_VERSION = 1
"""Bump when the key layout changes, so old rows are never served for new requests."""


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: str
    """system, user or assistant."""
    content: str


@dataclass(frozen=True, slots=True)
class Sampling:
    """Sampling parameters sent with a request (all part of the cache key)."""

    temperature: float
    max_tokens: int
    top_p: float | None = None
    seed: int | None = None
    """Seed sent to the endpoint (base seed + sample index), or None to send none."""

    def as_dict(self) -> dict[str, Any]:
        """The fields as a dict (``dataclasses.asdict`` deep-copies, which cost more
        than the rest of building a cache key)."""
        return {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "top_p": self.top_p,
            "seed": self.seed,
        }


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One chat completion to obtain: a model, messages, sampling, and a sample index.

    ``sample`` distinguishes the k draws of the same prompt: without it the cache
    would return the first draw k times.
    """

    model: str
    """Panel name of the model (accounting and error messages)."""
    model_id: str
    """Model id sent to the endpoint (part of the cache key)."""
    messages: tuple[Message, ...]
    sampling: Sampling
    sample: int = 0
    stream: bool = False
    """Stream the answer (records time to first token); not part of the key."""
    stage: str = "collect"
    """Pipeline stage asking (accounting); not part of the key."""
    item: str | None = None
    """Item id, a hint for the simulation backend only; not part of the key."""

    def key(self, namespace: str) -> str:
        """sha256 of (namespace, model id, messages, sampling, sample index).

        ``namespace`` separates backends (a simulated answer must never be served
        for a real endpoint); stream, stage and item do not change the answer and
        are left out so that, e.g., a streaming rerun reuses non-streamed answers.
        """
        payload = {
            "v": CACHE_KEY_VERSION,
            "ns": namespace,
            "model_id": self.model_id,
            "messages": [[m.role, m.content] for m in self.messages],
            "sampling": self.sampling.as_dict(),
            "sample": self.sample,
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def body(self) -> dict[str, Any]:
        """The OpenAI chat-completions request body."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "temperature": self.sampling.temperature,
            "max_tokens": self.sampling.max_tokens,
        }
        if self.sampling.top_p is not None:
            body["top_p"] = self.sampling.top_p
        if self.sampling.seed is not None:
            body["seed"] = self.sampling.seed
        return body


@dataclass(frozen=True, slots=True)
class Completion:
    """A returned completion with the usage of the call that produced it.

    Usage is stored with the answer in the cache, so a rerun reports the tokens and
    latency the answer actually cost, and outputs stay identical across reruns.
    """

    text: str
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_s: float = 0.0
    """Wall-clock seconds of the successful attempt."""
    ttft_s: float | None = None
    """Seconds to the first content token (streaming only)."""
    retries: int = 0
    """Failed attempts before this answer."""
    served_model: str | None = None
    """Model name the endpoint reported (a revision/snapshot hint)."""
    backend: str = "openai"
    """Backend that produced it: openai or simulated."""

    def to_json(self) -> str:
        return json.dumps(
            {
                "text": self.text,
                "finish_reason": self.finish_reason,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "latency_s": self.latency_s,
                "ttft_s": self.ttft_s,
                "retries": self.retries,
                "served_model": self.served_model,
                "backend": self.backend,
            },
            sort_keys=True,
            ensure_ascii=False,
        )

    @classmethod
    def from_json(cls, text: str) -> Completion:
        return cls(**json.loads(text))


@dataclass(frozen=True, slots=True)
class CallResult:
    """A request with its key and completion, as the panel hands it to accounting."""

    request: ChatRequest
    key: str
    completion: Completion
    cached: bool = False
    """True if it came from the cache in this run (no call was made)."""


class Backend(Protocol):
    """Something that answers chat requests: a real endpoint client or the simulation.

    The panel code is the same for both; only the backend differs.
    """

    name: str
    """``openai`` or ``simulated`` (recorded as the response source)."""

    @property
    def namespace(self) -> str:
        """Cache namespace: answers of different backends never mix."""
        ...

    def max_in_flight(self) -> int:
        """How many calls are worth having in flight (the sum of endpoint limits)."""
        ...

    async def complete(self, request: ChatRequest) -> Completion:
        """Answer one request, retrying transient failures; raise after the last retry."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class ShardBackendFactory(Protocol):
    """Builds, inside a worker process, the backend a :class:`ShardSpec` describes.

    A class or module-level function (it is pickled by reference into the child),
    e.g. :class:`curation.llm.OpenAIBackend` itself.
    """

    def __call__(
        self,
        models: Sequence[PanelModel],
        settings: LLMSettings,
        *,
        environ: Mapping[str, str] | None = None,
    ) -> Backend: ...


@dataclass(frozen=True)
class ShardSpec:
    """What a worker process needs to rebuild the backend: models, settings, environment.

    The backend hands this to the worker processes (``backend.shard_spec(cache_path)``);
    ``factory`` rebuilds it there, so the process machinery knows no backend class.
    """

    factory: ShardBackendFactory
    models: tuple[PanelModel, ...]
    settings: LLMSettings
    environ: Mapping[str, str]
    """Only the variables the models name (base URLs and keys)."""
    limits: Mapping[str, int]
    """Panel model name -> its endpoint's concurrency limit (split among children)."""
    cache_path: str
