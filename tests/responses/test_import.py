"""Response import: wide and long layouts agree; the bundled matrices match upstream."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from curation.items import ingest_benchmark
from curation.params import load_params
from curation.params_model import validate_params
from curation.responses import import_responses
from tests.conftest import REPO, TOY_LONG


def _import(root: Path, **resp_over) -> pl.DataFrame:
    params = load_params(root / "params.yaml")
    params["benchmarks"]["toy"]["responses"].update(resp_over)
    spec = validate_params(params).benchmark("toy")
    items = ingest_benchmark("toy", spec)
    return import_responses("toy", spec, known_items=items["item"].to_list(), items_file="items")


def _cells(df: pl.DataFrame) -> set[tuple]:
    return set(df.select("model", "item", "n_trials", "n_correct").iter_rows())


def test_long_layout_keeps_every_cell(toy_project: Path):
    table = _import(toy_project)
    assert _cells(table) == set(TOY_LONG)
    assert set(table["source"]) == {"imported"}


def test_wide_rates_with_trials_equal_long(toy_project: Path):
    models = sorted({r[0] for r in TOY_LONG})
    items = sorted({r[1] for r in TOY_LONG})
    rate = {(m, i): c / t for m, i, t, c in TOY_LONG}
    lines = ["model," + ",".join(items)]
    lines += [m + "," + ",".join(str(rate[m, i]) for i in items) for m in models]
    (toy_project / "raw" / "wide.csv").write_text("\n".join(lines) + "\n")
    wide = _import(toy_project, path="raw/wide.csv", layout="wide", n_trials=2, columns={})
    assert _cells(wide) == set(TOY_LONG)


def test_wide_empty_cells_are_missing(toy_project: Path):
    (toy_project / "raw" / "wide.csv").write_text("model,q0,q1\na,1,\nb,,0\n")
    wide = _import(toy_project, path="raw/wide.csv", layout="wide", n_trials=1, columns={})
    assert _cells(wide) == {("a", "q0", 1, 1), ("b", "q1", 1, 0)}


def test_rate_that_is_not_a_whole_number_of_trials_is_an_error(toy_project: Path):
    from curation.errors import InputError

    (toy_project / "raw" / "wide.csv").write_text("model,q0\na,0.3\n")
    with pytest.raises(InputError, match="not a whole number of 2 trials"):
        _import(toy_project, path="raw/wide.csv", layout="wide", n_trials=2, columns={})


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_long_per_sample_rows_are_aggregated(toy_project: Path, fmt: str):
    samples = []
    for m, i, t, c in TOY_LONG:
        samples += [{"who": m, "qid": i, "ok": int(k < c)} for k in range(t)]
    path = toy_project / "raw" / f"samples.{fmt}"
    df = pl.DataFrame(samples)
    if fmt == "csv":
        df.write_csv(path)
    elif fmt == "parquet":
        df.write_parquet(path)
    else:
        path.write_text("".join(json.dumps(s) + "\n" for s in samples))
    table = _import(
        toy_project,
        path=f"raw/samples.{fmt}",
        columns={"model": "who", "item": "qid", "correct": "ok"},
    )
    assert _cells(table) == set(TOY_LONG)


def test_protocol_fields_are_recorded(toy_project: Path):
    table = _import(
        toy_project,
        protocol={"temperature": 0.6, "prompt_template": "cot-v1", "max_tokens": 2048, "seed": 3},
    )
    row = table.row(0, named=True)
    assert (row["temperature"], row["prompt_template"], row["max_tokens"], row["seed"]) == (
        0.6,
        "cot-v1",
        2048,
        3,
    )


@pytest.mark.parametrize("bench,stem", [("gsm8k", "gsm"), ("math-l5", "math-l5"), ("crux", "crux")])
def test_bundled_matrices_match_upstream_accuracies(bench: str, stem: str, monkeypatch):
    """Per-model accuracy of the imported table equals ZeroEval's published summary."""
    monkeypatch.chdir(REPO)
    params = load_params(REPO / "params.yaml")
    spec = validate_params(params).benchmark(bench)
    items = ingest_benchmark(bench, spec)
    table = import_responses(bench, spec, known_items=items["item"].to_list(), items_file="items")
    acc = dict(
        table.group_by("model")
        .agg((pl.col("n_correct").sum() / pl.col("n_trials").sum() * 100).alias("acc"))
        .iter_rows()
    )
    raw = pl.read_csv(
        REPO / "data" / "raw" / "zeroeval" / f"{stem}_responses.csv", infer_schema=False
    )
    assert table["model"].n_unique() == raw.height
    assert table["item"].n_unique() == raw.width - 1
    summary = json.loads((REPO / "data" / "raw" / "zeroeval" / f"{stem}.summary.json").read_text())
    upstream = {s["Model"]: float(s["Acc"]) for s in summary}
    by_name = [m for m in acc if m in upstream]
    assert len(by_name) >= len(acc) - 6, "most model names match upstream's"
    for model in by_name:
        assert acc[model] == pytest.approx(upstream[model], abs=0.006), model
    # the few renamed upstream (model_name_replacement) still match one published figure
    left = sorted(v for k, v in upstream.items() if k not in acc)
    for model in set(acc) - set(by_name):
        assert min(abs(acc[model] - v) for v in left) < 0.006, model
