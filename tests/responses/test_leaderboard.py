"""Leaderboard per-sample details (parquet) read as response cells.

The fixture is a local copy in the Open LLM Leaderboard layout: one details dataset
folder per model (``<org>__<model>-details`` in v2, ``details_<org>__<model>`` in v1),
one parquet table per task with lm-eval's sample fields as columns and the metric as a
column (v2) or a field of a ``metrics`` struct (v1); and one table holding many models
beside a ``model`` column. Verdicts come from a seeded generator, so the expected cells
are known.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from curation.errors import InputError
from curation.responses._leaderboard import details_responses, model_of_path, read_details

N_MODELS, N_DOCS = 40, 25
TASK = "leaderboard_bbh_boolean_expressions"


def _verdicts(seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ability = np.linspace(-2, 2, N_MODELS)[:, None]
    difficulty = rng.normal(size=N_DOCS)[None, :]
    return (rng.random((N_MODELS, N_DOCS)) < 1 / (1 + np.exp(difficulty - ability))).astype(int)


def _models() -> list[str]:
    return [f"org{j % 3}/model-{j:02d}" for j in range(N_MODELS)]


def _task_table(verdicts: np.ndarray) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "doc_id": list(range(N_DOCS)),
            "doc": [{"input": f"True and not {i}", "target": "True"} for i in range(N_DOCS)],
            "target": ["True"] * N_DOCS,
            "resps": [[["True"]]] * N_DOCS,
            "filtered_resps": [["True"]] * N_DOCS,
            "doc_hash": [f"h{i}" for i in range(N_DOCS)],
            "acc_norm": verdicts.astype(float),
            "f1": np.linspace(0, 1, N_DOCS),
        }
    )


@pytest.fixture(scope="module")
def v2(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    """open-llm-leaderboard/<org>__<model>-details/<org>__<model>/samples_<task>_<date>.parquet"""
    root = tmp_path_factory.mktemp("details") / "open-llm-leaderboard"
    truth = _verdicts()
    for model, row in zip(_models(), truth, strict=True):
        slug = model.replace("/", "__")
        folder = root / f"{slug}-details" / slug
        folder.mkdir(parents=True)
        _task_table(row).write_parquet(
            folder / f"samples_{TASK}_2024-10-28T10-11-22.123456.parquet"
        )
    return root, truth


def test_v2_layout_one_file_per_model_names_from_the_dataset_folders(v2):
    root, truth = v2
    read = read_details(root)
    assert read.metric == "acc_norm" and read.n_files == N_MODELS
    assert (read.n_models, read.n_docs) == (N_MODELS, N_DOCS)
    expected = {
        (m, str(i), 1, int(truth[j, i])) for j, m in enumerate(_models()) for i in range(N_DOCS)
    }
    assert set(read.cells.iter_rows()) == expected
    assert read.summary() == (
        f"leaderboard details: metric acc_norm, {N_DOCS} docs, {N_MODELS} models from "
        f"{N_MODELS} files (names from dataset folders)"
    )


def test_graded_metric_needs_a_threshold_and_unknown_metric_lists_the_columns(v2):
    root, _ = v2
    with pytest.raises(InputError, match=r"'f1' is not 0/1 .*--threshold"):
        read_details(root, metric="f1")
    read = read_details(root, metric="f1", threshold=0.5)
    assert read.cells.filter(pl.col("item") == "0")["n_correct"].sum() == 0
    assert read.cells.filter(pl.col("item") == str(N_DOCS - 1))["n_correct"].sum() == N_MODELS
    with pytest.raises(
        InputError, match=r"no metric column 'acc' \(numeric columns: acc_norm, f1\)"
    ):
        read_details(root, metric="acc")


def test_reruns_of_a_model_are_refused_naming_both_files(v2, tmp_path):
    root, truth = v2
    slug = _models()[0].replace("/", "__")
    folder = tmp_path / f"{slug}-details" / slug
    folder.mkdir(parents=True)
    for date in ("2024-06-26T00-00-00", "2024-10-28T10-11-22"):
        _task_table(truth[0]).write_parquet(folder / f"samples_{TASK}_{date}.parquet")
    with pytest.raises(InputError, match=r"more than once, in .*2024-06-26.* and .*2024-10-28"):
        read_details(tmp_path)
    one = read_details(folder / f"samples_{TASK}_2024-10-28T10-11-22.parquet")
    assert one.n_models == 1 and one.cells["model"][0] == _models()[0]


def test_v1_metrics_struct_and_a_table_with_a_model_column(tmp_path):
    truth = _verdicts(seed=1)
    folder = tmp_path / "details_org0__model-00" / "2023-11-02T19-11-55"
    folder.mkdir(parents=True)
    pl.DataFrame(
        {
            "doc_id": list(range(N_DOCS)),
            "example": [f"q{i}" for i in range(N_DOCS)],
            "metrics": [{"acc": int(v), "acc_norm": 1 - int(v)} for v in truth[0]],
        }
    ).write_parquet(folder / "details_harness|arc:challenge|25_2023-11-02T19-11-55.parquet")
    read = read_details(tmp_path, metric="acc")
    assert read.model_from == "dataset folders"
    assert dict(zip(read.cells["item"], read.cells["n_correct"], strict=True)) == {
        str(i): int(v) for i, v in enumerate(truth[0])
    }
    # many models in one long table, a doc struct field as the id
    long = pl.DataFrame(
        {
            "model": [m for m in _models() for _ in range(N_DOCS)],
            "doc_id": list(range(N_DOCS)) * N_MODELS,
            "doc": [{"id": f"bool-{i}"} for i in range(N_DOCS)] * N_MODELS,
            "exact_match": [bool(v) for v in truth.ravel()],
        }
    )
    long.write_parquet(tmp_path / "all.parquet")
    read = read_details(tmp_path / "all.parquet", item_field="doc.id")
    assert read.metric == "exact_match" and read.model_from == "the 'model' column"
    assert read.n_models == N_MODELS and read.cells["n_correct"].sum() == truth.sum()
    assert set(read.cells["item"]) == {f"bool-{i}" for i in range(N_DOCS)}


def test_model_of_path():
    assert model_of_path(Path("x/Qwen__Qwen2.5-7B-details/Qwen__Qwen2.5-7B/s.parquet")) == (
        "Qwen/Qwen2.5-7B",
        "dataset folders",
    )
    assert model_of_path(Path("x/details_a__b/2023/s.parquet"))[0] == "a/b"
    assert model_of_path(Path("runs/my-model/s.parquet")) == ("my-model", "folders")


def test_response_table_joins_the_benchmark_items(v2):
    root, truth = v2
    known = [str(i) for i in range(N_DOCS)]
    table, read = details_responses(root, benchmark="bbh", known_items=known, items_file="items")
    assert table.height == N_MODELS * N_DOCS and set(table["benchmark"]) == {"bbh"}
    with pytest.raises(InputError, match=r"1 items of the details are not items of benchmark"):
        details_responses(root, benchmark="bbh", known_items=known[1:], items_file="items")


def test_curate_import_writes_imports_the_responses_stage_overlays(toy_project, capsys):
    """`curate responses import --format leaderboard` on the toy project, then its stages."""
    from curation.cli import main
    from tests.stage_cli import run_stage

    assert run_stage(["ingest", "--benchmark", "toy"]) == 0
    details = toy_project / "lb" / "org__new-7b-details" / "org__new-7b"
    details.mkdir(parents=True)
    pl.DataFrame(
        {"doc_id": [f"q{i}" for i in range(6)], "acc_norm": [1.0, 1, 1, 0, 0, 1]}
    ).write_parquet(details / f"samples_{TASK}_2024-10-28T10-11-22.parquet")
    argv = ["responses", "import", "--format", "leaderboard", "-b", "toy", "--path", "lb"]
    assert main([*argv, "--scorer", "match"]) == 2
    assert "--scorer does not apply to --format leaderboard" in capsys.readouterr().err
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "leaderboard details: metric acc_norm, 6 docs, 1 models from 1 files" in out
    assert "model 'org/new-7b' added: 6 cells" in out
    assert (toy_project / "data/raw/toy/imports/org_new-7b.parquet").is_file()
    assert run_stage(["responses", "--benchmark", "toy"]) == 0
    table = pl.read_parquet(toy_project / "data/responses/toy.parquet")
    new = table.filter(pl.col("model") == "org/new-7b").sort("item")
    assert new["n_correct"].to_list() == [1, 1, 1, 0, 0, 1]
    assert table["model"].n_unique() == 4


def test_details_to_the_interchange_table_of_a_matrix_only_benchmark(v2, tmp_path, monkeypatch):
    """`--out`: thousands of models become one long table a new benchmark reads."""
    import yaml

    from curation.cli import main
    from tests.conftest import TOY_PARAMS, add_imports_dir
    from tests.stage_cli import run_stage

    root, truth = v2
    monkeypatch.chdir(tmp_path)
    argv = ["responses", "import", "--format", "leaderboard", "--path", str(root)]
    assert main([*argv, "--out", "raw/lb.parquet"]) == 0
    long = pl.read_parquet(tmp_path / "raw/lb.parquet")
    assert long.columns == ["model", "item", "n_trials", "n_correct"]
    assert long.height == N_MODELS * N_DOCS and long["n_correct"].sum() == truth.sum()
    params = yaml.safe_load(TOY_PARAMS)
    params["benchmarks"] = {
        "bbh": {
            "domain": "leaderboard",
            "license": "Apache-2.0",
            "source": "Open LLM Leaderboard details (tests)",
            "items": {"texts": False, "path": "raw/lb.parquet"},
            "responses": {"path": "raw/lb.parquet", "layout": "long"},
        }
    }
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    add_imports_dir(tmp_path, "bbh")
    assert run_stage(["ingest", "--benchmark", "bbh"]) == 0
    assert run_stage(["responses", "--benchmark", "bbh"]) == 0
    table = pl.read_parquet(tmp_path / "data/responses/bbh.parquet")
    assert table["model"].n_unique() == N_MODELS and table["item"].n_unique() == N_DOCS
