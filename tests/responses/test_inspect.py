"""inspect_ai logs, written by inspect itself in the test, read as response cells.

A tiny arithmetic task runs through ``inspect_ai.eval`` against inspect's built-in
``mockllm`` provider (no network: the mock's outputs come with their token usage, so
inspect never fetches a tokenizer). Two models, three epochs, three scorers whose
verdicts are known in advance; one log is written as ``.eval``, the other as ``.json``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "inspect_ai", reason="inspect_ai not installed (pip install 'benchcurate[inspect]')"
)

import polars as pl  # noqa: E402

from curation.errors import InputError  # noqa: E402
from curation.responses._inspect import inspect_responses, read_inspect  # noqa: E402

QUESTIONS = {"q1": ("1+1?", "2"), "7": ("2+2?", "4"), "q3": ("3+3?", "6")}
EPOCHS = 3


def _write_logs(log_dir: Path) -> dict[str, Path]:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.scorer import Score, Target, match, mean, scorer
    from inspect_ai.solver import TaskState, generate

    @scorer(metrics=[mean()])
    def closeness() -> Any:
        """A graded score: 0.75 for the right answer, 0.25 otherwise (not a verdict)."""

        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=0.75 if state.output.completion == target.text else 0.25)

        return score

    @scorer(metrics=[mean()])
    def second_epoch_fails() -> Any:
        """A boolean verdict that is False on epoch 2: trials differ within a cell."""

        async def score(state: TaskState, target: Target) -> Score:
            return Score(value=state.output.completion == target.text and state.epoch != 2)

        return score

    def answers(right: set[str]) -> Any:
        def out(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
            question = messages[-1].text
            qid = next(k for k, (q, _) in QUESTIONS.items() if q == question)
            text = QUESTIONS[qid][1] if qid in right else "no idea"
            output = ModelOutput.from_content(model="mock", content=text)
            output.usage = ModelUsage(input_tokens=3, output_tokens=1, total_tokens=4)
            return output

        return out

    samples = [
        Sample(id=int(k) if k.isdigit() else k, input=q, target=a)
        for k, (q, a) in QUESTIONS.items()
    ]
    task = Task(
        name="arith",
        dataset=samples,
        solver=[generate()],
        scorer=[match(), closeness(), second_epoch_fails()],
        epochs=EPOCHS,
    )
    written: dict[str, Path] = {}
    for model, right, fmt in (
        ("mockllm/strong", {"q1", "7", "q3"}, "eval"),
        ("mockllm/weak", {"q1"}, "json"),
    ):
        (log,) = eval(
            task,
            model=model,
            model_args={"custom_outputs": answers(right)},
            log_dir=str(log_dir / fmt),
            log_format=fmt,
            display="none",
        )
        assert log.status == "success", log.error
        written[model] = Path(log.location)
    return written


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("inspect")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(root / "xdg"))  # inspect's traces and buffers
        mp.setenv("INSPECT_LOG_DIR", str(root / "logs"))
        return _write_logs(root / "logs")


def _cells(read: Any) -> set[tuple[str, str, int, int]]:
    return set(read.cells.iter_rows())


def test_logs_are_the_formats_inspect_writes(logs):
    assert logs["mockllm/strong"].suffix == ".eval"
    assert logs["mockllm/weak"].suffix == ".json"


def test_several_scorers_must_be_chosen(logs):
    folder = logs["mockllm/strong"].parent.parent
    with pytest.raises(
        InputError, match=r"several scorers \(match, closeness, second_epoch_fails\).*--scorer"
    ) as err:
        read_inspect(folder)
    assert err.value.field == "scorer"
    with pytest.raises(InputError, match=r"no scorer 'acc' in this log \(scorers: match, clo"):
        read_inspect(folder, scorer="acc")


def test_letter_verdicts_epochs_as_trials_models_from_the_headers(logs):
    read = read_inspect(logs["mockllm/strong"].parent.parent, scorer="match")
    assert read.models == ("mockllm/strong", "mockllm/weak") and read.n_logs == 2
    assert _cells(read) == {
        ("mockllm/strong", "q1", EPOCHS, EPOCHS),
        ("mockllm/strong", "7", EPOCHS, EPOCHS),
        ("mockllm/strong", "q3", EPOCHS, EPOCHS),
        ("mockllm/weak", "q1", EPOCHS, EPOCHS),
        ("mockllm/weak", "7", EPOCHS, 0),
        ("mockllm/weak", "q3", EPOCHS, 0),
    }
    assert read.summary() == ("inspect: task arith, scorer match, 3 samples, 2 models from 2 logs")


def test_boolean_verdicts_differ_by_epoch(logs):
    for model, path in logs.items():  # each format on its own
        read = read_inspect(path, scorer="second_epoch_fails")
        right = {"q1", "7", "q3"} if model.endswith("strong") else {"q1"}
        assert _cells(read) == {
            (model, q, EPOCHS, EPOCHS - 1 if q in right else 0) for q in QUESTIONS
        }


def test_graded_values_need_a_threshold(logs):
    path = logs["mockllm/weak"]
    with pytest.raises(InputError, match=r"'closeness' gives 0\.[27]5 .*--threshold") as err:
        read_inspect(path, scorer="closeness")
    assert str(err.value.record).startswith("sample ") and err.value.field == "closeness"
    read = read_inspect(path, scorer="closeness", threshold=0.5, model="weak-1b")
    assert _cells(read) == {
        ("weak-1b", "q1", EPOCHS, EPOCHS),
        ("weak-1b", "7", EPOCHS, 0),
        ("weak-1b", "q3", EPOCHS, 0),
    }
    assert "scorer closeness >= 0.5" in read.summary()


def test_one_scorer_is_chosen_without_asking(logs, tmp_path):
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(logs["mockllm/strong"]))
    for sample in log.samples or []:
        sample.scores = {"match": sample.scores["match"]}
    assert log.results is not None
    log.results.scores = [s for s in log.results.scores if s.name == "match"]
    out = tmp_path / "one.eval"
    write_eval_log(log, str(out))
    read = read_inspect(out)
    assert read.scorer == "match" and read.cells.height == 3


def test_response_table_names_unknown_sample_ids(logs):
    from curation.schemas import field_names

    path = logs["mockllm/strong"]
    table, read = inspect_responses(
        path,
        benchmark="arith",
        known_items=list(QUESTIONS),
        items_file="items",
        scorer="match",
    )
    assert table.columns == field_names("response") and table.height == 3
    assert set(table["source"]) == {"imported"} and set(table["benchmark"]) == {"arith"}
    with pytest.raises(InputError, match="1 sample ids of inspect task 'arith' are not items"):
        inspect_responses(
            path, benchmark="arith", known_items=["q1", "q3"], items_file="items", scorer="match"
        )


def test_not_a_log(tmp_path):
    bad = tmp_path / "x.eval"
    bad.write_bytes(b"not a zip")
    with pytest.raises(InputError, match="not an inspect log"):
        read_inspect(bad)
    with pytest.raises(InputError, match="no inspect logs found"):
        read_inspect(tmp_path / "nothing")


def test_curate_import_of_inspect_logs(logs, tmp_path, monkeypatch, capsys):
    """`curate responses import --format inspect` into a project whose items are the samples."""
    import json

    from curation.cli import main
    from tests.conftest import write_toy_project
    from tests.stage_cli import run_stage

    write_toy_project(tmp_path)
    items = [{"id": k, "prompt": q, "target": a} for k, (q, a) in QUESTIONS.items()]
    (tmp_path / "raw" / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items))
    (tmp_path / "raw" / "responses.csv").write_text(
        "model,item,n_trials,n_correct\n" + "".join(f"base,{k},1,1\n" for k in QUESTIONS)
    )
    monkeypatch.chdir(tmp_path)
    assert run_stage(["ingest", "--benchmark", "toy"]) == 0
    folder = str(logs["mockllm/strong"].parent.parent)
    argv = ["responses", "import", "--format", "inspect", "-b", "toy", "--path", folder]
    assert main(argv) == 2
    assert "several scorers (match, closeness, second_epoch_fails)" in capsys.readouterr().err
    assert main([*argv, "--scorer", "second_epoch_fails"]) == 0
    out = capsys.readouterr().out
    assert "inspect: task arith, scorer second_epoch_fails, 3 samples, 2 models" in out
    assert "model 'mockllm/weak' added: 3 cells" in out
    assert run_stage(["responses", "--benchmark", "toy"]) == 0
    table = pl.read_parquet(tmp_path / "data/responses/toy.parquet")
    weak = table.filter(pl.col("model") == "mockllm/weak").sort("item")
    assert list(weak.select("item", "n_trials", "n_correct").iter_rows()) == [
        ("7", 3, 0),
        ("q1", 3, 2),
        ("q3", 3, 0),
    ]
