"""A scripted fill project and the answer key of a fake OpenAI-compatible server.

The benchmark has six addition problems with known difficulties on a four-model
calibration (abilities -1.5, -0.5, 0.5, 1.5; panel scale, so z = (b + 1.5) / 3).
The server plays two roles, told apart by model id:

* ``test/rewriter`` answers a rewrite request with a child ``[child <id>] What is
  X + Y?`` (answer X + Y) in a JSON object wrapped in prose or a code fence; a few
  outputs are scripted to fail: not JSON at all, or the parent copied unchanged
  (a duplicate);
* the panel models answer a child right with probability σ(θ_model − b_child),
  decided by a hash of (model, child, sample), where b_child is a hash of the child id
  in [-1, 1]: so every child has a known true difficulty (:func:`true_b`).

Everything is a function of the request, so answers are identical across runs.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path
from typing import Any

import polars as pl

from curation.io.tables import write_table
from curation.irt import Calibration
from curation.schemas import conform

BENCH = "scripted"
ABILITIES = {"weak": -1.5, "mid": -0.5, "strong": 0.5, "top": 1.5}
ITEM_Z = [0.05, 0.10, 0.20, 0.70, 0.80, 0.95]
"""Largest gap: [0.2, 0.7], so the first target is z* = 0.45."""
BASE_URL_ENV = "BENCHCURATE_FILL_TEST_URL"
API_KEY_ENV = "BENCHCURATE_FILL_TEST_KEY"
API_KEY = "sk-fill-test-0123456789"
_CHILD = re.compile(r"\[child ([0-9a-f]{10})\] What is (\d+) \+ (\d+)\?")
_PARENT = re.compile(r"<problem>\s*(.*?)\s*</problem>", re.S)


def _h(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16)


def _u(*parts: object) -> float:
    return (_h(*parts) + 0.5) / 16**12


def true_b(child: str) -> float:
    """The scripted child's difficulty (logits): uniform-ish in [-1, 1] by its id."""
    return -1.0 + 2.0 * _u("b", child)


def true_z(child: str) -> float:
    return (true_b(child) + 1.5) / 3.0


def rewrite_kind(body: dict[str, Any], sample: int) -> str:
    """ok, garbage or duplicate: which scripted output a rewrite request gets."""
    r = _h("kind", json.dumps(body["messages"], sort_keys=True), sample) % 10
    return "garbage" if r == 0 else "duplicate" if r == 1 else "ok"


def answer(body: dict[str, Any], sample: int) -> str:
    """The server's answer function (rewriter and panel)."""
    prompt = body["messages"][-1]["content"]
    if body["model"] == "test/rewriter":
        kind = rewrite_kind(body, sample)
        parent = _PARENT.search(prompt).group(1)
        if kind == "garbage":
            return "I am sorry, I cannot rewrite this problem."
        if kind == "duplicate":
            ref = re.search(r"Its reference answer: (\S+)", prompt).group(1)
            obj = {"question": parent, "answer": ref, "answer_type": "numeric", "change": "none"}
            return "Here you go:\n```json\n" + json.dumps(obj) + "\n```"
        cid = f"{_h('child', json.dumps(body['messages']), sample):012x}"[:10]
        x, y = 10 + _h("x", cid) % 90, 10 + _h("y", cid) % 90
        obj = {
            "question": f"[child {cid}] What is {x} + {y}?",
            "answer": x + y,
            "answer_type": "numeric",
            "change": "new numbers",
        }
        return "Sure. " + json.dumps(obj) + " Hope this helps."
    m = _CHILD.search(prompt)
    if m is None:
        return "I do not know."
    cid, x, y = m.group(1), int(m.group(2)), int(m.group(3))
    model = body["model"].removeprefix("test/")
    p = 1.0 / (1.0 + math.exp(-(ABILITIES[model] - true_b(cid))))
    right = _u("draw", model, cid, sample) < p
    return f"The answer is \\boxed{{{x + y if right else x + y + 1}}}."


def items() -> list[dict[str, Any]]:
    return [
        {
            "benchmark": BENCH,
            "item": f"q{i}",
            "domain": "math",
            "question": f"[item q{i}] What is {i} + {10 * i + 3}?",
            "answer": str(11 * i + 3),
            "answer_type": "numeric",
            "choices": None,
            "source": "tests",
            "license": "MIT",
            "origin": "original",
            "metadata": "{}",
        }
        for i in range(len(ITEM_Z))
    ]


def write_project(
    root: Path,
    *,
    fill: dict[str, Any],
    calibrate: dict[str, Any] | None = None,
    n_models: int = 4,
) -> Path:
    """Items, difficulty, calibration and params (calibrate.backend: openai) under ``root``."""
    names = list(ABILITIES)[:n_models]
    cal = Calibration(
        model="1pl",
        abilities={m: ABILITIES[m] for m in names},
        scale={"method": "panel", "theta_min": -1.5, "theta_max": 1.5},
        panel=tuple(names),
        settings={"b_sd": 3.0},
        benchmark=BENCH,
    )
    cal_file = root / "data" / "calibration" / f"{BENCH}.json"
    cal.save(cal_file)
    rows = items()
    write_table(
        conform(pl.DataFrame(rows, infer_schema_length=None), "item"),
        root / "data" / "items" / f"{BENCH}.parquet",
        "item",
    )
    diff = pl.DataFrame(
        {
            "benchmark": BENCH,
            "item": [r["item"] for r in rows],
            "b": [-1.5 + 3 * z for z in ITEM_Z],
            "se": 0.3,
            "a": None,
            "z": ITEM_Z,
            "z_low": [max(0.0, z - 0.1) for z in ITEM_Z],
            "z_high": [min(1.0, z + 0.1) for z in ITEM_Z],
            "n_models": 4,
            "p_mean": 0.5,
            "bound": None,
            "model_type": "1pl",
            "method": "map",
            "interval_source": "laplace",
            "calibration": f"data/calibration/{BENCH}.json",
        }
    )
    write_table(
        conform(diff, "difficulty"), root / "data" / "difficulty" / f"{BENCH}.parquet", "difficulty"
    )
    params = {
        "benchmarks": {
            BENCH: {
                "domain": "math",
                "license": "MIT",
                "source": "tests",
                "items": {"path": "raw/items.jsonl", "answer_type": "numeric"},
            }
        },
        "panel": {
            "models": [
                {
                    "name": m,
                    "model_id": f"test/{m}",
                    "base_url_env": BASE_URL_ENV,
                    "api_key_env": API_KEY_ENV,
                    "temperature": 0.7,
                    "max_tokens": 128,
                    "concurrency": 8,
                }
                for m in names
            ]
        },
        "collect": {"enabled": False, "backend": "simulate", "seed": 3, "progress": False},
        "llm": {
            "timeout_s": 5,
            "max_retries": 3,
            "backoff_base_s": 0.01,
            "backoff_max_s": 0.1,
            "cache": ".llm-cache/completions.sqlite",
        },
        "calibrate": {"backend": "openai", "seed": 5, **(calibrate or {})},
        "fill": {
            "seed": 5,
            "rewriter": {
                "name": "rewriter",
                "model_id": "test/rewriter",
                "base_url_env": BASE_URL_ENV,
                "api_key_env": API_KEY_ENV,
                "concurrency": 8,
            },
            **fill,
        },
    }
    (root / "params.yaml").write_text(json.dumps(params, indent=1))  # JSON is YAML
    return root


class AlternatingJudge:
    """A judge for tests: rejects every other candidate it sees (well_posed = False)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def judge(self, candidate, parent):
        from curation.candidates import Verdict

        self.seen.append((candidate["candidate"], parent["item"]))
        ok = len(self.seen) % 2 == 1
        return Verdict(
            correct=True if ok else None,
            well_posed=ok,
            format_kept=None,
            reason="fine" if ok else "ambiguous wording",
            model="test-judge",
        )


def make_judge(params, *, params_file, benchmark) -> AlternatingJudge:
    """``fill.judge: "fill_fixtures:make_judge"``."""
    return AlternatingJudge()
