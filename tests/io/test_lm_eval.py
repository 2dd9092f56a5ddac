"""lm-evaluation-harness ``--log_samples`` files read as response cells."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from curation.errors import InputError
from curation.io.lm_eval import read_lm_eval_samples

FIXTURES = Path(__file__).parent / "fixtures" / "lm_eval"
LLAMA = "meta-llama__Llama-3.1-8B-Instruct"
QWEN = "Qwen__Qwen2.5-7B-Instruct"


def _cells(df):
    return set(df.iter_rows())


def test_generative_task_per_filter_and_model_from_folder():
    strict = read_lm_eval_samples(
        FIXTURES / "*" / "samples_gsm8k_*.jsonl", filter_name="strict-match"
    )
    assert strict.columns == ["model", "item", "n_trials", "n_correct"]
    assert _cells(strict) == {
        (QWEN, "0", 1, 0),
        (QWEN, "1", 1, 0),
        (QWEN, "2", 1, 1),
        (QWEN, "3", 1, 1),
        (LLAMA, "0", 1, 1),
        (LLAMA, "1", 1, 1),
        (LLAMA, "2", 1, 0),
        (LLAMA, "3", 1, 0),
    }
    flexible = read_lm_eval_samples(
        str(FIXTURES / QWEN / "samples_gsm8k_2024-11-20T10-15-32.481516.jsonl"),
        filter_name="flexible-extract",
        model="qwen2.5-7b",
    )
    assert _cells(flexible) == {("qwen2.5-7b", str(i), 1, 1) for i in range(4)}


def test_several_filters_must_be_chosen():
    with pytest.raises(InputError, match="several filters.*flexible-extract, strict-match"):
        read_lm_eval_samples(FIXTURES / QWEN)
    with pytest.raises(InputError, match="no samples for filter 'maj@8'"):
        read_lm_eval_samples(FIXTURES / QWEN, filter_name="maj@8")


def test_multiple_choice_task_uses_acc_and_doc_ids_or_a_doc_field():
    path = FIXTURES / LLAMA / "samples_arc_easy_2024-11-20T11-30-41.902311.jsonl"
    by_doc = read_lm_eval_samples(path)
    assert _cells(by_doc) == {(LLAMA, "0", 1, 1), (LLAMA, "1", 1, 1), (LLAMA, "2", 1, 0)}
    by_id = read_lm_eval_samples(path, item_field="id", metric="acc_norm")
    assert _cells(by_id) == {
        (LLAMA, "Mercury_7175875", 1, 1),
        (LLAMA, "Mercury_SC_409171", 1, 0),  # length normalisation picks another option
        (LLAMA, "Mercury_SC_408547", 1, 0),
    }


def test_one_task_at_a_time():
    with pytest.raises(InputError, match=r"several tasks matched \(arc_easy, gsm8k\)"):
        read_lm_eval_samples(FIXTURES / LLAMA)


def _sample(**over):
    rec = {
        "doc_id": 0,
        "doc": {"q": "x"},
        "target": "1",
        "arguments": {"gen_args_0": {"arg_0": "x", "arg_1": {}}},
        "resps": [["1"]],
        "filtered_resps": ["1"],
        "filter": "none",
        "metrics": ["exact_match"],
        "exact_match": 1.0,
    }
    rec.update(over)
    return rec


def _write(tmp_path: Path, lines: list[str], name="samples_t_2024-01-01T00-00-00.000001.jsonl"):
    d = tmp_path / "org__model"
    d.mkdir(exist_ok=True)
    (d / name).write_text("\n".join(lines) + "\n")
    return d / name


@pytest.mark.parametrize(
    ("lines", "where", "field"),
    [
        ([json.dumps(_sample()), '{"doc_id": 1, "exact_match": '], "line 2", None),
        ([json.dumps({k: v for k, v in _sample().items() if k != "doc_id"})], "line 1", "doc_id"),
        ([json.dumps(_sample(exact_match="yes"))], "line 1", "exact_match"),
        ([json.dumps(_sample(exact_match=0.37))], "line 1", "exact_match"),
        ([json.dumps(_sample()), json.dumps(_sample())], "line 2", "doc_id"),
        ([json.dumps(_sample(doc_id=[1]))], "line 1", "doc_id"),
        ([json.dumps([1, 2])], "line 1", None),
    ],
)
def test_malformed_lines_name_file_line_and_field(tmp_path, lines, where, field):
    path = _write(tmp_path, lines)
    with pytest.raises(InputError) as err:
        read_lm_eval_samples(path)
    assert err.value.file == str(path)
    assert err.value.record == where
    assert err.value.field == field


def test_metric_choice_and_repeats(tmp_path):
    two = _sample(metrics=["f1", "bleu"], f1=1.0, bleu=0.0)
    with pytest.raises(InputError, match="candidates: f1, bleu"):
        read_lm_eval_samples(_write(tmp_path, [json.dumps(two)]))
    assert _cells(read_lm_eval_samples(_write(tmp_path, [json.dumps(two)]), metric="f1")) == {
        ("org__model", "0", 1, 1)
    }
    with pytest.raises(InputError, match="metric 'acc' missing") as err:
        read_lm_eval_samples(_write(tmp_path, [json.dumps(two)]), metric="acc")
    assert err.value.field == "acc"
    # pass@1 over 4 generations: 0.75 means 3 of 4
    rep = _sample(metrics=["pass@1"], **{"pass@1": 0.75}, resps=[["a", "b", "c", "d"]])
    del rep["exact_match"]
    assert _cells(read_lm_eval_samples(_write(tmp_path, [json.dumps(rep)]))) == {
        ("org__model", "0", 4, 3)
    }


def test_reruns_keep_the_newest_file(tmp_path):
    old = _write(tmp_path, [json.dumps(_sample(exact_match=0.0))])
    _write(
        tmp_path,
        [json.dumps(_sample(exact_match=1.0))],
        name="samples_t_2024-02-01T00-00-00.000001.jsonl",
    )
    with pytest.warns(UserWarning, match="newest"):
        df = read_lm_eval_samples(tmp_path / "*" / "samples_t_*.jsonl")
    assert _cells(df) == {("org__model", "0", 1, 1)}
    assert old.exists()


def test_nothing_found_and_bad_names(tmp_path):
    with pytest.raises(InputError, match="no lm-eval sample files"):
        read_lm_eval_samples(tmp_path / "nothing_*.jsonl")
    shutil.copy(
        FIXTURES / LLAMA / "samples_arc_easy_2024-11-20T11-30-41.902311.jsonl",
        tmp_path / "results.jsonl",
    )
    with pytest.raises(InputError, match="not an lm-eval sample file name"):
        read_lm_eval_samples(tmp_path / "results.jsonl")


def test_response_table_joins_the_benchmark_items():
    from curation.io.lm_eval import lm_eval_responses
    from curation.schemas import field_names

    path = FIXTURES / LLAMA / "samples_arc_easy_2024-11-20T11-30-41.902311.jsonl"
    ids = ["Mercury_7175875", "Mercury_SC_409171", "Mercury_SC_408547"]
    table = lm_eval_responses(
        path, benchmark="arc", known_items=ids, items_file="items", item_field="id"
    )
    assert table.columns == field_names("response")
    assert set(table["source"]) == {"imported"} and table.height == 3
    with pytest.raises(InputError, match="3 items not in items") as err:
        lm_eval_responses(path, benchmark="arc", known_items=ids, items_file="items")
    assert err.value.field == "doc_id"
