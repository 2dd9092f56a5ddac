"""`dvc exp run -S key=value` rewrites params.yaml through DVC's own code: a ruamel round
trip and Hydra's override merge, which replaces every list with a new block-style one.
The shipped params.yaml is written in exactly that layout (block collections only, long
strings folded, null as an empty value, no blank line after a section's last list), so
an experiment's ``-S`` changes the line it sets and nothing else (issue 32, item 2: one
value once rewrote 147 lines)."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import yaml
from dvc.utils.hydra import apply_overrides

from tests.conftest import REPO


def _changed(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def _set(tmp_path: Path, *overrides: str) -> tuple[str, str]:
    """params.yaml before and after DVC applies ``-S`` overrides to a copy of it."""
    copy = tmp_path / "params.yaml"
    shutil.copy(REPO / "params.yaml", copy)
    before = copy.read_text(encoding="utf-8")
    apply_overrides(copy, list(overrides))
    return before, copy.read_text(encoding="utf-8")


def test_dvc_rewrite_leaves_params_yaml_as_it_is(tmp_path):
    before, after = _set(tmp_path, "gaps.intervals.seed=0")  # the value it already has
    changed = _changed(before, after)
    assert not changed, "params.yaml is not in DVC's layout:\n" + "\n".join(changed[:20])
    assert "# files per figure" in after  # comments survive


def test_one_set_value_changes_one_line(tmp_path):
    before, after = _set(tmp_path, "gaps.intervals.seed=7")
    diff = _changed(before, after)
    assert len(diff) == 2, diff
    assert diff[0].strip("- ") == "seed: 0" and diff[1].strip("+ ") == "seed: 7"
    values = yaml.safe_load(before)
    values["gaps"]["intervals"]["seed"] = 7
    assert yaml.safe_load(after) == values
