"""`curate --help` lists every subcommand with one line each."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from curation.cli import build_parser


def test_help_lists_every_subcommand_with_a_line():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    out = subprocess.run(
        [sys.executable, "-m", "curation.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for name, action in sub.choices.items():
        assert name in out
        assert action.description or sub._choices_actions, name
    for choice in sub._choices_actions:
        assert choice.help and "\n" not in choice.help, choice.dest


def test_console_script_is_installed():
    curate = Path(sys.executable).parent / "curate"
    out = subprocess.run([str(curate), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and "review" in out.stdout and "dvc repro" in out.stdout


def test_pipeline_stages_are_not_curate_subcommands():
    """A stage has one entry (its pipelines/ script, run by DVC), not a second one here."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    stages = {p.stem for p in (Path(__file__).parent.parent / "pipelines").glob("*.py")}
    assert not (set(sub.choices) & (stages - {"__init__", "responses"}))
