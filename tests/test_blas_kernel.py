"""Stage scripts pick OpenBLAS's Haswell kernels on x86-64 Linux, before numpy loads."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from curation.blas_kernel import CORETYPE, chosen_coretype, cpu_flags

REPO = Path(__file__).resolve().parents[1]
AVX2 = {"avx2", "fma", "sse2"}


def test_the_choice() -> None:
    assert chosen_coretype("Linux", "x86_64", AVX2, {}) == CORETYPE
    assert chosen_coretype("Linux", "x86_64", {"avx", "sse2"}, {}) is None  # no AVX2
    assert chosen_coretype("Linux", "aarch64", AVX2, {}) is None
    assert chosen_coretype("Darwin", "x86_64", AVX2, {}) is None
    assert chosen_coretype("Linux", "x86_64", AVX2, {"OPENBLAS_CORETYPE": "Zen"}) is None


def test_cpu_flags_reads_the_flags_line(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 fma\nbugs\t\t: x\n")
    assert cpu_flags(info) == {"fpu", "sse2", "avx2", "fma"}
    assert cpu_flags(tmp_path / "missing") == set()


def _architectures(env: dict[str, str]) -> list[str]:
    code = (
        "import curation.blas_kernel, numpy, scipy.linalg, json\n"
        "from threadpoolctl import threadpool_info\n"
        "print(json.dumps(sorted({i.get('architecture', '?') for i in threadpool_info()"
        " if i['internal_api'] == 'openblas'})))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return list(json.loads(proc.stdout))


@pytest.mark.skipif(
    platform.system() != "Linux"
    or platform.machine() != "x86_64"
    or not {"avx2", "fma"} <= cpu_flags(),
    reason="the Haswell kernels are chosen only on x86-64 Linux with AVX2 and FMA",
)
def test_a_stage_process_runs_the_haswell_kernels_in_numpy_and_scipy() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    assert _architectures(env) == [CORETYPE]  # numpy's and scipy's copies both
    assert _architectures({**env, "OPENBLAS_CORETYPE": "Sandybridge"}) == ["Sandybridge"]


def test_every_stage_script_imports_it_before_anything_else() -> None:
    for script in sorted((REPO / "pipelines").glob("*.py")):
        if script.name in ("__init__.py", "code.py"):
            continue
        lines = [
            ln
            for ln in script.read_text().splitlines()
            if ln.startswith(("import ", "from ")) and "__future__" not in ln
        ]
        assert lines[0].startswith("import curation.stage_start"), script.name
    start = (REPO / "curation" / "stage_start.py").read_text()
    imports = [ln.split("#")[0] for ln in start.splitlines() if ln.startswith(("import ", "from "))]
    assert "import curation.blas_kernel" in imports[-1]  # before anything that loads numpy
    assert all("numpy" not in ln and "polars" not in ln for ln in imports)
