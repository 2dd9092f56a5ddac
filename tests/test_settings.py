"""params sections are read one way: unknown keys, wrong types and bad ranges are one
clear ConfigError naming the key path (no traceback, no partial run)."""

from __future__ import annotations

import importlib

import pytest

from curation.errors import ConfigError
from curation.settings import Section, parse_section

annotate = importlib.import_module("pipelines.annotate")
check = importlib.import_module("pipelines.check")


class _Toy(Section):
    n: int = 1
    name: str = "x"


def test_defaults_and_values() -> None:
    assert parse_section(_Toy, None, where="p: toy") == _Toy()
    assert parse_section(_Toy, {"n": 3}, where="p: toy").n == 3


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"nn": 3}, "p: toy.nn: unknown setting; valid: n, name"),
        ({"n": "abc"}, "p: toy.n: Input should be a valid integer"),
        ([1, 2], "p: toy: expected a mapping, got list"),
    ],
)
def test_errors_name_the_key_path(raw: object, says: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_section(_Toy, raw, where="p: toy")
    assert str(err.value).startswith(says)


def test_frozen() -> None:
    with pytest.raises(ValueError):
        parse_section(_Toy, {}, where="p").n = 2  # type: ignore[misc]


@pytest.mark.parametrize(
    ("section", "key_path"),
    [
        ({"seed": "abc"}, "annotate.seed"),
        ({"seed": -1}, "annotate.seed"),
        ({"laplace_draws": 0}, "annotate.laplace_draws"),
        ({"model": "3pl"}, "annotate.model"),
        ({"modle": "1pl"}, "annotate.modle"),
    ],
)
def test_annotate_section(section: dict[str, object], key_path: str) -> None:
    with pytest.raises(ConfigError, match=rf"params.yaml: {key_path}: "):
        annotate._settings({"annotate": section})


@pytest.mark.parametrize(
    ("section", "key_path"),
    [
        ({"list_limit": 0}, "check.list_limit"),
        ({"warn": {"model_reversal_abve": 0.1}}, "check.warn.model_reversal_abve"),
        ({"warn": {"model_reversal_above": "high"}}, "check.warn.model_reversal_above"),
    ],
)
def test_check_section(section: dict[str, object], key_path: str) -> None:
    with pytest.raises(ConfigError, match=rf"params.yaml: {key_path}: "):
        check.run({"check": section}, "toy")


def test_mirt_choices_are_the_library_s() -> None:
    """The params model offers exactly the rotations and selection rules the fit knows."""
    from typing import get_args

    from curation.irt.mirt import ROTATIONS, SELECT_RULES

    mirt = importlib.import_module("pipelines.mirt")
    fields = mirt.MirtSettings.model_fields
    assert get_args(fields["rotation"].annotation) == ROTATIONS
    assert get_args(fields["select"].annotation) == SELECT_RULES


@pytest.mark.parametrize(
    ("section", "key_path"),
    [
        ({"dmax": 3}, "mirt.dmax"),
        ({"holdout": 1.0}, "mirt.holdout"),
        ({"priors": {"theta_sd": 0}}, "mirt.priors.theta_sd"),
        ({"common_models": "yes"}, "mirt.common_models"),
    ],
)
def test_mirt_section(section: dict[str, object], key_path: str) -> None:
    mirt = importlib.import_module("pipelines.mirt")
    params = {"benchmarks": {"a": {}, "b": {}}, "mirt": section}
    with pytest.raises(ConfigError, match=rf"params.yaml: {key_path}: "):
        mirt.settings_from_params(params)
