"""A scripted benchmark whose right answers the fake server knows, and a project around it.

Items are of three answer types (numeric with thousands separators and fractions,
multiple choice, exact); the server answers each (model, item, sample) right or
wrong by a fixed rule, in varied formats, so a collection's n_correct can be
checked cell by cell against :func:`expected_cells`.
"""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from curation.io.tables import write_table
from curation.schemas import conform
from tests.llm.fake_openai_server import FakeOpenAIServer, FaultPlan

API_KEY = "sk-benchcurate-TEST-9f8e7d6c5b4a39281706"
BASE_URL_ENV = "BENCHCURATE_TEST_BASE_URL"
API_KEY_ENV = "BENCHCURATE_TEST_API_KEY"
SKILL = {"weak": 3, "mid": 5, "strong": 8}
"""Out of 10: how often each model is right (by a hash rule)."""
_ITEM = re.compile(r"\[item (q\d+)\]")


def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def make_items(n: int, *, benchmark: str = "scripted") -> list[dict[str, Any]]:
    """``n`` items cycling numeric / choice / exact, with awkward reference formats."""
    items = []
    for i in range(n):
        item = f"q{i:04d}"
        kind = ("numeric", "choice", "exact")[i % 3]
        choices = None
        if kind == "numeric":
            value = Fraction(1000 + 37 * i, 1 if i % 4 else 4)
            answer = f"{value.numerator:,}" if value.denominator == 1 else str(value)
            question = f"[item {item}] Compute the value of item {i}."
        elif kind == "choice":
            choices = [f"option {c} of {i}" for c in "ABCD"]
            answer = "ABCD"[i % 4]
            question = f"[item {item}] Which option is right for item {i}?"
        else:
            answer = f"token-{i}-{'x' * (i % 5)}"
            question = f"[item {item}] Repeat the secret token of item {i}."
        items.append(
            {
                "benchmark": benchmark,
                "item": item,
                "domain": "math",
                "question": question,
                "answer": answer,
                "answer_type": kind,
                "choices": choices,
                "source": "tests",
                "license": "MIT",
                "origin": "original",
                "metadata": "{}",
            }
        )
    return items


def is_right(model: str, item: str, sample: int) -> bool:
    """The answer key: whether ``model`` answers ``item`` right on draw ``sample``."""
    return _h("right", model, item, sample) % 10 < SKILL[model]


def scripted_answer(items: list[dict[str, Any]]):
    """The server's answer function: right or wrong per :func:`is_right`, varied formats."""
    by_id = {r["item"]: r for r in items}
    model_of = {f"test/{m}": m for m in SKILL}

    def answer(body: dict[str, Any], sample: int) -> str:
        prompt = body["messages"][-1]["content"]
        item = by_id[_ITEM.search(prompt).group(1)]
        model = model_of[body["model"]]
        right = is_right(model, item["item"], sample)
        style = _h("style", model, item["item"], sample) % 4
        ref = item["answer"]
        if item["answer_type"] == "numeric":
            value = Fraction(ref.replace(",", ""))
            if not right:
                value += 7
            if value.denominator != 1:
                text = f"\\frac{{{value.numerator}}}{{{value.denominator}}}"
                shown = [f"\\boxed{{{text}}}", f"\\boxed{{{float(value)}}}"][style % 2]
                return f"Working... so the result is {shown}."
            n = value.numerator
            return [
                f"Let me think. 12 apples, then... The answer is \\boxed{{{n:,}}}.",
                f"Step 1: 3 + 4 = 7.\nThe answer is ${n}.",
                f"We get {n} dollars in total.\n#### {n:,}",
                f"Final answer: {n} units",
            ][style]
        if item["answer_type"] == "choice":
            letter = ref if right else "ABCD"[("ABCD".index(ref) + 1) % 4]
            return [
                f"The answer is ({letter}).",
                f"After comparing options: Answer: {letter}",
                f"\\boxed{{{letter}}}",
                f"I think option {letter} fits.\nAnswer: {letter}",
            ][style]
        token = ref if right else ref + "-wrong"
        return [
            f"[ANSWER]{token}[/ANSWER]",
            f"Sure. [ANSWER] {token} [/ANSWER]",
            f"The secret is \\boxed{{{token}}}",
            f"[ANSWER]{token}[/ANSWER]",
        ][style]

    return answer


def expected_cells(items: list[dict[str, Any]], models: list[str], trials: int) -> set[tuple]:
    """(model, item, n_trials, n_correct) the collection must produce."""
    return {
        (m, r["item"], trials, sum(is_right(m, r["item"], s) for s in range(trials)))
        for m in models
        for r in items
    }


def write_project(
    root: Path,
    items: list[dict[str, Any]],
    *,
    models: list[dict[str, Any]],
    collect: dict[str, Any] | None = None,
    llm: dict[str, Any] | None = None,
    benchmark: str = "scripted",
) -> Path:
    """A project folder with ingested items and params for collection."""
    df = conform(pl.DataFrame(items, infer_schema_length=None), "item")
    write_table(df, root / "data" / "items" / f"{benchmark}.parquet", "item")
    params = {
        "benchmarks": {
            benchmark: {
                "domain": "math",
                "license": "MIT",
                "source": "tests",
                "items": {"path": "raw/items.jsonl", "answer_type": "numeric"},
            }
        },
        "panel": {"models": models},
        "collect": {"enabled": True, "backend": "openai", "seed": 11, "progress": False}
        | (collect or {}),
        "llm": {
            "timeout_s": 5,
            "max_retries": 10,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.2,
            "cache": ".llm-cache/completions.sqlite",
        }
        | (llm or {}),
    }
    (root / "params.yaml").write_text(json.dumps(params, indent=1))  # JSON is YAML
    return root


def panel(
    names: list[str], *, trials: int = 4, concurrency: int = 16, stream: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "model_id": f"test/{name}",
            "base_url_env": BASE_URL_ENV,
            "api_key_env": API_KEY_ENV,
            "temperature": 0.7,
            "max_tokens": 256,
            "trials": trials,
            "concurrency": concurrency,
            "stream": name in stream,
            "input_price_per_1m": 0.5,
            "output_price_per_1m": 1.5,
        }
        for name in names
    ]


@pytest.fixture
def server_factory():
    """Start fake servers; all are stopped at the end of the test."""
    started: list[FakeOpenAIServer] = []

    def start(items=None, *, faults: FaultPlan | None = None, **kw) -> FakeOpenAIServer:
        answer = scripted_answer(items) if items is not None else None
        server = FakeOpenAIServer(answer, faults=faults, api_key=API_KEY, **kw).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def llm_env(monkeypatch: pytest.MonkeyPatch):
    """Point the panel's environment variables at a server."""

    def point(server: FakeOpenAIServer, *, key: str = API_KEY) -> None:
        monkeypatch.setenv(BASE_URL_ENV, server.base_url)
        monkeypatch.setenv(API_KEY_ENV, key)

    monkeypatch.setenv("TQDM_DISABLE", "1")
    return point
