"""Throughput of the LLM layer against a local OpenAI-compatible server, and a cached rerun.

    nice .venv/bin/python benchmarks/bench_llm.py [--latency 0.05] [--rounds 20]
        [--repeats 3] [--conc 4 16 64] [--no-stage]

The fake server (tests/llm/fake_openai_server.py) runs in its own process with a
fixed latency L per request, so the client's work is measured, not the server's
share of the GIL. For each concurrency C, four clients send C x rounds distinct
requests each, interleaved and repeated (``--repeats``, medians), in one run:

* ``layer/aiohttp``: the real path — OpenAIBackend on openai.AsyncOpenAI with the
  SDK's aiohttp transport (the default), retries, semaphore, the SQLite cache
  committing every answer before it counts, ``run_calls`` scheduling;
* ``layer/aiohttp x2 proc``: the same with ``llm.processes: 2`` (two worker
  processes, each half of the concurrency, one shared cache);
* ``layer/httpx``: the same layer on the SDK's default httpx transport;
* ``raw asyncio``: C keep-alive sockets, one write per request, no SDK or cache —
  what the server and the machine allow in the same run.

Each row gives req/s, the share of the bound C / L, and client CPU ms per request;
then a cached rerun (must make 0 requests) and the SDK's own CPU per call with no
network (``sdk_cpu_ms_per_call``: in-memory transport). ``--no-stage`` skips the
collect stage end to end on the bundled gsm8k items (simulated panel).

Reading the table: every request costs the openai SDK ~0.9-1.1 ms of CPU before
any byte is sent or after it arrives (pydantic request options, header merging,
URL joining, httpx client layers, response wrapping); the aiohttp transport, the
event loop and the layer add ~0.5-1.3 ms more (the httpx transport ~1.5-2.5 ms:
httpcore's pool bookkeeping, h11 and anyio). All C requests of a round come back
together after L and are processed one after another, so one process cannot pass
1000 / (CPU ms per request) req/s: with L = 50 ms, C = 64 needs 1024 req/s for
80% of the bound, i.e. < 1 ms per request in total, which the SDK alone uses up.
``llm.processes`` spreads that CPU over cores, which pays only when cores are
free: on the 2 shared cores of the development machine they rarely were.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from curation.llm import (  # noqa: E402
    ChatRequest,
    CompletionCache,
    HttpTransport,  # noqa: E402
    LLMSettings,
    Message,
    OpenAIBackend,
    PanelModel,
    PlannedCall,
    RunStats,
    Sampling,
    run_calls,
)
from curation.llm._client import sdk_cpu_ms_per_call  # noqa: E402

ENV_URL, ENV_KEY = "BENCH_LLM_BASE_URL", "BENCH_LLM_API_KEY"
openai_version = importlib.metadata.version("openai")


def _server(latency: float) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.llm.fake_openai_server", "--latency", str(latency)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("PORT "):
        proc.kill()
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _server_requests(root: str) -> int:
    with urllib.request.urlopen(f"{root}/stats", timeout=5) as resp:
        return int(json.load(resp)["requests"])


def _calls(n: int, tag: str) -> list[PlannedCall]:
    calls = []
    for i in range(n):
        req = ChatRequest(
            model="m",
            model_id="bench/m",
            messages=(Message("user", f"[{tag}] question {i}: what is {i} + {i}?"),),
            sampling=Sampling(0.0, 16),
            sample=0,
        )
        calls.append(PlannedCall(req, req.key("openai"), "bench", "numeric", str(2 * i), None))
    return calls


async def _run(
    calls: list[PlannedCall],
    c: int,
    cache: CompletionCache,
    env: dict[str, str],
    transport: HttpTransport = "aiohttp",
    processes: int = 1,
) -> tuple[float, float, RunStats]:
    """Wall seconds and client CPU seconds of ``run_calls`` (not the backend's setup)."""
    model = PanelModel(
        name="m", model_id="bench/m", base_url_env=ENV_URL, api_key_env=ENV_KEY, concurrency=c
    )
    settings = LLMSettings(timeout_s=30, max_retries=3, processes=processes)
    backend = OpenAIBackend([model], settings, environ=env, http_transport=transport)
    try:
        t0, cpu0 = time.perf_counter(), _cpu_s()
        results, stats = await run_calls(calls, backend, cache, progress=False)
        return time.perf_counter() - t0, _cpu_s() - cpu0, stats
    finally:
        await backend.aclose()


async def _raw(root: str, c: int, n: int, tag: str) -> tuple[float, float]:
    """A bare asyncio HTTP/1.1 client: C keep-alive connections, one write per request.

    The floor: no SDK, no cache, no retries; it shows what the server and the
    event loop allow on this machine in the same run.
    """
    host, port = root.removeprefix("http://").split(":")
    per = [list(range(k, n, c)) for k in range(c)]

    async def slot(indices: list[int]) -> None:
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            for i in indices:
                body = json.dumps(
                    {
                        "model": "bench/m",
                        "messages": [{"role": "user", "content": f"[{tag}] question {i}"}],
                        "max_tokens": 16,
                    }
                ).encode()
                writer.write(
                    b"POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\n"
                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                    % (host.encode(), len(body), body)
                )
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                reply = json.loads(await reader.readexactly(length))
                assert reply["choices"][0]["message"]["content"]
        finally:
            writer.close()

    t0, cpu0 = time.perf_counter(), _cpu_s()
    await asyncio.gather(*(slot(ix) for ix in per if ix))
    return time.perf_counter() - t0, _cpu_s() - cpu0


@dataclass
class _Cell:
    """Repeated measurements of one (client, C): wall seconds and CPU ms per request."""

    n: int
    walls: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)

    def rate(self) -> float:
        return self.n / statistics.median(self.walls)

    def cpu(self) -> float:
        return statistics.median(self.cpu_ms)


CLIENTS = ("layer/aiohttp", "layer/aiohttp x2 proc", "layer/httpx", "raw asyncio")
"""The collection layer on the SDK's aiohttp transport (the default), the same with
``llm.processes: 2``, the layer on the SDK's default httpx transport, and a bare
asyncio client (the machine's floor)."""
_SETUP: dict[str, tuple[HttpTransport, int]] = {
    "layer/aiohttp": ("aiohttp", 1),
    "layer/aiohttp x2 proc": ("aiohttp", 2),
    "layer/httpx": ("httpx", 1),
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05, help="server latency (s)")
    parser.add_argument("--rounds", type=int, default=20, help="requests per slot (C x rounds)")
    parser.add_argument("--repeats", type=int, default=3, help="paired runs per cell (median)")
    parser.add_argument("--conc", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument(
        "--no-stage", dest="stage", action="store_false", help="skip the collect-stage rows"
    )
    args = parser.parse_args(argv)

    proc, root = _server(args.latency)
    env = {ENV_URL: f"{root}/v1", ENV_KEY: "bench-key"}
    cells: dict[tuple[str, int], _Cell] = {}
    reruns: dict[int, tuple[int, int, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for c in args.conc:
                n = c * args.rounds
                with CompletionCache(Path(tmp) / f"cache-{c}.sqlite") as cache:
                    for name, (t, p) in _SETUP.items():  # warm-up: imports, forkserver
                        warm = _calls(4 * c, f"warm-{name}-{c}")
                        asyncio.run(_run(warm, c, cache, env, t, p))
                    for rep in range(args.repeats):
                        for client in CLIENTS:  # interleaved: the clients share the load
                            tag = f"C{c}-{client}-{rep}"
                            cell = cells.setdefault((client, c), _Cell(n))
                            seen0 = _server_requests(root)
                            if client == "raw asyncio":
                                wall, cpu = asyncio.run(_raw(root, c, n, tag))
                            else:
                                calls = _calls(n, tag)
                                t, p = _SETUP[client]
                                wall, cpu, _ = asyncio.run(_run(calls, c, cache, env, t, p))
                            cell.cpu_ms.append(cpu / n * 1e3)
                            cell.walls.append(wall)
                            made = _server_requests(root) - seen0
                            assert made == n, f"{tag}: expected {n} requests, server saw {made}"
                            if client == "layer/aiohttp" and rep == 0:
                                seen1 = _server_requests(root)
                                wall2, _, stats2 = asyncio.run(_run(calls, c, cache, env))
                                made2 = _server_requests(root) - seen1
                                reruns[c] = (stats2.requests, made2, wall2)
    finally:
        proc.terminate()
        proc.wait(5)
    _print_table(args, cells, reruns)
    if args.stage:
        _stage_rows()


def _print_table(
    args: argparse.Namespace,
    cells: dict[tuple[str, int], _Cell],
    reruns: dict[int, tuple[int, int, float]],
) -> None:
    latency_ms = args.latency * 1000
    print(
        f"\nCollection vs a local OpenAI-compatible server (own process), latency "
        f"{latency_ms:.0f} ms, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}, openai {openai_version}"
    )
    print(
        f"bound = C / latency; req/s = requests / median wall of {args.repeats} paired runs "
        f"of C x {args.rounds} requests; CPU = client process CPU ms per request (median)"
    )
    head = f"{'C':>3} {'bound':>6} |" + "".join(f" {name:>23} |" for name in CLIENTS)
    sub = f"{'':>3} {'req/s':>6} |" + f" {'req/s':>7} {'share':>5} {'CPU ms':>7} |" * len(CLIENTS)
    print(head)
    print(sub)
    print("-" * len(head))
    for c in args.conc:
        bound = c / args.latency
        line = f"{c:>3} {bound:>6.0f} |"
        for name in CLIENTS:
            cell = cells[name, c]
            # worker processes are the forkserver's children: their CPU is not ours to see
            cpu = f"{cell.cpu():>7.2f}" if "proc" not in name else f"{'-':>7}"
            line += f" {cell.rate():>7.0f} {cell.rate() / bound:>5.0%} {cpu} |"
        print(line)
    print("\ncached rerun of the first layer/aiohttp run (must make 0 requests):")
    for c in args.conc:
        planned, made, wall = reruns[c]
        assert planned == made == 0, "a cached rerun made requests"
        print(f"  C = {c:>3}: {made} requests, {wall:.3f} s")
    floor = statistics.median(asyncio.run(sdk_cpu_ms_per_call(1000)) for _ in range(3))
    c = max(args.conc)
    layer = cells["layer/aiohttp", c].cpu()
    raw = cells["raw asyncio", c].cpu()
    bound = c / args.latency
    print(
        f"\nWhere the layer's {layer:.2f} ms per request at C = {c} goes: the openai SDK alone "
        f"(no network, in-memory transport)\n{floor:.2f} ms; the rest ({layer - floor:.2f} ms) "
        "is aiohttp, the event loop and the layer (retries, cache); "
        f"the raw client needs {raw:.2f} ms.\n"
        f"So one process tops out near {1000 / layer:.0f} req/s "
        f"({1000 / layer / bound:.0%} of the C = {c} bound) and could not pass "
        f"{1000 / floor:.0f} req/s ({1000 / floor / bound:.0%}) even with a free transport;"
        "\nllm.processes spreads the SDK's CPU over cores, when cores are free."
    )
    # The C answers of a round arrive together and one event loop handles them one after
    # another, so a process with C/P slots runs near C/P / (L + C/P x cpu) req/s; and all
    # P processes together need rate x cpu cores, beside the server's own share.
    latency = args.latency
    need = 0.8 * bound
    per_slot = 0.25 * latency / (layer / 1000)  # slots per process with queueing <= L/4
    print(
        f"Burst model at C = {c}: {need:.0f} req/s (80%) needs queueing <= L/4, i.e. at most "
        f"{per_slot:.1f} slots per process ({c / per_slot:.1f}+ processes), and "
        f"{need * layer / 1000:.2f} cores for the client alone at {layer:.2f} ms per request "
        f"(this machine: {os.cpu_count()} CPUs, shared with the server)."
    )
    print("Goal: layer/aiohttp (or x2 proc) >= 80% of the bound at C = 64.")


def _stage_rows() -> None:
    """The collect stage end to end on bundled gsm8k items, simulated panel, then cached."""
    items = REPO / "data" / "items" / "gsm8k.parquet"
    if not items.is_file():
        print("\n(no data/items/gsm8k.parquet: run `dvc repro ingest@gsm8k` for the stage rows)")
        return
    import shutil

    from curation.params_model import validate_params
    from pipelines import responses as responses_stage

    models = [
        {"name": f"m{i}", "model_id": f"sim/m{i}", "trials": 4, "ability": -2.0 + 0.8 * i}
        for i in range(6)
    ]
    params = {
        "benchmarks": {
            "gsm8k": {
                "domain": "math",
                "license": "MIT",
                "source": "bench",
                "items": {"path": "unused.jsonl", "answer_type": "numeric"},
            }
        },
        "panel": {"models": models},
        "collect": {"enabled": True, "backend": "simulate", "seed": 1, "progress": False},
        "llm": {"cache": ".llm-cache/completions.sqlite"},
    }
    print("\ncollect stage, simulated backend, gsm8k (1319 items x 6 models x 4 trials)")
    print(f"{'run':>14} {'seconds':>8}  summary")
    here = Path.cwd()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "data" / "items").mkdir(parents=True)
        shutil.copy(items, Path(tmp) / "data" / "items" / "gsm8k.parquet")
        os.chdir(tmp)
        try:
            for label in ("first", "cached rerun"):
                t0 = time.perf_counter()
                text = responses_stage.run(validate_params(params), "gsm8k")
                print(f"{label:>14} {time.perf_counter() - t0:>8.2f}  {text.splitlines()[0]}")
        finally:
            os.chdir(here)


if __name__ == "__main__":
    main()
