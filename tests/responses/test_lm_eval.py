"""lm-evaluation-harness ``--log_samples`` files read as response cells."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from curation.errors import InputError
from curation.responses._lm_eval import read_lm_eval, read_lm_eval_samples

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
        ([json.dumps(_sample()), json.dumps([1, 2])], "line 2", None),
        (["[" + json.dumps(_sample()) + ", [1, 2]]"], "record 2", None),
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
    from curation.responses._lm_eval import lm_eval_responses
    from curation.schemas import field_names

    path = FIXTURES / LLAMA / "samples_arc_easy_2024-11-20T11-30-41.902311.jsonl"
    ids = ["Mercury_7175875", "Mercury_SC_409171", "Mercury_SC_408547"]
    table, read = lm_eval_responses(
        path, benchmark="arc", known_items=ids, items_file="items", item_field="id"
    )
    assert read.summary().startswith("lm-eval: task arc_easy, filter none, metric acc, 3 docs")
    assert table.columns == field_names("response")
    assert set(table["source"]) == {"imported"} and table.height == 3
    with pytest.raises(
        InputError, match="3 items of lm-eval task .* are not items of benchmark"
    ) as err:
        lm_eval_responses(path, benchmark="arc", known_items=ids, items_file="items")
    assert err.value.field == "doc_id"


# --- real layouts of each harness era -------------------------------------------------

Y2024 = FIXTURES / "2024"
LLAMA_ID = "meta-llama/Llama-3.1-8B-Instruct"
QWEN_ID = "Qwen/Qwen2.5-7B-Instruct"


def test_2024_log_without_filter_key_is_one_block_per_filter_named_by_results():
    """0.4.2-0.4.4: no ``filter`` key; gsm8k logs its 5 docs twice, strict-match first."""
    glob = Y2024 / "*" / "samples_gsm8k_*.jsonl"
    with pytest.raises(InputError, match=r"several filters \(flexible-extract, strict-match\)"):
        read_lm_eval_samples(glob)
    strict = read_lm_eval(glob, filter_name="strict-match")
    assert strict.models == (QWEN_ID, LLAMA_ID)  # from results_*.json, not the folders
    assert strict.model_from == ("results_*.json",)
    verdicts = {LLAMA_ID: [1, 0, 1, 0, 0], QWEN_ID: [0, 1, 0, 1, 1]}
    assert _cells(strict.cells) == {
        (m, str(i), 1, v) for m, vs in verdicts.items() for i, v in enumerate(vs)
    }
    assert strict.summary() == (
        "lm-eval: task gsm8k, filter strict-match, metric exact_match, 5 docs, 2 models "
        "(names from results_*.json)"
    )
    flexible = read_lm_eval_samples(glob, filter_name="flexible-extract")
    verdicts = {LLAMA_ID: [1, 1, 1, 1, 0], QWEN_ID: [1, 1, 0, 1, 1]}
    assert _cells(flexible) == {
        (m, str(i), 1, v) for m, vs in verdicts.items() for i, v in enumerate(vs)
    }
    with pytest.raises(InputError, match=r"no samples for filter 'none' \(present: flex"):
        read_lm_eval_samples(glob, filter_name="none")


def test_blocks_without_a_results_file_are_named_by_position(tmp_path):
    src = next((Y2024 / QWEN).glob("samples_gsm8k_*.jsonl"))
    dst = tmp_path / QWEN
    dst.mkdir()
    shutil.copy(src, dst / src.name)
    with pytest.raises(InputError, match=r"several filters \(#1, #2\)"):
        read_lm_eval_samples(dst)
    read = read_lm_eval(dst, filter_name="#1")
    assert read.models == (QWEN,) and read.model_from == ("folder",)
    assert _cells(read.cells) == {(QWEN, str(i), 1, v) for i, v in enumerate([0, 1, 0, 1, 1])}
    # a document missing from the second block: the duplicates are not filter blocks
    lines = (dst / src.name).read_text().splitlines()
    (dst / src.name).write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(InputError, match="'4' does not appear once per block") as err:
        read_lm_eval_samples(dst, filter_name="#1")
    assert err.value.record == "line 5"


def test_2024_loglikelihood_task_and_model_override():
    path = Y2024 / LLAMA
    read = read_lm_eval(path / "samples_arc_easy_2024-08-14T16-20-11.529470.jsonl", item_field="id")
    assert (read.task, read.filter, read.metric, read.n_docs) == ("arc_easy", "none", "acc", 4)
    assert _cells(read.cells) == {
        (LLAMA_ID, "Mercury_7175875", 1, 1),
        (LLAMA_ID, "Mercury_SC_409171", 1, 1),
        (LLAMA_ID, "Mercury_SC_408547", 1, 0),
        (LLAMA_ID, "Mercury_417466", 1, 1),
    }
    over = read_lm_eval(path / "samples_arc_easy_*.jsonl", model="llama-3.1-8b")
    assert over.models == ("llama-3.1-8b",) and over.model_from == ("--model",)


def test_json_list_log_of_lm_eval_0_4_0():
    """0.4.0/0.4.1: an indented JSON list named <model_args>_<task>.jsonl beside results.json."""
    folder = FIXTURES / "2023" / "pythia-160m"
    read = read_lm_eval(folder, item_field="id")
    assert read.task == "arc_easy" and read.models == ("EleutherAI/pythia-160m",)
    assert _cells(read.cells) == {
        ("EleutherAI/pythia-160m", "Mercury_7175875", 1, 0),
        ("EleutherAI/pythia-160m", "Mercury_SC_409171", 1, 0),
        ("EleutherAI/pythia-160m", "Mercury_SC_408547", 1, 1),
        ("EleutherAI/pythia-160m", "Mercury_417466", 1, 0),
    }
    same = read_lm_eval_samples(folder / "pretrained__EleutherAI__pythia-160m_arc_easy.jsonl")
    assert same.height == 4


def test_2025_log_with_filter_key_and_model_from_results(tmp_path):
    src = FIXTURES / LLAMA / "samples_gsm8k_2024-11-20T11-02-07.114220.jsonl"
    dst = tmp_path / LLAMA
    dst.mkdir()
    shutil.copy(src, dst / src.name)
    (dst / "results_2024-11-20T11-02-07.114220.json").write_text(
        json.dumps({"config": {"model": "hf", "model_args": f"pretrained={LLAMA_ID},dtype=auto"}})
    )
    read = read_lm_eval(dst, filter_name="flexible-extract")
    assert read.models == (LLAMA_ID,) and read.n_docs == 4


def test_metric_that_is_not_a_verdict_is_refused_with_the_options_or_thresholded(tmp_path):
    # super_glue/cb: f1 is logged as a (gold, prediction) pair and aggregated over the corpus
    cb = _sample(metrics=["acc", "f1"], acc=1.0, f1=[1, 1])
    del cb["exact_match"]
    path = _write(tmp_path, [json.dumps(cb)])
    with pytest.raises(InputError, match=r"'f1' is logged as a \(gold, prediction\) pair.*\(acc\)"):
        read_lm_eval_samples(path, metric="f1")
    assert _cells(read_lm_eval_samples(path)) == {("org__model", "0", 1, 1)}
    # drop: em is 0/1 but f1 is a per-sample score in [0, 1]
    drop = _sample(metrics=["em", "f1"], em=0.0, f1=0.67)
    del drop["exact_match"]
    path = _write(tmp_path, [json.dumps(drop), json.dumps({**drop, "doc_id": 1, "f1": 0.2})])
    with pytest.raises(InputError, match=r"'f1' is not 0/1.*--threshold.*\(em\)") as err:
        read_lm_eval_samples(path, metric="f1")
    assert err.value.field == "f1" and err.value.record == "line 1"
    read = read_lm_eval(path, metric="f1", threshold=0.5)
    assert _cells(read.cells) == {("org__model", "0", 1, 1), ("org__model", "1", 1, 0)}
    assert "metric f1 >= 0.5" in read.summary()
    text = _sample(exact_match="yes")
    with pytest.raises(InputError, match="expected a number.*no 0/1 metric"):
        read_lm_eval_samples(_write(tmp_path, [json.dumps(text)]))
