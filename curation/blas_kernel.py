"""Pick OpenBLAS's kernels before numpy loads, so x86-64 machines compute the same bits.

Imported first in every stage script, through :mod:`curation.stage_start` (before numpy,
scipy or polars). OpenBLAS chooses
its kernels by CPU when the library loads: SkylakeX on an AVX-512 machine, Haswell on
an AVX2 one. Each kernel sums in its own order, so a fit's last bits differ between
machines. Most stages write numbers rounded to 10 significant digits
(:mod:`curation.io.precision`), which hides that; the multidimensional fit does not
settle that closely (its d = 2 optimum is flat, and L-BFGS-B stops at a point that
depends on those bits), and its loadings differed in the fourth digit between kernels.

On Linux x86-64 with AVX2 and FMA this sets ``OPENBLAS_CORETYPE=Haswell``: the same
instructions on every such CPU (Intel since 2013, AMD since Zen), at no measured cost
on the bundled fits. A value the caller already set is kept; elsewhere (ARM, macOS,
an x86 without AVX2) nothing is changed and results may differ in the last digits.
Nothing happens once numpy is loaded (a notebook, the tests): the library is loaded
by then.
"""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Mapping
from pathlib import Path

CORETYPE = "Haswell"
"""The OpenBLAS kernel set every x86-64 Linux machine with AVX2 and FMA runs."""


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> set[str]:
    """The CPU's feature flags from ``/proc/cpuinfo`` (empty where there is none)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.partition(":")[2].split())
    return set()


def chosen_coretype(
    system: str, machine: str, flags: set[str], environ: Mapping[str, str]
) -> str | None:
    """The ``OPENBLAS_CORETYPE`` to set, or None to leave OpenBLAS alone."""
    if environ.get("OPENBLAS_CORETYPE"):
        return None  # the caller chose
    if system != "Linux" or machine not in ("x86_64", "AMD64"):
        return None
    return CORETYPE if {"avx2", "fma"} <= flags else None


def pin_kernels() -> str | None:
    """Set ``OPENBLAS_CORETYPE`` for this process if it pays; return what was set."""
    if "numpy" in sys.modules:
        return None
    choice = chosen_coretype(platform.system(), platform.machine(), cpu_flags(), os.environ)
    if choice is not None:
        os.environ["OPENBLAS_CORETYPE"] = choice
    return choice


pin_kernels()
