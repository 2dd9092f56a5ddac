"""The shipped params.yaml parses, and every section passes its own settings check."""

from __future__ import annotations

from curation.params import benchmark_names, benchmark_spec, load_params
from curation.params_model import validate_params
from tests.conftest import REPO


def test_shipped_params_parse_for_every_stage():
    params = load_params(REPO / "params.yaml")
    names = benchmark_names(params)
    assert {"gsm8k", "math-l5", "crux"} <= set(names)
    for name in names:
        spec = benchmark_spec(params, name)
        assert spec.responses is not None
    checked = validate_params(params)
    assert checked.collect.enabled is False, "the default imports real responses"
    assert checked.panel is not None and len(checked.panel.models) >= 2
    assert checked.judge.resolved(checked.collect.backend).simulated
    from curation.subsets import subsets_config
    from pipelines import annotate, gaps, mirt

    for name in names:
        subsets_config(params, name)
    annotate._settings(params)
    gaps._settings(params)
    mirt.settings_from_params(params)
