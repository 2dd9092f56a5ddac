"""One OpenBLAS thread inside a block (best effort, no new dependency).

The matrix-free fits (:mod:`curation.irt._map_big`) run their cell passes on their own
two threads and call BLAS only for memory-bound matrix-vector products between them.
OpenBLAS threads buy nothing there and spin-wait after every call, taking a core from
the passes (on a busy 2-core machine single-threaded BLAS cut a fit's CPU time by a
fifth). numpy and scipy each load their own OpenBLAS; every loaded copy
(``/proc/self/maps``) is set to one thread for the block and restored after. Where this
does not work it does nothing. (The same technique as ``curation.irt.mirt._threads``,
without importing the MIRT package.)
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


def _controls() -> list[tuple[Callable[[], int], Callable[[int], object]]]:
    try:
        maps = Path("/proc/self/maps").read_text().splitlines()
    except OSError:
        return []
    paths = sorted({ln.split()[-1] for ln in maps if "openblas" in ln.lower() and "/" in ln})
    out = []
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
                out.append((get_fn, set_fn))
                break
    return out


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit every loaded OpenBLAS to one thread inside the block."""
    saved: list[tuple[Callable[[int], object], int]] = []
    with contextlib.suppress(Exception):  # best effort: never fail a fit over it
        for get_fn, set_fn in _controls():
            n = int(get_fn())
            set_fn(1)
            saved.append((set_fn, n))
    try:
        yield
    finally:
        for set_fn, n in saved:
            with contextlib.suppress(Exception):
                set_fn(n)
