"""The card's provenance names the panel's models: every one of a panel, the first and
last few of a leaderboard (a card must not grow with thousands of names)."""

from __future__ import annotations

from curation.publish._card import _model_list
from curation.report.panel import LISTED_MODELS, SHOWN_EXTREMES


def test_a_panel_is_listed_whole_and_a_leaderboard_by_its_ends():
    panel = [f"m{i:02d}" for i in range(40)]
    assert _model_list(panel) == ", ".join(panel)
    board = [f"org/model-{i:05d}" for i in range(4030)]
    text = _model_list(board)
    assert text.startswith("4,030 models, by name org/model-00000, ")
    assert f"({4030 - 2 * SHOWN_EXTREMES:,} more)" in text and text.endswith("org/model-04029")
    assert text.count("org/model-") == 2 * SHOWN_EXTREMES
    edge = [f"m{i}" for i in range(LISTED_MODELS)]
    assert _model_list(edge) == ", ".join(edge)
