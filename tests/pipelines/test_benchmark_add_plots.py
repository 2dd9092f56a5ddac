"""`curate benchmark add` gives the new benchmark its column in dvc.yaml's ECDF plot."""

from __future__ import annotations

import yaml

from curation.commands.benchmark import _with_plot_column
from tests.conftest import REPO


def test_the_bundled_plot_gains_the_new_column_and_stays_yaml():
    text = (REPO / "dvc.yaml").read_text()
    new = _with_plot_column(text, "mine", ["gsm8k", "math-l5", "crux"])
    assert new is not None
    (ecdf,) = (p for p in yaml.safe_load(new)["plots"] if "y" in str(p))
    columns = next(iter(ecdf.values()))["y"]["plots/gaps-data/ecdf.csv"]
    assert columns == ["uniform", "gsm8k", "math-l5", "crux", "mine"]
    assert new.replace(", mine]", "]", 1) == text  # nothing else touched


def test_no_edit_when_the_plot_lists_no_benchmark_or_already_has_it():
    text = "plots:\n  - e:\n      y:\n        plots/gaps-data/ecdf.csv: [uniform, a]\n"
    assert _with_plot_column(text, "b", ["x"]) is None  # lists none of ours
    assert _with_plot_column(text, "a", ["a"]) is None  # already there
    assert _with_plot_column("stages: {}\n", "b", ["a"]) is None  # no such plot
