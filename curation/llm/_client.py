"""The real backend: ``openai.AsyncOpenAI`` against any OpenAI-compatible endpoint.

This is the only module in benchcurate that imports ``openai`` (ARCHITECTURE
invariant 2). Design choices, each for a measured or stated reason:

* The client's own retries are off (``max_retries=0``) so that every retry is ours:
  counted, logged in accounting, with jitter and Retry-After handled one way.
* A semaphore per endpoint (base URL) bounds concurrent requests; it is held only
  during an attempt, never while backing off, so one struggling call does not
  starve the others.
* The SDK's aiohttp transport (``openai.DefaultAioHttpClient``, the ``openai[aiohttp]``
  extra) by default, one keep-alive client per endpoint: against a 50 ms server at
  64 concurrent calls it spent 30-50% less client CPU per request than the default
  httpx transport (httpcore's pool bookkeeping, h11 and anyio were a third of the
  request's cost; see benchmarks/bench_llm.py). ``OpenAIBackend(..., http_transport="httpx")``
  keeps the SDK's default transport, with several clients per endpoint (one per
  ``clients_per_connections`` slots): httpcore scans its whole connection pool on
  every request, and at 64 connections that scan cost more than the request itself.
* Non-streamed calls go through ``client.post("/chat/completions", cast_to=object)``
  (the SDK's documented route for raw requests) rather than
  ``chat.completions.create``: the typed path spent ~40% more CPU per call on
  request transformation and response models we do not use, which capped
  throughput at high concurrency. Streaming uses the typed iterator.
* Keys come from environment variables named in params and are handed only to
  the SDK; every message that leaves this module is scrubbed.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import math
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import openai

from curation.errors import ConfigError
from curation.llm._errors import LLMCallError
from curation.llm._scrub import Secrets, redact_url
from curation.llm._settings import HttpTransport, LLMSettings, PanelModel
from curation.llm._types import ChatRequest, Completion, ShardSpec

SAMPLE_HEADER = "X-Benchcurate-Sample"
"""Sent with every request so servers and proxies can tell the k draws apart."""


def _transport_errors() -> tuple[type[BaseException], ...]:
    """httpx transport errors raised while iterating a stream (not wrapped by the SDK)."""
    errors: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        for attr in ("TransportError", "StreamError", "DecodingError"):
            err = getattr(module, attr, None)
            if isinstance(err, type) and issubclass(err, BaseException):
                errors.append(err)
    return tuple(errors)


_TRANSPORT_ERRORS = _transport_errors()


class _Retryable(Exception):
    def __init__(self, kind: str, message: str, retry_after: float | None = None) -> None:
        self.kind = kind
        self.retry_after = retry_after
        super().__init__(message)


class _Fatal(Exception):
    pass


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or HTTP date)."""
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 1e-3), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            if name != "retry-after":
                continue
            try:
                seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
            except (ValueError, TypeError, IndexError, OverflowError):
                continue  # unreadable: fall back to our own backoff
        if math.isfinite(seconds):
            return max(0.0, seconds)
    return None


@dataclass
class _Endpoint:
    url: str
    """Base URL with credentials and query removed (safe to print)."""
    semaphore: asyncio.Semaphore
    limit: int


@dataclass
class _Route:
    model: PanelModel
    endpoint: _Endpoint
    clients: list[openai.AsyncOpenAI]
    api_key_env: str
    next_client: int = 0

    def client(self) -> openai.AsyncOpenAI:
        self.next_client = (self.next_client + 1) % len(self.clients)
        return self.clients[self.next_client]


class OpenAIBackend:
    """Answers chat requests from OpenAI-compatible endpoints, with retries and limits.

    ``http_transport`` and ``clients_per_connections`` are not params.yaml keys: aiohttp
    is what the pipeline uses; httpx (the SDK's default, with one client per
    ``clients_per_connections`` concurrent slots) is kept for comparison and as a
    fallback (benchmarks/bench_llm.py).
    """

    name = "openai"

    def __init__(
        self,
        models: Sequence[PanelModel],
        settings: LLMSettings,
        *,
        environ: Mapping[str, str] | None = None,
        rng: random.Random | None = None,
        http_transport: HttpTransport = "aiohttp",
        clients_per_connections: int = 8,
    ) -> None:
        env = os.environ if environ is None else environ
        self.settings = settings
        self.http_transport: HttpTransport = http_transport
        self.clients_per_connections = clients_per_connections
        self._models = tuple(models)
        self._environ = {
            name: env[name]
            for m in models
            for name in (m.base_url_env, m.api_key_env)
            if name in env
        }
        self.secrets = Secrets()
        self._rng = rng or random.Random()
        resolved: list[tuple[PanelModel, str, str]] = []
        for m in models:
            base_url = env.get(m.base_url_env)
            if not base_url:
                raise ConfigError(
                    f"panel model {m.name!r}: environment variable {m.base_url_env} "
                    "(base_url_env) is not set; export the endpoint's base URL, e.g. "
                    "http://localhost:8000/v1, or use collect.backend: simulate"
                )
            key = env.get(m.api_key_env)
            if not key:
                raise ConfigError(
                    f"panel model {m.name!r}: environment variable {m.api_key_env} "
                    "(api_key_env) is not set or empty; export the key (any text, e.g. "
                    "EMPTY, for servers without authentication)"
                )
            self.secrets.add(key)
            resolved.append((m, base_url.rstrip("/"), key))
        # one semaphore per endpoint; its size is the smallest limit a model declared
        limits: dict[str, int] = {}
        for m, url, _ in resolved:
            if m.concurrency is not None:
                limits[url] = min(limits.get(url, m.concurrency), m.concurrency)
        endpoints: dict[str, _Endpoint] = {}
        for _, url, _ in resolved:
            if url not in endpoints:
                limit = limits.get(url, settings.default_concurrency)
                endpoints[url] = _Endpoint(redact_url(url), asyncio.Semaphore(limit), limit)
        clients: dict[tuple[str, str], list[openai.AsyncOpenAI]] = {}
        self._routes: dict[str, _Route] = {}
        for m, url, key in resolved:
            endpoint = endpoints[url]
            if (url, key) not in clients:
                clients[url, key] = _clients_for(
                    url,
                    key,
                    endpoint.limit,
                    settings,
                    transport=http_transport,
                    clients_per_connections=clients_per_connections,
                )
            self._routes[m.name] = _Route(m, endpoint, clients[url, key], m.api_key_env)
        self._clients = [c for group in clients.values() for c in group]

    @property
    def namespace(self) -> str:
        return "openai"

    @property
    def processes(self) -> int:
        """Worker processes to answer through (``LLMSettings.processes``)."""
        return self.settings.processes

    def shard_spec(self, cache_path: str) -> ShardSpec:
        """What worker processes need to rebuild this backend (see ``_processes``)."""
        return ShardSpec(
            factory=functools.partial(
                OpenAIBackend,
                http_transport=self.http_transport,
                clients_per_connections=self.clients_per_connections,
            ),
            models=self._models,
            settings=self.settings,
            environ=self._environ,
            limits={name: route.endpoint.limit for name, route in self._routes.items()},
            cache_path=cache_path,
        )

    def endpoint_of(self, model: str) -> str:
        """The (redacted) base URL a panel model is served from."""
        return self._routes[model].endpoint.url

    def max_in_flight(self) -> int:
        """Total concurrency over all endpoints (how many calls are worth starting)."""
        seen = {id(r.endpoint): r.endpoint.limit for r in self._routes.values()}
        return sum(seen.values())

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()

    # ---- one call --------------------------------------------------------------------------

    async def complete(self, request: ChatRequest) -> Completion:
        route = self._routes.get(request.model)
        if route is None:
            raise ConfigError(f"no panel model named {request.model!r}")
        settings = self.settings
        attempts = 0
        last: _Retryable | None = None
        while True:
            attempts += 1
            try:
                async with route.endpoint.semaphore:
                    return await self._attempt(route, request, retries=attempts - 1)
            except _Retryable as exc:
                last = exc
            except _Fatal as exc:
                raise LLMCallError(
                    f"model {request.model!r} (model id {request.model_id!r}) at "
                    f"{route.endpoint.url}: {exc}; not retried",
                    model=request.model,
                    endpoint=route.endpoint.url,
                    attempts=attempts,
                ) from None
            if attempts > settings.max_retries:
                break
            await asyncio.sleep(settings.retry_delay(attempts - 1, self._rng, last.retry_after))
        raise LLMCallError(
            f"model {request.model!r} (model id {request.model_id!r}) at "
            f"{route.endpoint.url}: no answer after {attempts} attempts "
            f"({settings.max_retries} retries); last error: {last}. Check that the endpoint "
            "is up, or lower panel.models[].concurrency / raise llm.max_retries",
            model=request.model,
            endpoint=route.endpoint.url,
            attempts=attempts,
        )

    async def _attempt(self, route: _Route, request: ChatRequest, *, retries: int) -> Completion:
        scrub = self.secrets.scrub
        try:
            if request.stream:
                return await self._streamed(route, request, retries=retries)
            return await self._plain(route, request, retries=retries)
        except openai.APITimeoutError as exc:
            if _dropped(exc):
                raise _Retryable("connection", "connection dropped by the server") from None
            raise _Retryable("timeout", f"timed out after {self.settings.timeout_s:g} s") from None
        except openai.APIConnectionError as exc:
            raise _Retryable("connection", scrub(f"connection error: {exc}")) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            detail = scrub(f"HTTP {status}: {exc.message}")
            if status == 429:
                raise _Retryable("429", detail, _retry_after(exc.response.headers)) from None
            if status >= 500 or status in (408, 409):
                raise _Retryable(str(status), detail, _retry_after(exc.response.headers)) from None
            if status in (401, 403):
                detail += f" (check the key in ${route.api_key_env})"
            raise _Fatal(detail) from None
        except openai.APIResponseValidationError as exc:
            raise _Retryable("malformed", scrub(f"malformed response: {exc}")) from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # JSON that does not parse, or parses to something that is not a completion
            raise _Retryable("malformed", scrub(f"malformed response: {exc}")) from None
        except _TRANSPORT_ERRORS as exc:
            name = type(exc).__name__
            kind = "timeout" if "Timeout" in name else "connection"
            raise _Retryable(kind, scrub(f"{name} while reading the answer: {exc}")) from None

    def _headers(self, request: ChatRequest) -> dict[str, str]:
        return {SAMPLE_HEADER: str(request.sample)}

    async def _plain(self, route: _Route, request: ChatRequest, *, retries: int) -> Completion:
        t0 = time.perf_counter()
        data: Any = await route.client().post(
            "/chat/completions",
            body=request.body(),
            cast_to=object,
            options={"headers": self._headers(request)},
        )
        latency = time.perf_counter() - t0
        if isinstance(data, str):
            data = json.loads(data)  # a server that forgot the JSON content type
        if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
            raise ValueError("response has no 'choices' list")
        if not data["choices"]:
            raise ValueError("response has an empty 'choices' list")
        choice = data["choices"][0]
        message = choice["message"]
        content = message.get("content")
        if content is not None and not isinstance(content, str):
            raise ValueError("message content is not text")
        usage = data.get("usage") or {}
        return Completion(
            text=self.secrets.scrub(content or ""),
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
            latency_s=latency,
            ttft_s=None,
            retries=retries,
            served_model=data.get("model") if isinstance(data.get("model"), str) else None,
            backend="openai",
        )

    async def _streamed(self, route: _Route, request: ChatRequest, *, retries: int) -> Completion:
        body = request.body()
        extra: dict[str, Any] = {}
        if self.settings.stream_usage:
            extra["stream_options"] = {"include_usage": True}
        t0 = time.perf_counter()
        ttft: float | None = None
        parts: list[str] = []
        finish: str | None = None
        served: str | None = None
        prompt_tokens = completion_tokens = None
        stream = await route.client().chat.completions.create(
            **body, stream=True, extra_headers=self._headers(request), **extra
        )
        try:
            async for chunk in stream:
                served = served or getattr(chunk, "model", None)
                if chunk.usage is not None:
                    prompt_tokens = chunk.usage.prompt_tokens
                    completion_tokens = chunk.usage.completion_tokens
                for choice in chunk.choices or ():
                    text = choice.delta.content if choice.delta is not None else None
                    if text:
                        if ttft is None:
                            ttft = time.perf_counter() - t0
                        parts.append(text)
                    if choice.finish_reason:
                        finish = choice.finish_reason
        finally:
            await stream.close()
        if finish is None:
            raise ValueError("stream ended without a finish_reason")
        return Completion(
            text=self.secrets.scrub("".join(parts)),
            finish_reason=finish,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.perf_counter() - t0,
            ttft_s=ttft,
            retries=retries,
            served_model=served,
            backend="openai",
        )


async def sdk_cpu_ms_per_call(n: int = 1000) -> float:
    """Client CPU ms the SDK alone spends on one non-streamed call, with no network.

    The same ``post`` as :meth:`OpenAIBackend._plain`, answered by an in-memory
    transport: request options, header merging, URL joining, the httpx client
    layers and response wrapping, i.e. the floor that no transport or cache change
    can remove from a request (reported by benchmarks/bench_llm.py).
    """
    import resource

    try:
        import httpx2 as http
    except ImportError:  # an SDK before 3.x, on httpx
        import httpx as http  # type: ignore[no-redef]

    reply = json.dumps(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "4"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10},
        }
    ).encode()

    def answer(_request: Any) -> Any:
        return http.Response(200, content=reply, headers={"content-type": "application/json"})

    client = openai.AsyncOpenAI(
        base_url="http://127.0.0.1:9/v1",
        api_key="none",
        max_retries=0,
        http_client=http.AsyncClient(transport=http.MockTransport(answer)),
    )
    body = {"model": "m", "messages": [{"role": "user", "content": "2 + 2?"}], "max_tokens": 16}

    async def calls(k: int) -> None:
        for _ in range(k):
            await client.post(
                "/chat/completions",
                body=body,
                cast_to=object,
                options={"headers": {SAMPLE_HEADER: "0"}},
            )

    try:
        await calls(min(n, 100))  # warm-up
        usage = resource.getrusage(resource.RUSAGE_SELF)
        t0 = usage.ru_utime + usage.ru_stime
        await calls(n)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return (usage.ru_utime + usage.ru_stime - t0) / n * 1e3
    finally:
        await client.close()


def _dropped(exc: BaseException) -> bool:
    """Whether a "timeout" was really a dropped connection.

    The SDK's aiohttp transport maps every aiohttp connection error, a server
    closing or resetting the connection included, to a connect timeout; the cause
    chain still says which it was.
    """
    seen: BaseException | None = exc
    for _ in range(8):
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if seen is None:
            return False
        if isinstance(seen, ConnectionError) or type(seen).__name__ in (
            "ServerDisconnectedError",
            "ClientOSError",
        ):
            return True
    return False


def _clients_for(
    url: str,
    key: str,
    limit: int,
    settings: LLMSettings,
    *,
    transport: HttpTransport,
    clients_per_connections: int,
) -> list[openai.AsyncOpenAI]:
    """The SDK clients serving one (endpoint, key): one on aiohttp, ``limit / k`` on httpx.

    The aiohttp session inside is created lazily on the first request, so the
    clients belong to the event loop that first uses them (build the backend in it).
    """
    # the pool timeout is a connect timeout: aiohttp counts opening a connection
    # against it, and with the read timeout there (the SDK's default) a loaded machine
    # timed requests out before they were sent
    timeout = openai.Timeout(
        settings.timeout_s, connect=settings.connect_timeout_s, pool=settings.connect_timeout_s
    )
    if transport == "aiohttp":
        try:
            http = openai.DefaultAioHttpClient(timeout=timeout)
        except RuntimeError as exc:  # the SDK without its aiohttp extra
            raise ConfigError(
                f"{exc}: pip install 'openai[aiohttp]' (a dependency of benchcurate)"
            ) from None
        return [
            openai.AsyncOpenAI(
                base_url=url, api_key=key, max_retries=0, timeout=timeout, http_client=http
            )
        ]
    n = max(1, math.ceil(limit / clients_per_connections))
    return [
        openai.AsyncOpenAI(base_url=url, api_key=key, max_retries=0, timeout=timeout)
        for _ in range(n)
    ]


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
