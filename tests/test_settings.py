"""params sections are read one way: unknown keys, wrong types and bad ranges are one
clear ConfigError naming the key path (no traceback, no partial run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from curation.errors import ConfigError
from curation.settings import Section, parse_section


class _Toy(Section):
    n: int = 1
    name: str = "x"


def test_defaults_and_values() -> None:
    assert parse_section(_Toy, None, where="p: toy") == _Toy()
    assert parse_section(_Toy, {"n": 3}, where="p: toy").n == 3


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ({"nn": 3}, "p: toy.nn: unknown setting; did you mean 'n'? valid: n, name"),
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


def _toy_with(section: str, value: object) -> dict[str, object]:
    from tests.conftest import TOY_PARAMS

    return {**yaml.safe_load(TOY_PARAMS), section: value}


@pytest.mark.parametrize(
    ("section", "key_path"),
    [
        ({"seed": "abc"}, "annotate.seed"),
        ({"seed": -1}, "annotate.seed"),
        ({"laplace_draws": 0}, "annotate.laplace_draws"),
        ({"model": "4pl"}, "annotate.model"),
        ({"choice": {"folds": 1}}, "annotate.choice.folds"),
        ({"settings": {"c_mean": 0.5, "c_strength": 1.5}}, "annotate.settings.c_strength"),
        ({"modle": "1pl"}, "annotate.modle"),
        ({"settings": {"b_prior": 2.0}}, "annotate.settings.b_prior"),
        ({"settings": {"b_sd": 0.0}}, "annotate.settings.b_sd"),
        ({"settings": {"target_accept": 1.0}}, "annotate.settings.target_accept"),
        ({"settings": {"chains": 0}}, "annotate.settings.chains"),
        ({"settings": {"tol": "1e-8"}}, "annotate.settings.tol"),  # YAML reads 1e-8 as text
        ({"settings": {"chain_method": "threads"}}, "annotate.settings.chain_method"),
    ],
)
def test_annotate_section(section: dict[str, object], key_path: str) -> None:
    from curation.params_model import validate_params

    with pytest.raises(ConfigError, match=rf"params.yaml: {key_path}: "):
        validate_params(_toy_with("annotate", section))


def test_annotate_fit_settings_are_what_the_fit_reads() -> None:
    """``annotate.settings`` is the fit's own FitSettings (one declaration): what params.yaml
    sets is what a calibration records, the rest its defaults."""
    from curation.irt import FitSettings
    from curation.params_model import validate_params

    params = validate_params(_toy_with("annotate", {"settings": {"b_sd": 2.0, "max_iter": 50}}))
    settings = params.annotate.settings
    assert isinstance(settings, FitSettings)
    assert settings == FitSettings.of(b_sd=2.0, max_iter=50)
    assert settings.to_dict("map") == {
        "theta_sd": 3.0,
        "b_sd": 2.0,
        "log_a_sd": 0.5,
        "max_iter": 50,
        "tol": 1e-8,
    }
    assert FitSettings.of(settings, b_sd=1.0).b_sd == 1.0  # keywords over a FitSettings
    assert validate_params(_toy_with("annotate", {})).annotate.settings == FitSettings()


@pytest.mark.parametrize(
    ("section", "key_path"),
    [
        ({"list_limit": 0}, "check.list_limit"),
        ({"warn": {"model_reversal_abve": 0.1}}, "check.warn.model_reversal_abve"),
        ({"warn": {"model_reversal_above": "high"}}, "check.warn.model_reversal_above"),
    ],
)
def test_check_section(section: dict[str, object], key_path: str) -> None:
    from curation.params_model import validate_params
    from tests.conftest import TOY_PARAMS

    with pytest.raises(ConfigError, match=rf"params.yaml: {key_path}: "):
        validate_params({**yaml.safe_load(TOY_PARAMS), "check": section})


def test_mirt_choices_are_the_library_s() -> None:
    """The params model offers exactly the rotations and selection rules the fit knows."""
    from typing import get_args

    from curation.irt.mirt import ROTATIONS, SELECT_RULES, MirtSettings

    fields = MirtSettings.model_fields
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
    from curation.params_model import validate_params

    with pytest.raises(ConfigError, match=rf"params.yaml: {key_path}: "):
        validate_params(_toy_with("mirt", section))


@pytest.mark.parametrize(
    ("pool", "says"),
    [
        (["toy", "nope"], r"mirt.benchmarks: not configured in `benchmarks`: \['nope'\]"),
        (["toy"], r"mirt.benchmarks: a joint fit needs at least two benchmarks, got \['toy'\]"),
    ],
)
def test_mirt_pool_is_checked_against_the_benchmarks(pool: list[str], says: str) -> None:
    """What the mirt stage would refuse, ``curate validate`` refuses (the same message)."""
    from curation.params_model import validate_params

    with pytest.raises(ConfigError, match=rf"^params.yaml: {says}$"):
        validate_params(_toy_with("mirt", {"benchmarks": pool}))


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"targets": ["gaussian"]}, r"gaps.targets\[0\]: unknown target 'gaussian'"),
        ({"targets": ["uniform", {"kind": "beta", "a": 0, "b": 2}]}, r"gaps.targets\[1\]: Beta.a"),
        ({"targets": ["benchmark:"]}, r"gaps.targets\[0\]: name the benchmark"),
        ({"targets": ["benchmark:nope"]}, r"gaps.targets: no benchmark 'nope' \(configured: toy\)"),
        ({"thresholds": {"max_gp": 0.1}}, r"gaps.thresholds.max_gp: unknown setting"),
        ({"intervals": {"replicates": 1}}, r"gaps.intervals.replicates: "),
    ],
)
def test_gaps_section(section: dict[str, object], says: str) -> None:
    """A target the gaps stage could not build is refused by ``curate validate`` too."""
    from curation.params_model import validate_params

    with pytest.raises(ConfigError, match=rf"^params.yaml: {says}"):
        validate_params(_toy_with("gaps", section))


def test_a_partial_gaps_section_keeps_the_other_defaults() -> None:
    from curation.measure import GapsSettings, IntervalSettings, ThresholdSettings
    from curation.params_model import validate_params

    gaps = validate_params(
        _toy_with("gaps", {"thresholds": {"ddm": 0.2}, "intervals": {"seed": 3}})
    ).gaps
    assert gaps.thresholds == ThresholdSettings(ddm=0.2)
    assert gaps.thresholds.max_gap == ThresholdSettings().max_gap
    assert gaps.intervals == IntervalSettings(seed=3)
    assert gaps.model_dump(exclude={"thresholds", "intervals"}) == GapsSettings().model_dump(
        exclude={"thresholds", "intervals"}
    )
    ok = validate_params(_toy_with("gaps", {"targets": ["uniform", "benchmark:toy"]}))
    assert ok.gaps.target_benchmarks() == ["toy"]


def test_build_section_resolves_per_benchmark() -> None:
    """What the build stage reads per benchmark, from the validated ``build:`` section."""
    from curation.params_model import validate_params
    from curation.paths import DIST_ROOT, REVIEW_DECISIONS

    default = validate_params(_toy_with("build", {})).build
    assert default.version_for("toy") == "auto" and default.dist == DIST_ROOT
    assert default.accepted_path("toy") == Path("data/review/export/toy.parquet")
    assert default.decisions == REVIEW_DECISIONS and default.repo_id_for("toy") is None
    assert default.card.pretty_name_for("toy") is None
    assert default.card.task_categories_for("math") is None
    build = validate_params(
        _toy_with(
            "build",
            {
                "version": {"toy": "2.0.0"},
                "repo_id": "org/{benchmark}-x",
                "accepted": "acc/{benchmark}.parquet",
                "card": {"pretty_name": {"toy": "Toy"}, "task_categories": {"math": ["qa"]}},
            },
        )
    ).build
    assert build.version_for("toy") == "2.0.0" and build.version_for("other") == "auto"
    assert build.repo_id_for("toy") == "org/toy-x"
    assert build.accepted_path("toy") == Path("acc/toy.parquet")
    assert build.card.pretty_name_for("toy") == "Toy" and build.card.pretty_name_for("b") is None
    assert build.card.task_categories_for("math") == ("qa",)
    assert build.card.task_categories_for("code") is None
    for bad, key in (({"version": "1.0"}, "version"), ({"max_shard_rows": 0}, "max_shard_rows")):
        with pytest.raises(ConfigError, match=rf"params.yaml: build.{key}"):
            validate_params(_toy_with("build", bad))


# ---- the whole file: schemas/params.schema.json ---------------------------------------------

REPO = Path(__file__).resolve().parent.parent


def test_committed_schema_is_the_generated_one() -> None:
    """After a section gains a key: `curate schema --write` (this fails until then)."""
    from curation.commands.validate import GENERATED, schema_text

    for path in GENERATED:
        assert path.read_text(encoding="utf-8") == schema_text(path), path


def test_shipped_and_toy_params_validate_under_json_schema() -> None:
    """The JSON Schema itself (not only the pydantic model) accepts the shipped files."""
    import jsonschema

    from tests.conftest import TOY_PARAMS

    schema = json.loads((REPO / "schemas" / "params.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    shipped = _drop_nulls(yaml.safe_load((REPO / "params.yaml").read_text()))
    assert list(validator.iter_errors(shipped)) == []
    assert list(validator.iter_errors(_drop_nulls(yaml.safe_load(TOY_PARAMS)))) == []
    bad = {**shipped, "gaps": {**shipped["gaps"], "level": 1.5}}
    assert [e.json_path for e in validator.iter_errors(bad)] == ["$.gaps.level"]


def _drop_nulls(value: object) -> object:
    from curation.params_model import _drop_nulls as drop

    return drop(value)


def test_curate_validate_on_the_shipped_params_prints_ok(capsys: pytest.CaptureFixture) -> None:
    from curation.cli import main

    assert main(["validate", "--params", str(REPO / "params.yaml"), "--schema-only"]) == 0
    assert capsys.readouterr().out.strip().endswith("params.yaml: OK")


TYPOS = [
    # (dotted path to rename, new key, key path in the message, closest valid key)
    ("gaps.thresholds", "threshold", "gaps.threshold", "thresholds"),
    ("gaps.thresholds.max_gap", "max_gp", "gaps.thresholds.max_gp", "max_gap"),
    ("subsets.sizes", "size", "subsets.size", "sizes"),
    ("subsets", "subset", "subset", "subsets"),
    ("annotate.laplace_draws", "laplace_draw", "annotate.laplace_draws", "laplace_draws"),
    ("benchmarks.gsm8k.license", "licence", "benchmarks.gsm8k.licence", "license"),
    (
        "benchmarks.crux.items.answer_type",
        "answer_typ",
        "benchmarks.crux.items.answer_typ",
        "answer_type",
    ),
    (
        "benchmarks.math-l5.responses.n_trials",
        "ntrials",
        "benchmarks.math-l5.responses.ntrials",
        "n_trials",
    ),
    ("mirt.rotation", "rotaton", "mirt.rotaton", "rotation"),
    ("calibrate.adaptive.max_trials", "max_trial", "calibrate.adaptive.max_trial", "max_trials"),
    ("fill.refine.max_trials", "max_trial", "fill.refine.max_trial", "max_trials"),
    ("llm.timeout_s", "timeout", "llm.timeout", "timeout_s"),
    ("judge.response_format", "responseformat", "judge.responseformat", "response_format"),
]


def _rename(params: dict, dotted: str, new: str) -> None:
    *parents, key = dotted.split(".")
    node = params
    for part in parents:
        node = node[part]
    node[new] = node.pop(key)


@pytest.mark.parametrize(("dotted", "new", "path", "closest"), TYPOS, ids=[t[2] for t in TYPOS])
def test_a_typo_names_the_key_path_and_the_closest_key(
    tmp_path: Path, capsys: pytest.CaptureFixture, dotted: str, new: str, path: str, closest: str
) -> None:
    from curation.cli import main

    params = yaml.safe_load((REPO / "params.yaml").read_text())
    if dotted == "annotate.laplace_draws":
        params["annotate"]["laplace_draw"] = 10  # a new misspelt key beside the right one
    else:
        _rename(params, dotted, new)
    copy = tmp_path / "params.yaml"
    copy.write_text(yaml.safe_dump(params, sort_keys=False))
    assert main(["validate", "--params", str(copy), "--schema-only"]) == 2
    err = capsys.readouterr().err.strip()
    if dotted == "annotate.laplace_draws":
        path = "annotate.laplace_draw"
    assert err.startswith(f"error: {copy}: {path}: unknown setting; did you mean {closest!r}?")
    assert err.count("\n") == 0
