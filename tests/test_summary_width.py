"""`curate summary` fits a 100-column terminal: on the bundled benchmarks' committed
metrics it printed tables 124 to 138 columns wide (issue 32, item 9)."""

from __future__ import annotations

from curation.params_model import read_params
from curation.summary import print_summary
from tests.conftest import REPO


def test_summary_of_the_bundled_benchmarks_fits_100_columns(monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert print_summary(read_params("params.yaml")) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) > 40  # every table printed, none a row of dashes only
    wide = [line for line in lines if len(line) > 100]
    assert not wide, wide
