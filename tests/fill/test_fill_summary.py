"""`curate summary`'s gap-filling table says which z each figure is on."""

from __future__ import annotations

import json

from curation.paths import fill_metrics_path
from curation.summary import fill_items_table, fill_table


def _method(red: float, true_red: float | None, dev: float, true_dev: float | None) -> dict:
    return {
        "n_inserted": 3,
        "top_3_reduction_pct": red,
        "true_top_3_reduction_pct": true_red,
        "target_dev": dev,
        "target_dev_se": 0.012,
        "n_on_target": 1,
        "true_target_dev": true_dev,
        "trials_per_insertion": 9000.0,
        "trials_vs_fixed": 0.05,
    }


def test_simulated_runs_print_estimated_and_true_rows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, true in (("sim", {"world": {}}), ("real", None)):
        path = fill_metrics_path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        t = 20.0 if true else None
        methods = {
            "benchfill": _method(12.5, t, 0.021, 0.006 if true else None),
            "baseline": _method(8.0, 9.0 if true else None, 0.05, None),
            "oracle": _method(29.0, 30.0 if true else None, 0.0, None),
        }
        metrics = {"source": "simulated" if true else "collected", "insertions": 3}
        metrics |= {"top_3_before": 0.17, "true": true, "methods": methods}
        path.write_text(json.dumps(metrics))
    lines = fill_table(["sim", "real"]).splitlines()
    assert "z" in lines[0].split()
    sim = [ln for ln in lines if ln.startswith("sim")]
    assert len(sim) == 1 and "estimated" in sim[0] and "-12.5%" in sim[0]
    true_row = lines[lines.index(sim[0]) + 1]
    assert "true (sim.)" in true_row and "-20.0%" in true_row and "-30.0%" in true_row
    real = [ln for ln in lines if ln.startswith("real")]
    assert "estimated" in real[0]
    assert not any("true" in ln for ln in lines[lines.index(real[0]) :])  # no truth to show

    items = fill_items_table(["sim", "real"]).splitlines()
    sim = [ln for ln in items if ln.startswith("sim")]
    assert len(sim) == 1 and "0.0210 ± 0.0120" in sim[0] and "1/3" in sim[0]
    true_row = items[items.index(sim[0]) + 1]
    assert "true (sim.)" in true_row and "0.0060" in true_row
    real = [ln for ln in items if ln.startswith("real")]
    assert not any("true" in ln for ln in items[items.index(real[0]) :])


def test_a_run_with_intervals_prints_the_posterior_median_and_its_interval(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = fill_metrics_path("sim")
    path.parent.mkdir(parents=True, exist_ok=True)
    methods = {
        "benchfill": _method(12.5, 20.0, 0.021, 0.006),
        "baseline": _method(8.0, 9.0, 0.05, None),
        "oracle": _method(29.0, 30.0, 0.0, None),
    }
    methods["benchfill"]["top_3_reduction"] = {
        "estimate": 21.3, "low": 15.9, "high": 23.6, "level": 0.9, "draws": 400
    }  # fmt: skip
    methods["oracle"]["top_3_reduction"] = {
        "estimate": 28.0, "low": 27.0, "high": 29.5, "level": 0.9, "draws": 400
    }  # fmt: skip
    metrics = {"source": "simulated", "insertions": 3, "top_3_before": 0.17}
    path.write_text(json.dumps(metrics | {"true": {"world": {}}, "methods": methods}))
    row = next(ln for ln in fill_table(["sim"]).splitlines() if ln.startswith("sim"))
    assert "-21.3 [-23.6, -15.9]%" in row and "-12.5%" not in row  # not the plug-in
    assert "-28.0%" in row and "-8.0%" in row  # the baseline has none: its plug-in
