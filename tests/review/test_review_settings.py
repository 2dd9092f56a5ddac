"""params.yaml ``review``: checked when the params are read, defaults the code's own."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.candidates import BASELINE, BENCHFILL, CALIBRATED, INSERTED, JUDGE_REJECTED
from curation.errors import ConfigError
from curation.params_model import ParamsFile, validate_params
from curation.paths import JUDGED_TEMPLATE, REVIEW_DB, REVIEW_RECALIBRATED_TEMPLATE
from curation.review import DEFAULT_GUIDELINES, ReviewSettings
from tests.conftest import minimal_benchmark


def _params(review: dict, names: tuple[str, ...] = ("gsm8k", "crux")) -> ParamsFile:
    return validate_params(
        {"benchmarks": {n: minimal_benchmark(n) for n in names}, "review": review}
    )


def test_defaults():
    s = ReviewSettings()
    assert s.db == REVIEW_DB and s.required_reviews == 1 and s.port == 8765
    assert s.candidates == [Path(JUDGED_TEMPLATE), Path(REVIEW_RECALIBRATED_TEMPLATE)]
    assert s.seed_statuses == [INSERTED, CALIBRATED, JUDGE_REJECTED]
    assert s.seed_methods == [BENCHFILL, BASELINE]  # the oracle never reaches a reviewer
    assert s.guidelines is None and s.guidelines_file == DEFAULT_GUIDELINES
    assert s.accepted_path("toy") == Path("data/review/export/toy.parquet")


def test_paths_are_paths_and_one_candidate_file_is_a_list():
    s = _params({"db": "q.sqlite", "candidates": "x/{benchmark}.parquet", "guidelines": "g.md"})
    assert s.review.db == Path("q.sqlite") and s.review.guidelines_file == Path("g.md")
    assert s.review.candidates == [Path("x/{benchmark}.parquet")]


def test_required_reviews_name_configured_benchmarks():
    ok = _params({"required_reviews": {"gsm8k": 2, "*": 1}})
    assert ok.review.required_reviews == {"gsm8k": 2, "*": 1}
    with pytest.raises(
        ConfigError, match=r"^params.yaml: review.required_reviews.gsm8kk: not a benchmark"
    ):
        _params({"required_reviews": {"gsm8kk": 2}})  # a typo no longer falls back to "*"
    with pytest.raises(ConfigError, match=r"review.required_reviews"):
        _params({"required_reviews": 21})  # at most 20 reviewers, as the queue allows
    with pytest.raises(ConfigError, match=r"review.required_reviews"):
        _params({"required_reviews": 0})


@pytest.mark.parametrize(
    ("review", "message"),
    [
        ({"accepted": "data/accepted.parquet"}, r"review.accepted: expected a path containing"),
        ({"seed_statuses": ["pending"]}, r"review.seed_statuses\[0\]: Input should be .invalid."),
        ({"seed_methods": ["oracle", "magic"]}, r"review.seed_methods\[1\]: Input should be"),
        ({"port": 70000}, r"review.port"),
        ({"dbs": "x"}, r"review.dbs: unknown setting; did you mean 'db'"),
        ({"candidates": []}, r"review.candidates"),
    ],
)
def test_bad_values_name_the_key(review: dict, message: str):
    with pytest.raises(ConfigError, match=message):
        _params(review)
