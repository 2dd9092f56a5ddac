"""`curate estimate` end to end on the shared annotated toy project (conftest's
``annotated_toy``: ingest, responses and annotate of 3 models x 6 items): an lm-eval log
of a model the panel never saw, a full run, a table, --out against its schema, and bad
inputs as one message with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from curation.cli import main
from curation.schemas import load_schema
from tests.conftest import REPO, copy_project

# a real lm-eval --log_samples line (gsm8k, strict-match) as the template of the toy's
TEMPLATE = (
    REPO
    / "tests/responses/fixtures/lm_eval/Qwen__Qwen2.5-7B-Instruct"
    / "samples_gsm8k_2024-11-20T10-15-32.481516.jsonl"
)


def _log(
    folder: Path, *, model: str, items: range | list[int], solved: set[int], task: str = "toy"
) -> Path:
    """An lm-eval samples file for toy items q<i> (``doc.id`` holds the item id), in the
    shape of the real fixture: only doc, doc_id and the metric differ."""
    line = json.loads(TEMPLATE.read_text(encoding="utf-8").splitlines()[0])
    folder = folder / model.replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in items:
        row = dict(line, doc_id=i, doc={"id": f"q{i}"}, exact_match=float(i in solved))
        rows.append(json.dumps(row))
    path = folder / f"samples_{task}_2024-11-20T10-15-32.481516.jsonl"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def project(annotated_toy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = copy_project(annotated_toy, tmp_path / "project")
    monkeypatch.chdir(root)
    return root


def _estimate(*args: str) -> int:
    return main(["estimate", "-b", "toy", "--item-field", "id", *args])


def test_a_new_models_subset_log_gets_an_estimate_and_its_interval(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path / "logs", model="org/new", items=[0, 1, 3], solved={0, 1})
    out = tmp_path / "estimate.json"
    assert _estimate("--path", str(log), "--model", "org/new", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "org/new" in printed and "3/6" in printed and "90% interval" in printed
    assert "(exact)" not in printed and "rank [90%]" in printed
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, load_schema("estimate"))
    assert doc["calibration"] == {
        "source": "data/difficulty/toy.parquet",
        "irt_model": "1pl",
        "n_items": 6,
        "n_panel": 3,
    }
    (e,) = doc["estimates"]
    assert e["model"] == "org/new" and e["n_seen"] == 3 and e["n_unseen"] == 3
    assert e["subset_accuracy"] == pytest.approx(2 / 3)
    assert e["low"] < e["estimate"] < e["high"] and not e["exact"]
    # the observed part is certain: 2 successes of 6 at least, 5 at most
    assert 2 / 6 <= e["low"] and e["high"] <= 5 / 6
    assert 0.0 <= e["z_low"] <= e["z"] <= e["z_high"] <= 1.0
    assert 1 <= e["rank_low"] <= e["rank"] <= e["rank_high"] <= 4 and e["n_panel"] == 3
    assert f"{100 * e['estimate']:.1f}%" in printed
    # the schema is strict: what write_report checks before it writes
    for broken in ({**e, "estimate": 1.5}, {k: v for k, v in e.items() if k != "rank"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**doc, "estimates": [broken]}, load_schema("estimate"))


def test_a_full_run_prints_the_exact_score(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path / "logs", model="org/full", items=range(6), solved={0, 1, 5})
    out = tmp_path / "full.json"
    assert _estimate("--path", str(log), "--model", "org/full", "--out", str(out)) == 0
    assert "50.0% (exact)  [50.0%, 50.0%]" in capsys.readouterr().out
    (e,) = json.loads(out.read_text())["estimates"]
    assert e["exact"] and e["estimate"] == e["low"] == e["high"] == 0.5
    assert e["rank_low"] == e["rank"] == e["rank_high"] == 2  # strong (0.75) above; mid ties at 0.5
    assert e["bernoulli_floor"] == 0.0


def test_a_long_table_is_read_like_a_bundled_matrix(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = tmp_path / "answers.csv"
    table.write_text("model,item,n_trials,n_correct\nnew,q0,1,1\nnew,q3,1,0\n")
    assert main(["estimate", "-b", "toy", "--format", "long", "--path", str(table)]) == 0
    assert "2/6" in capsys.readouterr().out


def _fails(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["estimate", "-b", "toy", *args]) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), captured.err
    return lines[0]


def test_bad_inputs_are_one_message_and_exit_2(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = _log(tmp_path / "logs", model="org/new", items=[0, 1], solved={0})
    # lm-eval's doc_id (0, 1) is not the toy's item id: named, with the hint
    msg = _fails(capsys, "--path", str(log))
    assert "doc_id" in msg and "not items of benchmark 'toy'" in msg
    other = _log(tmp_path / "ner", model="org/new", items=[0], solved=set(), task="conll2003")
    msg = _fails(capsys, "--path", str(other), "--item-field", "id")
    assert "'conll2003'" in msg and "--accept-task" in msg
    msg = _fails(capsys, "--path", str(tmp_path / "missing"), "--item-field", "id")
    assert "no lm-eval sample files" in msg
    msg = _fails(capsys, "--path", str(log), "--item-field", "id", "--level", "1.5")
    assert "level" in msg
    bad = tmp_path / "bad.csv"
    bad.write_text("model,item,n_trials,n_correct\nnew,q9,1,1\n")
    msg = _fails(capsys, "--format", "long", "--path", str(bad))
    assert "'q9'" in msg and "bad.csv" in msg
    (project / "data/calibration/toy.json").unlink()
    msg = _fails(capsys, "--path", str(log), "--item-field", "id")
    assert "data/calibration/toy.json" in msg and "annotate@toy" in msg
