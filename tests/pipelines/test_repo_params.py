"""The shipped params.yaml validates, and every stage's view of it is what the file says."""

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
    for name in names:
        subsets = validated.subsets
        assert subsets.sizes_for(name) == tuple(params["subsets"]["sizes"])
        assert [t.name for t in subsets.targets_for(name)] == ["uniform", "beta_2_2"]
        assert subsets.reference_for(name).kind == params["subsets"]["reference"]["kind"]
    assert validated.gaps.targets == params["gaps"]["targets"]
    assert validated.plots.format == params["plots"]["format"]
    assert validated.build.version_for(names[0]) == params["build"]["version"]
    assert validated.mirt.pool(validated.benchmarks) == names
