"""Ctrl-C at any time prints one line: during a stage's imports it printed a 40-line
traceback of whichever import was running (issue 32, item 9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tests.conftest import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def test_an_interrupt_before_the_stage_runs_prints_one_line():
    """SIGINT while the script is still importing: deterministic, the signal is sent
    by the process to itself right after the first import of every stage script."""
    code = (
        "import curation.stage_start, os, signal\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "import numpy, polars\n"
        "print('not reached')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=120
    )
    assert proc.stderr == "interrupted\n", proc.stderr
    assert proc.stdout == "" and proc.returncode in (130, -signal.SIGINT)


def test_a_real_stage_interrupted_early_prints_one_line(tmp_path):
    """`python pipelines/gaps.py` interrupted 0.3 s in (its imports take longer)."""
    proc = subprocess.Popen(
        [sys.executable, str(REPO / "pipelines" / "gaps.py")],
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert err.strip().count("\n") == 0, err  # one line, whatever it was doing
    assert "Traceback" not in err
