"""The IRT figures render for 1PL and 2PL fits (including bounded items)."""

from __future__ import annotations

import pytest

from curation.irt import fit, simulate_responses
from curation.plots.irt import plot_difficulty_vs_ability, plot_item_curves


@pytest.mark.parametrize("model", ["1pl", "2pl"])
def test_plots_write_png(tmp_path, model):
    df, _ = simulate_responses(n_models=8, n_items=120, n_trials=2, model=model, seed=51)
    res = fit(df, model=model, benchmark="toy")
    assert res.diagnostics["n_all_solved"] + res.diagnostics["n_none_solved"] > 0
    icc, dva = tmp_path / "icc.png", tmp_path / "sub" / "dva.png"
    plot_item_curves(res, icc, n_items=6)
    plot_difficulty_vs_ability(res, dva)
    for path in (icc, dva):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="n_items"):
        plot_item_curves(res, icc, n_items=0)
