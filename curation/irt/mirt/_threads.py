"""Run BLAS single-threaded during a fit (best effort, no new dependency).

A MIRT fit makes thousands of small BLAS calls (panel-sized matrix products, L-BFGS-B's
vector updates). OpenBLAS threads buy nothing at that size and, when the cores are
busy, their spin-waiting makes a fit 10-20x slower. numpy and scipy each load their
own OpenBLAS; this finds every loaded copy (Linux: /proc/self/maps) and sets its
thread count to 1 for the duration of the block, then restores it. Anywhere this
does not work it does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Callable, Iterator
from pathlib import Path

_SYMBOLS = (
    ("openblas_get_num_threads", "openblas_set_num_threads"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
)


_Control = tuple[Callable[[], int], Callable[[int], object]]
"""An OpenBLAS copy's (get thread count, set thread count) pair."""


def _openblas_controls() -> list[_Control]:
    maps = Path("/proc/self/maps")
    if not maps.is_file():
        return []
    try:
        paths = sorted(
            {
                line.split()[-1]
                for line in maps.read_text().splitlines()
                if "openblas" in line.lower() and "/" in line
            }
        )
    except OSError:
        return []
    controls: list[_Control] = []
    for path in paths:
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            get_fn, set_fn = getattr(lib, get_name, None), getattr(lib, set_name, None)
            if get_fn is not None and set_fn is not None:
                get_fn.restype = ctypes.c_int
                set_fn.argtypes = [ctypes.c_int]
                controls.append((get_fn, set_fn))
                break
    return controls


@contextlib.contextmanager
def single_blas_thread() -> Iterator[None]:
    """Limit every loaded OpenBLAS to one thread inside the block."""
    saved = []
    try:
        for get_fn, set_fn in _openblas_controls():
            try:
                saved.append((set_fn, int(get_fn())))
                set_fn(1)
            except Exception:  # noqa: BLE001 - best effort, never fail a fit over it
                continue
    except Exception:  # noqa: BLE001
        saved = []
    try:
        yield
    finally:
        for set_fn, n in saved:
            with contextlib.suppress(Exception):
                set_fn(n)
