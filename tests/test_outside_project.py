"""Commands run outside a project say so ("no params.yaml here"), instead of pointing at
`dvc repro` or a queue to seed, and leave the folder as it was (issue 32, item 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.cli import main

COMMANDS = [
    ["review", "seed"],
    ["review", "serve"],
    ["review", "stats"],
    ["review", "export"],
    ["publish", "gsm8k", "--repo-id", "me/gsm8k", "--version", "1.0.0", "--dry-run"],
    ["power", "-b", "gsm8k"],
    ["summary"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=[" ".join(c[:2]) for c in COMMANDS])
def test_outside_a_project_the_message_says_so(argv, tmp_path: Path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "params.yaml" in err and ("no params.yaml here" in err or "not found" in err)
    assert "dvc repro" not in err and "review seed" not in err
    assert list(tmp_path.iterdir()) == []  # nothing created (export once made a queue)
