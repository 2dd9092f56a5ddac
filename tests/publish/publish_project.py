"""A synthetic project in which `subsets` and `build` can run: two math benchmarks with
skewed difficulties, a calibration, responses, and (optionally) reviewed additions.
Also helpers to run the stages and `curate publish` (``python -m curation.cli publish``)
against a fake Hub."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl

from curation.schemas import conform
from tests.conftest import params_of

N_ITEMS = 40
MODELS = ["m-weak", "m-low", "m-mid", "m-high", "m-top"]

PARAMS = """\
benchmarks:
  toy:
    domain: math
    license: MIT
    source: synthetic test benchmark (tests/publish)
    items: {path: raw/toy.jsonl}
  toy2:
    domain: math
    license: MIT
    source: synthetic reference benchmark
    items: {path: raw/toy2.jsonl}
subsets:
  sizes: [12]
  targets: [uniform]
  reference: {kind: domain}
build:
  version: auto
  card: {language: [en], tags: [synthetic]}
"""


def item_rows(benchmark: str, n: int) -> pl.DataFrame:
    return conform(
        pl.DataFrame(
            {
                "benchmark": [benchmark] * n,
                "item": [f"{benchmark}-{i:03d}" for i in range(n)],
                "domain": ["math"] * n,
                "question": [f"What is {i} + {i}?" for i in range(n)],
                "answer": [str(2 * i) for i in range(n)],
                "answer_type": ["numeric"] * n,
                "source": ["synthetic"] * n,
                "license": ["MIT"] * n,
                "origin": ["original"] * n,
                "metadata": [json.dumps({"level": i % 3}) for i in range(n)],
            }
        ),
        "item",
    )


def skewed_z(n: int) -> np.ndarray:
    """Easy-heavy difficulties (DDM to uniform well above 0.1)."""
    return np.round(((np.arange(n) + 0.5) / n) ** 2.5, 6)


def write_benchmark(root: Path, benchmark: str, *, source: str = "imported") -> None:
    items = item_rows(benchmark, N_ITEMS)
    (root / "data/items").mkdir(parents=True, exist_ok=True)
    items.write_parquet(root / f"data/items/{benchmark}.parquet")
    z = skewed_z(N_ITEMS)
    b = np.log(z.clip(1e-3, 1 - 1e-3) / (1 - z.clip(1e-3, 1 - 1e-3)))
    diff = pl.DataFrame(
        {
            "benchmark": [benchmark] * N_ITEMS,
            "item": items.get_column("item"),
            "b": b,
            "se": [0.3] * N_ITEMS,
            "a": pl.Series([None] * N_ITEMS, dtype=pl.Float64),
            "z": z,
            "z_low": (z - 0.05).clip(0, 1),
            "z_high": (z + 0.05).clip(0, 1),
            "n_models": [len(MODELS)] * N_ITEMS,
            "p_mean": 1 - z,
            "bound": pl.Series([None] * N_ITEMS, dtype=pl.String),
        }
    )
    (root / "data/difficulty").mkdir(parents=True, exist_ok=True)
    diff.write_parquet(root / f"data/difficulty/{benchmark}.parquet")
    (root / "data/calibration").mkdir(parents=True, exist_ok=True)
    abilities = {m: float(t) for m, t in zip(MODELS, np.linspace(-2, 2, len(MODELS)), strict=True)}
    (root / f"data/calibration/{benchmark}.json").write_text(
        json.dumps(
            {
                "format": "benchcurate.irt.calibration/1",
                "benchmark": benchmark,
                "model": "1pl",
                "abilities": abilities,
                "scale": {"method": "logistic", "c": 0.0, "s": 1.0},
                "panel": MODELS,
                "settings": {},
            }
        )
    )
    rows = []
    for mi, model in enumerate(MODELS):
        for i, item in enumerate(items.get_column("item")):
            p = 1.0 / (1.0 + np.exp(-(abilities[model] * 2 - b[i])))
            rows.append(
                {
                    "benchmark": benchmark,
                    "model": model,
                    "item": item,
                    "n_trials": 4,
                    "n_correct": int(round(4 * p * (0.9 + 0.05 * ((mi + i) % 3)))) if p < 1 else 4,
                    "source": source,
                }
            )
    resp = conform(pl.DataFrame(rows), "response").with_columns(
        pl.min_horizontal("n_correct", "n_trials").alias("n_correct")
    )
    (root / "data/responses").mkdir(parents=True, exist_ok=True)
    resp.write_parquet(root / f"data/responses/{benchmark}.parquet")


def accepted_rows(benchmark: str, specs: list[tuple[str, float, str]], **over) -> pl.DataFrame:
    """Reviewed additions: (item id, z, review_status)."""
    n = len(specs)
    df = pl.DataFrame(
        {
            "benchmark": [benchmark] * n,
            "item": [s[0] for s in specs],
            "domain": ["math"] * n,
            "question": [f"New hard question {s[0]}?" for s in specs],
            "answer": ["42"] * n,
            "answer_type": ["numeric"] * n,
            "source": ["benchfill run 1"] * n,
            "license": ["MIT"] * n,
            "origin": ["benchfill"] * n,
            "metadata": ["{}"] * n,
            "z": [s[1] for s in specs],
            "z_low": [max(0.0, s[1] - 0.05) for s in specs],
            "z_high": [min(1.0, s[1] + 0.05) for s in specs],
            "b": [0.5] * n,
            "se": [0.4] * n,
            "difficulty_source": ["collected"] * n,
            "review_status": [s[2] for s in specs],
            "reviewer": ["alice"] * n,
            "lineage": [
                json.dumps({"gap": [0.6, 0.9], "parents": [f"{benchmark}-001"], "generator": "gpt"})
                for _ in specs
            ],
        }
    )
    for key, value in over.items():
        df = df.with_columns(pl.lit(value).alias(key))
    return conform(df, "accepted_item")


def write_accepted(root: Path, df: pl.DataFrame, benchmark: str = "toy") -> Path:
    path = root / f"data/review/export/{benchmark}.parquet"
    path.parent.mkdir(parents=True, exist_ok=True)
    df.write_parquet(path)
    return path


def make_project(root: Path, *, source: str = "imported") -> Path:
    (root / "params.yaml").write_text(PARAMS)
    write_benchmark(root, "toy", source=source)
    write_benchmark(root, "toy2")
    return root


def params(root: Path) -> dict:
    from curation.params import load_params

    return load_params(root / "params.yaml")


def run_subsets_and_build(root: Path, benchmark: str = "toy", **build_over) -> str:
    """Run the `subsets` and `build` stages in ``root`` (the working directory), each
    committing its outputs at its end as under `stage_main`."""
    from curation.io.atomic import all_or_nothing
    from pipelines import build, subsets

    p = params(root)
    p["build"] = {**p.get("build", {}), **build_over}
    with all_or_nothing():
        subsets.run(params_of(p), benchmark)
    with all_or_nothing():
        return build.run(params_of(p), benchmark)


def hub_env(hub_url: str, root: Path, *, token: str | None = "hf_test_secret_0123") -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HF_", "HUGGING")) and k.lower() not in ("http_proxy", "https_proxy")
    }
    env.update(
        HF_ENDPOINT=hub_url,
        HF_HUB_DISABLE_XET="1",
        HF_HUB_OFFLINE="0",
        HF_HOME=str(root / ".hf-home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_UPDATE_CHECK="1",
        NO_PROXY="127.0.0.1,localhost",
    )
    if token:
        env["HF_TOKEN"] = token
    return env


def run_publish(env: dict, root: Path, *args: str) -> subprocess.CompletedProcess:
    """``curate publish ARGS`` in ``root`` with ``env`` (a subprocess: real huggingface_hub)."""
    return subprocess.run(
        [sys.executable, "-m", "curation.cli", "publish", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
