"""BLAS threads are pinned inside the kernels: results do not depend on the thread count.

Unpinned, a 42 × 1,319 fit's b changed in the last digits between
``OPENBLAS_NUM_THREADS=1`` and the default (2 on a 2-core machine), so dvc.lock hashes
depended on the machine that ran the pipeline. Each run here is a fresh process (the
thread count is read when OpenBLAS loads); the environment is otherwise passed through
unchanged (OPENBLAS_CORETYPE and the like stay as the machine needs them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import hashlib, sys
from curation.irt import fit, loo_stability, simulate_responses
df, _ = simulate_responses(n_models=42, n_items=1319, n_trials=1, seed=3)
h = hashlib.sha256()
for model in ("1pl", "2pl"):
    r = fit(df, model=model)
    h.update(r.items["b"].to_numpy().tobytes())
    h.update(r.models["theta"].to_numpy().tobytes())
small, _ = simulate_responses(n_models=8, n_items=300, n_trials=1, seed=4)
loo = loo_stability(small)
h.update(repr(loo["overall"]).encode())
print(h.hexdigest())
"""


def _run(threads: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS",)}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    if threads is not None:
        env["OPENBLAS_NUM_THREADS"] = threads
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_fit_bytes_identical_for_any_blas_thread_count() -> None:
    digests = {t: _run(t) for t in ("1", "2", None)}
    assert len(set(digests.values())) == 1, digests


def test_kernel_threads_pins_and_restores() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from curation.irt import fit, simulate_responses
    from curation.irt._threads import kernel_threads

    def blas_threads() -> list[int]:
        info = threadpoolctl.threadpool_info()
        return [i["num_threads"] for i in info if i["user_api"] == "blas"]

    before = blas_threads()
    with kernel_threads():
        assert set(blas_threads()) == {1}
        with kernel_threads():  # nested: still pinned, and leaving it does not unpin
            pass
        assert set(blas_threads()) == {1}
    assert blas_threads() == before
    df, _ = simulate_responses(n_models=5, n_items=50, n_trials=1, seed=0)
    assert np.all(np.isfinite(fit(df).items["b"].to_numpy()))
    assert blas_threads() == before
