"""Online calibration's pieces: the stopping rule, the panel, settings, gradability."""

from __future__ import annotations

import re

import pytest

from curation.calibrate import (
    AdaptiveSettings,
    CalibrateSettings,
    decide,
    gradable_problem,
    select_panel,
)
from curation.errors import ConfigError
from curation.irt import Calibration
from curation.llm import PanelModel
from curation.params_model import ParamsFile, validate_params
from tests.conftest import minimal_benchmark


def _params(**sections: object) -> ParamsFile:
    return validate_params({"benchmarks": {"toy": minimal_benchmark("toy")}, **sections})


# ---- the stopping rule ----------------------------------------------------------------------


def test_decide_rule():
    rule = AdaptiveSettings(se_accept=0.03, reject_k=2.0, max_trials=32)
    kw = dict(target_z=0.5, tolerance=0.01, rule=rule, bound=None)
    assert decide(z=0.8, se_z=0.1, lo=0.6, hi=1.0, trials_per_model=2, **kw) == "off-target"
    assert decide(z=0.55, se_z=0.05, lo=0.45, hi=0.65, trials_per_model=2, **kw) is None
    # inside the tolerance, but SE(z) 0.02 > tolerance/2: not on target yet, keep going
    assert decide(z=0.505, se_z=0.02, lo=0.46, hi=0.55, trials_per_model=8, **kw) is None
    assert decide(z=0.505, se_z=0.005, lo=0.49, hi=0.52, trials_per_model=8, **kw) == "accepted"
    assert decide(z=0.505, se_z=0.02, lo=0.46, hi=0.55, trials_per_model=32, **kw) == "budget"
    assert decide(z=0.52, se_z=0.02, lo=0.48, hi=0.56, trials_per_model=8, **kw) == "measured"
    assert decide(z=0.52, se_z=0.05, lo=0.42, hi=0.62, trials_per_model=32, **kw) == "budget"
    bounded = {**kw, "bound": "all-solved"}
    assert decide(z=0.5, se_z=0.01, lo=0.0, hi=0.6, trials_per_model=8, **bounded) is None
    fixed = {**kw, "rule": AdaptiveSettings(enabled=False, max_trials=32)}
    assert decide(z=0.9, se_z=0.01, lo=0.88, hi=0.92, trials_per_model=8, **fixed) is None
    assert decide(z=0.505, se_z=0.01, lo=0.4, hi=0.6, trials_per_model=32, **fixed) == "budget"
    assert decide(z=0.505, se_z=0.004, lo=0.4, hi=0.6, trials_per_model=32, **fixed) == "accepted"


def test_calibrate_is_its_own_section():
    s = _params().calibrate
    assert (s.backend, s.seed, s.panel, s.tolerance) == (None, 0, None, 0.01)
    assert s.adaptive == AdaptiveSettings() == CalibrateSettings().adaptive
    assert s.backend_or("openai") == "openai"  # null follows collect.backend
    assert _params(calibrate={"backend": "simulate"}).calibrate.backend_or("openai") == "simulate"
    assert _params(calibrate={"panel": ["a"]}).calibrate.panel == ["a"]
    for bad, where in [
        ({"adaptive": {"se": 0.1}}, "calibrate.adaptive.se"),
        ({"adaptive": {"first_batch": 64}}, "calibrate.adaptive.first_batch"),
        ({"adaptive": {"se_accept": 0}}, "calibrate.adaptive.se_accept"),
        ({"backend": "local"}, "calibrate.backend"),
        ({"tolerance": -1}, "calibrate.tolerance"),
        ({"seed": 1.5}, "calibrate.seed"),
        ({"panel": []}, "calibrate.panel"),
        ({"rounds": 2}, "calibrate.rounds"),  # BenchFill's search keys stay in fill
    ]:
        with pytest.raises(ConfigError, match=f"^params\\.yaml: {re.escape(where)}: "):
            _params(calibrate=bad)
    with pytest.raises(ConfigError, match=re.escape("must be at most max_trials (32) (got 64)")):
        _params(calibrate={"adaptive": {"first_batch": 64}})


def test_gradable_problems():
    assert gradable_problem("42", "numeric", None) is None
    assert "not a number" in gradable_problem("forty-two", "numeric", None)
    assert gradable_problem("", "exact", None) == "no reference answer"
    assert "sandbox" in gradable_problem("print(1)", "code", None)
    assert "judge" in gradable_problem("anything", "free", None)
    assert "options" in gradable_problem("B", "choice", None)
    assert gradable_problem("B", "choice", ("x", "y", "z")) is None
    assert "not one of" in gradable_problem("E", "choice", ("x", "y"))


# ---- the calibrating panel ------------------------------------------------------------------


def test_panel_must_be_calibrated_models():
    cal = Calibration(
        model="1pl",
        abilities={"a": -1.0, "b": 0.5, "c": 1.0},
        scale={"method": "panel", "theta_min": -1.0, "theta_max": 1.0},
        panel=("a", "b", "c"),
    )
    simulate = {"backend": "simulate", "benchmark": "t"}
    sim = select_panel(CalibrateSettings(), cal, None, **simulate)
    assert [(m.name, m.ability) for m in sim] == [("a", -1.0), ("b", 0.5), ("c", 1.0)]
    sub = select_panel(CalibrateSettings(panel=["a", "c"]), cal, None, **simulate)
    assert [m.name for m in sub] == ["a", "c"]
    with pytest.raises(ConfigError, match=r"calibrate\.panel: \['x'\] not in the calibration"):
        select_panel(CalibrateSettings(panel=["a", "x"]), cal, None, **simulate)
    real = {"backend": "openai", "benchmark": "t"}
    configured = [PanelModel(name=n, model_id=n) for n in ("a", "c", "smollm")]
    chosen = select_panel(CalibrateSettings(), cal, configured, **real)
    assert [m.name for m in chosen] == ["a", "c"]
    others = [PanelModel(name=n, model_id=n) for n in ("smollm", "qwen")]
    with pytest.raises(ConfigError, match="collect.enabled: true"):
        select_panel(CalibrateSettings(), cal, others, **real)
