"""The shipped params.yaml parses, and every section passes its own settings check."""

from __future__ import annotations

from curation.llm import collect_settings, llm_settings, panel_models
from curation.params import benchmark_names, benchmark_spec, load_params
from curation.review import review_config
from tests.conftest import REPO


def test_shipped_params_parse_for_every_stage():
    params = load_params(REPO / "params.yaml")
    names = benchmark_names(params)
    assert {"gsm8k", "math-l5", "crux"} <= set(names)
    for name in names:
        spec = benchmark_spec(params, name)
        assert spec.responses is not None
    assert collect_settings(params).enabled is False, "the default imports real responses"
    llm_settings(params)
    assert len(panel_models(params)) >= 2
    review_config(params)
    from curation.judge import judge_settings
    from curation.subsets import subsets_config
    from pipelines import annotate, gaps, mirt

    judge_settings(params)
    for name in names:
        subsets_config(params, name)
    annotate._settings(params)
    gaps._settings(params)
    mirt.settings_from_params(params)
