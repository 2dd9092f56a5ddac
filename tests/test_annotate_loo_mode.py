"""annotate states which leave-one-model-out mode ran (issue 30 item 2).

(Here rather than in tests/pipelines, which another change owns at the moment.)
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.stage_cli import run_stage


def _annotate(toy_project: Path, capsys, **annotate: int) -> tuple[dict, str]:
    params = yaml.safe_load((toy_project / "params.yaml").read_text())
    params.setdefault("annotate", {}).update(annotate)
    (toy_project / "params.yaml").write_text(yaml.safe_dump(params))
    assert run_stage(["ingest"]) == 0 and run_stage(["responses"]) == 0
    capsys.readouterr()
    assert run_stage(["annotate"]) == 0
    out = capsys.readouterr().out
    return json.loads((toy_project / "metrics/irt/toy.json").read_text()), out


def test_small_panel_refits_every_model_and_writes_the_metrics_as_before(
    toy_project: Path, capsys
) -> None:
    metrics, out = _annotate(toy_project, capsys)
    assert set(metrics["loo"]) == {
        "max_abs_dz", "mean_abs_dz", "max_abs_dz_aligned", "mean_abs_dz_aligned",
        "min_spearman_b", "mean_spearman_b", "most_influential_model",
    }  # fmt: skip
    assert "exact refits)" in out


def test_above_the_threshold_the_approximation_runs_and_says_so(toy_project: Path, capsys) -> None:
    metrics, out = _annotate(toy_project, capsys, loo_exact_max_models=2, loo_exact_top=1)
    loo = metrics["loo"]
    assert loo["mode"] == "approximate" and loo["n_exact"] == 1
    assert loo["approx_tol"] > 0 and loo["approx_error"] >= 0
    assert "approximate, 1 exact refits" in out
