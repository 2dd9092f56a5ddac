"""The shipped params.yaml parses, and every section passes its own settings check."""

from __future__ import annotations

from curation.params import load_params
from curation.params_model import read_params
from tests.conftest import REPO


def test_shipped_params_parse_for_every_stage():
    params = load_params(REPO / "params.yaml")
    validated = read_params(REPO / "params.yaml")  # benchmarks, annotate, check, mirt
    names = list(validated.benchmarks)
    assert {"gsm8k", "math-l5", "crux"} <= set(names)
    for name in names:
        assert validated.benchmark(name).responses is not None
    assert validated.collect.enabled is False, "the default imports real responses"
    assert validated.panel is not None and len(validated.panel.models) >= 2
    assert validated.judge.resolved(validated.collect.backend).simulated
    from curation.subsets import subsets_config

    for name in names:
        subsets_config(params, name)
    assert validated.gaps.targets == params["gaps"]["targets"]
    assert validated.mirt.pool(validated.benchmarks) == names
