"""A small OpenAI-compatible chat-completions server for tests and benchmarks.

It runs an asyncio HTTP/1.1 server (keep-alive, chunked SSE streaming) in a
background thread on 127.0.0.1 with an ephemeral port, so the real ``openai``
client can be pointed at it by base URL: nothing is patched.

Why asyncio and not ``http.server``: the benchmark needs 64 concurrent slow
(50 ms) requests at > 1000 req/s; one thread per connection would spend the
budget on the GIL. The server can also run as its own process
(``python -m tests.llm.fake_openai_server --latency 0.05``) so that it does not
share the client's GIL at all.

Answers are deterministic per (prompt, sample index): the ``answer`` callable
decides the text, e.g. from a scripted answer key, so grading is checkable.
The sample index comes from the ``X-Benchcurate-Sample`` header (then the
``seed`` field, then 0).

Faults are injected per attempt, deterministically from (seed, key, attempt):
``429`` (with Retry-After), ``500`` (whose body echoes the Authorization header,
so tests can check that secrets are scrubbed from errors), ``slow`` (sleeps
past the client timeout, then drops the connection), ``malformed`` (invalid
JSON with status 200, or an invalid SSE event when streaming) and ``reset``
(TCP reset; mid-stream when streaming).

Counters per cache key: requests (every attempt), answered (a full 200 answer
was written), faults; ``GET /stats`` returns the totals (for a server in another
process).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = ("429", "500", "slow", "malformed", "reset")

AnswerFn = Callable[[dict[str, Any], int], "str | tuple[str, str]"]
"""(request body, sample) -> the reply text, or (text, finish_reason) e.g. a replayed
real reply that hit max_tokens ("length")."""
"""(request body, sample index) -> completion text."""


def _default_answer(body: dict[str, Any], sample: int) -> str:
    return f"ok {sample}"


def request_key(body: dict[str, Any], sample: int) -> str:
    """The server's identity of a request: model, messages and sample index."""
    blob = json.dumps(
        {"model": body.get("model"), "messages": body.get("messages"), "sample": sample},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class FaultPlan:
    """Which faults to inject and how often."""

    rate: float = 0.0
    """Probability that an attempt fails."""
    kinds: tuple[str, ...] = FAULT_KINDS
    retry_after: str = "0.05"
    """Value of the Retry-After header on 429 answers (seconds)."""
    slow_s: float = 2.0
    """How long a ``slow`` fault sleeps before dropping the connection."""
    max_faults_per_key: int | None = 3
    """After this many faults on one key, always answer (keeps tests bounded)."""
    seed: int = 0


@dataclass
class Stats:
    """Counters, guarded by the server's lock."""

    requests: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    fault_kinds: Counter[str] = field(default_factory=Counter)
    auth_headers: set[str] = field(default_factory=set)
    timeline: list[tuple[str, float, str]] = field(default_factory=list)
    """(key, monotonic time, outcome) per attempt."""


class FakeOpenAIServer:
    """OpenAI-compatible ``POST /v1/chat/completions`` (streaming and not), with faults."""

    def __init__(
        self,
        answer: AnswerFn | None = None,
        *,
        latency_s: float = 0.0,
        faults: FaultPlan | None = None,
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_timeline: bool = True,
        echo_auth: bool = False,
    ) -> None:
        self.answer = answer or _default_answer
        self.latency_s = latency_s
        self.faults = faults or FaultPlan()
        self.api_key = api_key
        self.host = host
        self.port = port
        self.record_timeline = record_timeline
        self.echo_auth = echo_auth
        """Append the Authorization header to every answer (to test that keys are scrubbed)."""
        self.stats = Stats()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._writers: set[asyncio.StreamWriter] = set()

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        self._thread = threading.Thread(target=self._run, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake OpenAI server did not start")
        return self

    def stop(self) -> None:
        if self._loop is None:
            return
        fut = asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        with contextlib.suppress(Exception):
            fut.result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)

        async def boot() -> None:
            self._server = await asyncio.start_server(
                self._handle, self.host, self.port, backlog=1024, limit=2**22
            )
            self.port = self._server.sockets[0].getsockname()[1]

        loop.run_until_complete(boot())
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            with contextlib.suppress(Exception):
                w.close()

    # ---- counters ---------------------------------------------------------------------------

    def snapshot(self) -> Stats:
        """A copy of the counters (safe to read while the server runs)."""
        with self._lock:
            return Stats(
                requests=Counter(self.stats.requests),
                answered=Counter(self.stats.answered),
                faults=Counter(self.stats.faults),
                fault_kinds=Counter(self.stats.fault_kinds),
                auth_headers=set(self.stats.auth_headers),
                timeline=list(self.stats.timeline),
            )

    def reset_stats(self) -> None:
        with self._lock:
            self.stats = Stats()

    def _note(self, key: str, outcome: str) -> None:
        with self._lock:
            if outcome == "answered":
                self.stats.answered[key] += 1
            elif outcome != "request":
                self.stats.faults[key] += 1
                self.stats.fault_kinds[outcome] += 1
            if self.record_timeline:
                self.stats.timeline.append((key, time.monotonic(), outcome))

    def _fault_for(self, key: str, attempt: int) -> str | None:
        plan = self.faults
        if plan.rate <= 0 or not plan.kinds:
            return None
        with self._lock:
            if (
                plan.max_faults_per_key is not None
                and self.stats.faults[key] >= plan.max_faults_per_key
            ):
                return None
        digest = hashlib.sha256(f"{plan.seed}:{key}:{attempt}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        if u >= plan.rate:
            return None
        return plan.kinds[int.from_bytes(digest[8:12], "big") % len(plan.kinds)]

    # ---- HTTP ------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length", "0"))
                raw = await reader.readexactly(length) if length else b""
                keep = await self._dispatch(method, path, headers, raw, writer)
                if not keep:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            self._writers.discard(writer)
            with contextlib.suppress(Exception):
                writer.close()

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        body: bytes,
        *,
        content_type: str = "application/json",
        extra: dict[str, str] | None = None,
    ) -> None:
        reason = {200: "OK", 401: "Unauthorized", 404: "Not Found", 429: "Too Many Requests"}.get(
            status, "Internal Server Error" if status >= 500 else "Error"
        )
        head = [
            f"HTTP/1.1 {status} {reason}",
            f"Content-Type: {content_type}",
            f"Content-Length: {len(body)}",
        ]
        head += [f"{k}: {v}" for k, v in (extra or {}).items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        await writer.drain()

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    async def _dispatch(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        raw: bytes,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if method == "GET" and path.rstrip("/") == "/stats":
            with self._lock:
                totals = {
                    "requests": sum(self.stats.requests.values()),
                    "answered": sum(self.stats.answered.values()),
                    "faults": sum(self.stats.faults.values()),
                }
            await self._send(writer, 200, json.dumps(totals).encode())
            return True
        if method != "POST" or path.rstrip("/") not in (
            "/v1/chat/completions",
            "/chat/completions",
        ):
            await self._send(writer, 404, b'{"error": {"message": "not found"}}')
            return True
        auth = headers.get("authorization", "")
        with self._lock:
            self.stats.auth_headers.add(auth)
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            await self._send(writer, 401, b'{"error": {"message": "bad key"}}')
            return True
        body = json.loads(raw or b"{}")
        sample = int(headers.get("x-benchcurate-sample", body.get("seed") or 0))
        key = request_key(body, sample)
        with self._lock:
            self.stats.requests[key] += 1
            attempt = self.stats.requests[key]
        stream = bool(body.get("stream"))
        fault = self._fault_for(key, attempt)
        if fault == "429":
            self._note(key, fault)
            await self._send(
                writer,
                429,
                b'{"error": {"message": "rate limited", "type": "rate_limit"}}',
                extra={"Retry-After": self.faults.retry_after},
            )
            return True
        if fault == "500":
            self._note(key, fault)
            msg = json.dumps({"error": {"message": f"internal error; you sent {auth!r}"}})
            await self._send(writer, 500, msg.encode())
            return True
        if fault == "slow":
            self._note(key, fault)
            await asyncio.sleep(self.faults.slow_s)
            self._reset(writer)
            return False
        if fault == "reset" and not stream:
            self._note(key, fault)
            self._reset(writer)
            return False
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        answered = self.answer(body, sample)
        text, finish = (answered, "stop") if isinstance(answered, str) else answered
        if self.echo_auth:
            text += f" (debug: you sent {auth})"
        model = body.get("model", "model")
        prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
        completion_tokens = len(text.split())
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if fault == "malformed" and not stream:
            self._note(key, fault)
            await self._send(writer, 200, b'{"id": "chatcmpl-x", "choices": [{"index": 0, "mess')
            return True
        if not stream:
            payload = {
                "id": f"chatcmpl-{key[:12]}",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": finish,
                    }
                ],
                "usage": usage,
            }
            await self._send(writer, 200, json.dumps(payload).encode())
            self._note(key, "answered")
            return True
        return await self._stream(writer, key, model, text, usage, body, fault, finish)

    async def _stream(
        self,
        writer: asyncio.StreamWriter,
        key: str,
        model: str,
        text: str,
        usage: dict[str, int],
        body: dict[str, Any],
        fault: str | None,
        finish: str = "stop",
    ) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
        )

        def chunk(data: str) -> bytes:
            raw = f"data: {data}\n\n".encode()
            return f"{len(raw):x}\r\n".encode() + raw + b"\r\n"

        def delta(content: str | None, finish: str | None = None, role: bool = False) -> str:
            d: dict[str, Any] = {}
            if role:
                d["role"] = "assistant"
            if content is not None:
                d["content"] = content
            return json.dumps(
                {
                    "id": f"chatcmpl-{key[:12]}",
                    "object": "chat.completion.chunk",
                    "created": 0,
                    "model": model,
                    "choices": [{"index": 0, "delta": d, "finish_reason": finish}],
                }
            )

        half = max(1, len(text) // 2)
        writer.write(chunk(delta("", role=True)))
        writer.write(chunk(delta(text[:half])))
        await writer.drain()
        if fault == "reset":
            self._note(key, fault)
            self._reset(writer)
            return False
        if fault == "malformed":
            self._note(key, fault)
            writer.write(chunk('{"id": "chatcmpl-x", "choices": [{"delta": {"cont'))
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        writer.write(chunk(delta(text[half:])))
        writer.write(chunk(delta(None, finish=finish)))
        if (body.get("stream_options") or {}).get("include_usage"):
            usage_chunk = {
                "id": f"chatcmpl-{key[:12]}",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": model,
                "choices": [],
                "usage": usage,
            }
            writer.write(chunk(json.dumps(usage_chunk)))
        writer.write(chunk("[DONE]"))
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        self._note(key, "answered")
        return True


def main(argv: list[str] | None = None) -> None:
    """Run the server in the foreground (used by benchmarks/bench_llm.py)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    args = parser.parse_args(argv)
    server = FakeOpenAIServer(latency_s=args.latency, port=args.port, record_timeline=False)
    server.start()
    print(f"PORT {server.port}", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
