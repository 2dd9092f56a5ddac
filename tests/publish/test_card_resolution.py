"""The card's resolution and anchoring section: levels, resolution, clipped counts, span."""

from __future__ import annotations

import numpy as np

from curation.measure import Panel, Resolution
from curation.publish._card_resolution import resolution_lines


def test_card_states_resolution_clipping_and_panel_span() -> None:
    """GSM8K-like: 743 of 1,319 items below the weakest model (issue 13)."""
    z = np.concatenate([np.zeros(743), np.linspace(0.05, 1.0, 576)])
    res = Resolution.from_steps(
        z,
        np.clip(z - 0.04, 0, 1),
        np.clip(z + 0.04, 0, 1),
        panel=Panel(-2.94, 1.48, weakest="gemma-2-2b-it", strongest="gpt-4o", n_models=42),
        trials_per_cell=1,
    )
    text = "\n".join(resolution_lines(res.to_metrics()))
    assert "**distinct z levels:** 577" in text and "**Resolution:** 0.040" in text
    assert "**Clipped at z = 0** (easier than the weakest model, gemma-2-2b-it): 743 (56%)" in text
    assert "56% of items (743 of 1,319) sit below the panel's weakest model" in text
    assert "-2.94 to 1.48 logits (4.42) over 42 models" in text
    assert "cannot resolve" not in text  # every step is 0.04


def test_card_says_when_the_data_cannot_resolve_the_flag_threshold() -> None:
    z = np.round(np.arange(0.0, 1.0 + 1e-9, 0.12), 6)
    res = Resolution.from_steps(
        z,
        np.clip(z - 0.12, 0, 1),
        np.clip(z + 0.12, 0, 1),
        panel=Panel(-2.0, 2.0, weakest="w", strongest="s", n_models=5),
        trials_per_cell=1,
    )
    text = "\n".join(resolution_lines(res.to_metrics()))
    assert "cannot resolve gaps at the 0.10 flag threshold" in text and "more trials" in text


def test_card_says_when_resolution_is_unavailable() -> None:
    assert "Not available" in "\n".join(resolution_lines({"unavailable": "no calibration"}))
    assert resolution_lines({}) == []
