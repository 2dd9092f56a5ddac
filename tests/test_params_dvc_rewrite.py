"""`dvc exp run -S` rewrites params.yaml through DVC's own ruamel round trip: the layout
changes (README, "Metrics, experiments and sharing"), the values must not."""

from __future__ import annotations

import yaml
from dvc.utils.serialize._yaml import dumps_yaml, parse_yaml_for_update

from tests.conftest import REPO


def test_dvc_round_trip_keeps_every_value_of_params_yaml():
    text = (REPO / "params.yaml").read_text(encoding="utf-8")
    rewritten = dumps_yaml(parse_yaml_for_update(text, "params.yaml"))
    assert rewritten != text  # the layout is DVC's (what the README warns about)
    assert yaml.safe_load(rewritten) == yaml.safe_load(text)
    assert "# files per figure" in rewritten  # comments survive
