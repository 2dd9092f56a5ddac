"""Every `curate` command's --help has a description and an example; output to a closed
pipe exits quietly; `curate power`'s progress-bar loop draws exactly what one
power_curve call draws."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from polars.testing import assert_frame_equal

from curation.cli import build_parser
from curation.commands._progress import _power_with_progress
from curation.commands.help import HELP, document, walk
from curation.measure import power_curve

REPO = Path(__file__).resolve().parents[1]
# A user's stdout into a pipe is block-buffered: the write (and a closed pipe's error)
# comes at exit, where a handler around the command no longer sees it.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | {"PYTHONPATH": str(REPO)}
COMMANDS = [path for path, _ in walk(build_parser())]


def test_the_tree_is_what_the_help_table_documents():
    assert "review stats" in COMMANDS and "power" in COMMANDS and len(COMMANDS) >= 18
    assert set(COMMANDS) == set(HELP)  # no command without a page, no page without a command


def _parsers(parser: argparse.ArgumentParser, path: str = "") -> list[tuple[str, Any]]:
    out = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += _parsers(sub, f"{path} {name}".strip())
    return out


def test_every_option_of_every_command_has_help():
    """`curate benchmark add --domain/--license/--source/--answer-type` had none."""
    missing = [
        f"curate {path} {'/'.join(a.option_strings) or a.dest}"
        for path, parser in _parsers(build_parser())
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)
        and not (a.help and a.help.strip())
    ]
    assert not missing, missing


@pytest.mark.parametrize("path", COMMANDS)
def test_every_command_help_has_a_description_and_an_example(path, capsys):
    argv = [*path.split(), "--help"] if path else ["--help"]
    with pytest.raises(SystemExit) as done:
        build_parser().parse_args(argv)
    assert done.value.code == 0
    page = capsys.readouterr().out
    description, example = HELP[path]
    first_words = " ".join(description.split()[:6])
    assert first_words in " ".join(page.split()), page
    assert "\nexample:\n" in page
    example_line = example.splitlines()[0].strip()
    assert example_line.startswith("curate ") or example_line.startswith("HF_TOKEN")
    assert example_line in page


def test_an_undocumented_command_is_refused():
    parser = argparse.ArgumentParser(prog="curate")
    parser.add_subparsers().add_parser("frobnicate")
    with pytest.raises(KeyError, match="curate frobnicate"):
        document(parser)


def test_output_to_a_closed_pipe_exits_quietly(tmp_path):
    """`curate --help | head -0`-style: the reader is gone before curate writes."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "curation.cli", "summary", "--help"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
        env=ENV,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # closed before the child has imported anything, so it writes late
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_review_stats_into_head_exits_zero(tmp_path):
    """The issue's own command line, through a real shell pipe."""
    sys.path.insert(0, str(REPO / "tests" / "review"))
    from review_fixtures import make_project

    make_project(tmp_path)
    env = ENV
    seed = subprocess.run(
        [sys.executable, "-m", "curation.cli", "review", "seed"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert seed.returncode == 0, seed.stderr
    # `true` reads nothing and exits at once; `head -1` may finish before curate writes
    cmd = (
        f"{sys.executable} -m curation.cli review stats | true; a=${{PIPESTATUS[0]}}; "
        f"{sys.executable} -m curation.cli review stats | head -1; exit $((a + PIPESTATUS[0]))"
    )
    proc = subprocess.run(
        ["bash", "-c", cmd], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("queue: ") and proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr


def test_power_progress_loop_draws_what_one_call_draws():
    z = np.linspace(0.0, 1.0, 60) ** 2
    kw = {"n_sims": 30, "alpha": 0.05}
    one = power_curve(z, width=[0.3, 0.02], repeats=[4, 1], seed=7, **kw)
    stepped = _power_with_progress(z, widths=[0.3, 0.02], repeats=[4, 1], seed=7, **kw)
    assert_frame_equal(one, stepped)
