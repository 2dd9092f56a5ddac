"""Every key of a benchmark entry is checked: a typo is refused with the valid keys, and a
benchmark's name follows the one rule DVC, file systems and dataset configs all take."""

from __future__ import annotations

import copy

import pytest

from curation.errors import ConfigError
from curation.params import load_params
from curation.params_model import validate_params
from tests.conftest import REPO


@pytest.mark.parametrize(
    ("section", "key"),
    [((), "answer_typ"), (("items",), "answer_typ"), (("responses",), "layuot")],
)
def test_unknown_benchmark_keys_are_refused(section: tuple[str, ...], key: str) -> None:
    params = copy.deepcopy(load_params(REPO / "params.yaml"))
    entry = params["benchmarks"]["gsm8k"]
    for part in section:
        entry = entry[part]
    entry[key] = "x"
    with pytest.raises(ConfigError, match=f"{key}: unknown setting; .*valid: ") as err:
        validate_params(params)
    assert "params.yaml: " + ".".join(("benchmarks.gsm8k", *section, key)) in str(err.value)


def test_bundled_benchmarks_are_valid() -> None:
    params = validate_params(load_params(REPO / "params.yaml"))
    for name, entry in params.benchmarks.items():
        assert params.benchmark(name) is entry
        assert {"item", "question"} <= set(entry.items.fields)


@pytest.mark.parametrize("name", ["my.bench", "-x", "a b", "ü", "_x", ""])
def test_a_benchmark_name_dvc_cannot_take_is_refused(name: str) -> None:
    """Issue 31: ``my.bench`` passed, then every ``dvc repro`` failed (DVC reads the dot)."""
    params = load_params(REPO / "params.yaml")
    params["benchmarks"][name] = params["benchmarks"]["gsm8k"]
    with pytest.raises(ConfigError, match=r"not a benchmark name: use letters, digits, '-'"):
        validate_params(params)


@pytest.mark.parametrize("name", ["gsm8k", "math-l5", "MMLU_pro", "2wiki"])
def test_names_of_letters_digits_dash_underscore_pass(name: str) -> None:
    params = load_params(REPO / "params.yaml")
    params["benchmarks"] = {name: params["benchmarks"]["gsm8k"]}
    assert list(validate_params(params).benchmarks) == [name]


def test_an_unconfigured_name_lists_the_configured_ones() -> None:
    params = validate_params(load_params(REPO / "params.yaml"))
    with pytest.raises(ConfigError, match=r"params.yaml: no benchmark 'gsm9k'; configured: gsm8k"):
        params.benchmark("gsm9k")


def test_unmapped_item_and_question_read_the_fields_of_their_name() -> None:
    params = load_params(REPO / "params.yaml")
    entry = params["benchmarks"]["gsm8k"]
    entry["items"]["fields"] = {"answer": "target"}
    fields = validate_params(params).benchmark("gsm8k").items.fields
    assert fields == {"item": "item", "question": "question", "answer": "target"}
    del entry["items"]["fields"]
    assert validate_params(params).benchmark("gsm8k").items.fields == {
        "item": "item",
        "question": "question",
    }
