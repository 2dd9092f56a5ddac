"""The bad-input corpus: one clear message (file, record, field), exit 2, outputs untouched."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.corpus.runner import load_cases, make_template, problems, run_case
from tests.stage_cli import run_stage

CORPUS = Path(__file__).parent / "corpus" / "bad"
CASES = json.loads((CORPUS / "cases.json").read_text())["cases"]

WIDE_PARAMS_PATCH = (
    "      layout: long\n      columns: {model: model, item: item, "
    "n_trials: n_trials, n_correct: n_correct}\n"
)


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in ("data", "metrics", "reports")
        if (root / d).exists()
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input_is_reported_once_and_nothing_is_lost(toy_project: Path, case, capsys):
    assert run_stage(["ingest"]) == 0
    assert run_stage(["responses"]) == 0
    assert run_stage(["check"]) == 0
    before = _snapshot(toy_project)
    assert len(before) >= 4
    capsys.readouterr()

    if case.get("wide"):
        params = toy_project / "params.yaml"
        params.write_text(
            params.read_text().replace(WIDE_PARAMS_PATCH, "      layout: wide\n      n_trials: 1\n")
        )
    shutil.copyfile(CORPUS / case["file"], toy_project / case["replaces"])

    code = run_stage(case["command"])
    err = capsys.readouterr().err.strip()

    assert code == 2
    assert err.count("\n") == 0, f"expected one line, got: {err}"
    assert err.startswith(f"error: {case['replaces']}")
    assert case["says"] in err
    if case["record"]:
        assert f": {case['record']}:" in err
    if case["field"]:
        assert f"field '{case['field']}'" in err
    assert "Traceback" not in err
    assert _snapshot(toy_project) == before, "a failed stage changed earlier outputs"


def test_benchmark_in_params_with_no_file(toy_project: Path, capsys):
    (toy_project / "raw" / "items.jsonl").unlink()
    assert run_stage(["ingest"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "error: params.yaml: field 'benchmarks.toy.items.path': file raw/items.jsonl does not exist"
    )
    assert not (toy_project / "data" / "items").exists()  # data/raw/ holds inputs only


def test_unknown_benchmark_name_is_a_clear_error(toy_project: Path, capsys):
    assert run_stage(["ingest", "--benchmark", "nope"]) == 2
    assert "no benchmark 'nope'; configured: toy" in capsys.readouterr().err


def test_missing_upstream_output_says_what_to_run(toy_project: Path, capsys):
    assert run_stage(["responses"]) == 2
    err = capsys.readouterr().err
    assert "data/items/toy.parquet: missing; run `dvc repro ingest@toy`" in err


# ---- the corpus: tests/corpus/cases.yaml, one row per case ----------------------------------

CORPUS_CASES = load_cases()


@pytest.fixture(scope="module")
def built_toy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy project with every stage up to build run once; each case works on a copy."""
    return make_template(tmp_path_factory.mktemp("corpus") / "template")


def test_the_corpus_is_large_and_covers_every_kind() -> None:
    kinds = {c["kind"] for c in CORPUS_CASES}
    assert len(CORPUS_CASES) >= 100
    assert {"ingest", "import-long", "import-wide", "import-lm-eval", "params"} <= kinds
    assert {"degenerate", "intermediate", "publish"} <= kinds
    assert len({c["name"] for c in CORPUS_CASES}) == len(CORPUS_CASES)


@pytest.mark.parametrize("case", CORPUS_CASES, ids=[c["name"] for c in CORPUS_CASES])
def test_corpus_case(built_toy: Path, tmp_path: Path, case: dict) -> None:
    outcome = run_case(case, built_toy, tmp_path / "project")
    assert problems(case, outcome) == [], outcome.err or outcome.out
