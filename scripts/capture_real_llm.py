"""Capture real model outputs (rewriter and judge) from the local llama-servers as fixtures.

Runs BenchFill's rewrite prompt and the judge's real code path (:class:`LLMJudge`, solve ->
verdict -> repair) on GSM8K and MATH items against the servers that
``scripts/local-models.sh start`` runs, and writes every call's request and raw reply to
``tests/fixtures/real_llm/{rewriter,judge}.jsonl`` (model, date, finish_reason). The
tests replay them through the local fake OpenAI server, so CI exercises the parse and
repair paths on real messy output without building llama.cpp.

    eval "$(bash scripts/local-models.sh env)"
    nice -n 19 python scripts/capture_real_llm.py --rewrites 50 --judged 40
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from merge_params import merge  # noqa: E402

from curation.fill._memory import MemoryEntry  # noqa: E402
from curation.fill._prompts import load_prompts, rewrite_messages  # noqa: E402
from curation.items import ingest_benchmark  # noqa: E402
from curation.judge import LLMJudge  # noqa: E402
from curation.llm import (  # noqa: E402
    ChatRequest,
    Completion,
    LLMSettings,
    OpenAIBackend,
    Sampling,
    require_panel,
)
from curation.params_model import validate_params  # noqa: E402

REPAIR_MARK = "Your reply could not be used"


class Recorder:
    """A Backend that passes every call through and keeps (request, completion)."""

    def __init__(self, inner: Any, sink: list[tuple[ChatRequest, Completion]]) -> None:
        self.inner, self.sink = inner, sink
        self.name, self.namespace = inner.name, inner.namespace

    def max_in_flight(self) -> int:
        return 2

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def complete(self, request: ChatRequest) -> Completion:
        completion = await self.inner.complete(request)
        self.sink.append((request, completion))
        return completion


def _record(kind: str, request: ChatRequest, c: Completion, context: dict[str, Any]) -> dict:
    return {
        "kind": kind,
        "model": request.model_id,
        "date": dt.date.today().isoformat(),
        "request": {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.sampling.max_tokens,
            "temperature": request.sampling.temperature,
        },
        "reply": c.text,
        "finish_reason": c.finish_reason,
        "completion_tokens": c.completion_tokens,
        "latency_s": round(c.latency_s, 2),
        "context": context,
    }


_PROBLEM = re.compile(r"<problem>\n(.*?)\n</problem>", re.S)


def trim(record: dict[str, Any]) -> dict[str, Any]:
    """The record without its prompt text (rebuilt by the code from the context), keeping
    what the parsers and the replay need: reply, finish_reason, context, and a prompt hash.
    A rewriter record gets its parent's question from the prompt."""
    request = record["request"]
    messages = request.pop("messages", None)
    if messages is None:
        return record  # trimmed already
    blob = json.dumps(messages, ensure_ascii=False, sort_keys=True).encode("utf-8")
    request["n_messages"] = len(messages)
    request["prompt_sha256"] = hashlib.sha256(blob).hexdigest()
    if record["kind"] == "rewriter" and "parent_question" not in record["context"]:
        found = _PROBLEM.search(messages[-1]["content"])
        record["context"]["parent_question"] = found.group(1) if found else None
    return record


def _trim_files(folder: Path) -> None:
    for name in ("rewriter.jsonl", "judge.jsonl"):
        path = folder / name
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
        path.write_text(
            "".join(json.dumps(trim(r), ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        print(f"{path}: {len(rows)} records, {path.stat().st_size} bytes")


def _items(params: dict[str, Any], benchmark: str) -> list[dict[str, Any]]:
    spec = validate_params(params).benchmark(benchmark)
    return list(ingest_benchmark(benchmark, spec).iter_rows(named=True))


async def _rewrites(
    items: list[dict[str, Any]],
    models: list[Any],
    llm: LLMSettings,
    n: int,
    sink: Path,
    *,
    start: int = 0,
    kind: str = "benchfill",
) -> list[dict]:
    """``n`` rewrites, model by turn; each record is appended to ``sink`` as it arrives
    (a slow capture that is stopped keeps what it has)."""
    prompts = load_prompts()
    backend = OpenAIBackend(models, llm)
    # one gate per model: a slow server must not hold the fast ones' turns
    gates = {m.name: asyncio.Semaphore(2) for m in models}
    out: list[dict] = []

    def entry(row: dict[str, Any], z: float) -> MemoryEntry:
        return MemoryEntry(
            item=row["item"],
            question=row["question"],
            answer=row["answer"],
            answer_type=row["answer_type"],
            choices=None,
            b=z,
            se=0.2,
            z=z,
            z_low=None,
            z_high=None,
            origin="benchmark",
        )

    async def one(i: int) -> None:
        row, model = items[i], models[i % len(models)]
        refs = [entry(items[(i + k) % len(items)], 0.3 + 0.1 * k) for k in range(1, 5)]
        messages = rewrite_messages(
            prompts,
            kind=kind,
            parent=entry(row, 0.4),
            parent_question=row["question"],
            target_z=0.55,
            references=refs,
            reference_chars=300,
        )
        request = ChatRequest(
            model=model.name,
            model_id=model.model_id,
            messages=messages,
            sampling=Sampling(temperature=1.0, max_tokens=model.max_tokens, seed=i),
            stage="fill",
            item=row["item"],
        )
        async with gates[model.name]:
            c = await backend.complete(request)
        ctx = {"answer_type": row["answer_type"], "parent_answer": row["answer"], "prompt": kind}
        out.append(_record("rewriter", request, c, ctx))
        with open(sink, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(trim(dict(out[-1])), ensure_ascii=False) + "\n")
        print(
            f"rewrite {len(out)}/{n} {model.name} {c.finish_reason} {c.latency_s:.0f}s", flush=True
        )

    try:
        await asyncio.gather(*(one(i % len(items)) for i in range(start, start + n)))
    finally:
        await backend.aclose()
    return out


JUDGE_GROUPS: tuple[tuple[str, str], ...] = (
    ("qwen2.5-coder-0.5b", "json_object"),
    ("gemma3-270m", "json_object"),
    ("smollm2-135m", "none"),
    ("qwen2.5-coder-0.5b", "none"),
)
"""(panel model, judge.response_format) per group of candidates: the pipeline's setting
(``json_object``, grammar-constrained by llama-server) and free text, where real
messiness (prose, fences, cut-offs) shows."""


async def _judged_group(
    params: dict[str, Any], pairs: list[tuple[dict, dict]], model: Any, fmt: str
) -> list[dict]:
    local = dict(params)
    local["judge"] = dict(params["judge"]) | {
        "response_format": fmt,
        "model": {
            "name": "judge",
            "model_id": model.model_id,
            "base_url_env": model.base_url_env,
            "api_key_env": model.api_key_env,
            "temperature": 0.0,
            "max_tokens": params["judge"]["model"].get("max_tokens", 256),
            "concurrency": 2,
        },
    }
    checked = validate_params(local)
    settings = checked.judge.resolved(checked.collect.backend)
    calls: list[tuple[ChatRequest, Completion]] = []
    judge = LLMJudge(settings, llm=checked.llm)
    judge._backend = Recorder(judge.backend(), calls)
    async with judge:
        await judge.assess_many(pairs)
    by_q = {p[0]["question"]: p for p in pairs}
    out = []
    for request, c in calls:
        user = request.messages[1].content
        pair = next((v for q, v in by_q.items() if q in user), None)
        last = request.messages[-1].content
        step = (
            "judge_verdict"
            if any(
                m.role == "user" and m.content.startswith("Now compare") for m in request.messages
            )
            else "judge_solve"
        )
        ctx = {
            "repair": last.startswith(REPAIR_MARK),
            "response_format": fmt,
            "candidate": None
            if pair is None
            else {
                k: pair[0][k] for k in ("candidate", "question", "answer", "answer_type", "change")
            },
            "parent": None
            if pair is None
            else {k: pair[1][k] for k in ("question", "answer", "answer_type")},
        }
        out.append(_record(step, request, c, ctx))
    print(f"judge {model.name} {fmt}: {len(pairs)} candidates, {len(out)} calls", flush=True)
    return out


async def _judged(params: dict[str, Any], items: list[dict[str, Any]], n: int) -> list[dict]:
    models = {m.name: m for m in require_panel(validate_params(params).panel)}
    groups = [(models[name], fmt) for name, fmt in JUDGE_GROUPS if name in models]
    pairs: list[list[tuple[dict, dict]]] = [[] for _ in groups]
    for i, row in enumerate(items[:n]):
        cand = dict(row) | {"candidate": f"c{i}", "change": "as the parent", "parent": row["item"]}
        if i % 3 == 2 and row["answer_type"] == "numeric":
            cand["answer"] = f"{row['answer']}1"  # a wrong reference, to see what it says
        pairs[i % len(groups)].append((cand, row))
    done = await asyncio.gather(
        *(_judged_group(params, p, m, fmt) for (m, fmt), p in zip(groups, pairs, strict=True))
    )
    return [r for group in done for r in group]


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rewrites", type=int, default=50)
    ap.add_argument("--judged", type=int, default=40, help="candidates judged (2+ calls each)")
    ap.add_argument("--out", default="tests/fixtures/real_llm")
    ap.add_argument("--start", type=int, default=0, help="first item of the rewrites")
    ap.add_argument(
        "--prompt",
        choices=("benchfill", "baseline"),
        default="benchfill",
        help="BenchFill's prompt (4 references) or the baseline's (shorter: no references)",
    )
    ap.add_argument("--append", action="store_true", help="append to rewriter.jsonl")
    ap.add_argument("--trim-only", action="store_true", help="only trim the files in --out")
    args = ap.parse_args()
    if args.trim_only:
        _trim_files(Path(args.out))
        return 0
    base = yaml.safe_load(open("params.yaml", encoding="utf-8"))
    local = merge(base, yaml.safe_load(open("params.local.yaml", encoding="utf-8")))
    local["llm"]["cache"] = str(Path(tempfile.mkdtemp()) / "capture.sqlite")
    items = _items(base, "gsm8k")[:30] + _items(base, "math-l5")[:30]
    items = [items[i // 2] if i % 2 == 0 else items[30 + i // 2] for i in range(60)]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    checked = validate_params(local)
    models = require_panel(checked.panel)
    llm = checked.llm
    if args.judged:
        recs = asyncio.run(_judged(local, items, args.judged))
        with open(out / "judge.jsonl", "w", encoding="utf-8") as fh:
            for r in recs:
                fh.write(json.dumps(trim(r), ensure_ascii=False) + "\n")
        print(f"judge: {len(recs)} outputs -> {out / 'judge.jsonl'}")
    if args.rewrites:
        if not args.append:
            (out / "rewriter.jsonl").write_text("", encoding="utf-8")
        recs = asyncio.run(
            _rewrites(
                items,
                models,
                llm,
                args.rewrites,
                out / "rewriter.jsonl",
                start=args.start,
                kind=args.prompt,
            )
        )
        print(f"rewriter: {len(recs)} outputs -> {out / 'rewriter.jsonl'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
