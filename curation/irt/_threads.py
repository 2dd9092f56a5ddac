"""One place that pins BLAS/OpenMP threads for the numeric kernels (threadpoolctl).

The fits make thousands of small BLAS calls (a 42 × 1,319 product, a panel-sized
Cholesky, L-BFGS-B's vector updates). OpenBLAS threads buy nothing at that size: with
its default of one thread per core, each product hands work to threads that spin-wait,
which on a 2-core machine made a 0.12 ms product take 39–137 ms and the GSM8K annotate
stage 2.8× slower (``benchmarks/bench_speed.py`` measures both side by side). A threaded
reduction also splits sums differently with the thread count, so results changed in the
last digits from one machine to the next; with one thread they depend only on the data
(and on the BLAS build and CPU kernel, which are the same for the same wheel and
``OPENBLAS_CORETYPE``).

:func:`kernel_threads` limits every loaded BLAS/OpenMP pool (numpy's and scipy's
OpenBLAS are separate copies; threadpoolctl finds both) to :data:`KERNEL_THREADS`
inside the block and restores the caller's setting afterwards; :func:`pinned` wraps a
function in it. The public fitting functions (:func:`curation.irt.fit`,
``bic_compare``, ``loo_stability``, ``calibrate_items``, ``fit_mirt``) are pinned, so
nothing else needs to think about it. Nested blocks cost nothing.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, ParamSpec, TypeVar

KERNEL_THREADS: int | None = 1
"""BLAS/OpenMP threads inside the kernels; ``None`` leaves the pools alone (benchmarks
set it to compare). One thread is what makes results independent of the machine."""

_P = ParamSpec("_P")
_R = TypeVar("_R")

_lock = threading.Lock()
_depth = 0
_controller: Any = None
_saw_scipy = False


def _get_controller() -> Any:
    """A cached ThreadpoolController (scanning the loaded libraries costs ~10 ms).

    scipy brings its own OpenBLAS copy, loaded with ``scipy.linalg``. The 1PL/2PL fitting
    path does not import scipy (0.4 s); code that does (MIRT, statistics) imports it at
    module level, before any pinned call, so the controller is rebuilt once when scipy
    has appeared since the last scan and both copies are pinned.
    """
    global _controller, _saw_scipy
    scipy_loaded = "scipy.linalg" in sys.modules
    if _controller is None or (scipy_loaded and not _saw_scipy):
        import numpy  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
        _saw_scipy = scipy_loaded
    return _controller


@contextlib.contextmanager
def kernel_threads(n: int | None = None) -> Iterator[None]:
    """Limit BLAS/OpenMP to ``n`` threads (default :data:`KERNEL_THREADS`) in the block."""
    global _depth
    limit = KERNEL_THREADS if n is None else n
    if limit is None:
        yield
        return
    with _lock:
        outer = _depth == 0
        _depth += 1
    try:
        if outer:
            with _get_controller().limit(limits=limit):
                yield
        else:  # already pinned by an enclosing block
            yield
    finally:
        with _lock:
            _depth -= 1


def pinned(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``fn`` inside :func:`kernel_threads`."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with kernel_threads():
            return fn(*args, **kwargs)

    return wrapper
