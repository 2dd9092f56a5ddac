"""Every key of a benchmark entry is checked: a typo is refused with the valid keys."""

from __future__ import annotations

import copy

import pytest

from curation.errors import ConfigError
from curation.params import benchmark_spec, load_params
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
    with pytest.raises(ConfigError, match=f"{key}: unknown key; valid keys: ") as err:
        benchmark_spec(params, "gsm8k")
    assert ".".join(("benchmarks.gsm8k", *section, key)) in str(err.value)


def test_bundled_benchmarks_are_valid() -> None:
    params = load_params(REPO / "params.yaml")
    for name in params["benchmarks"]:
        benchmark_spec(params, name)
