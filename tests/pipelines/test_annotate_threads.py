"""The annotate stage writes the same bytes whatever the machine's BLAS threads and CPU.

DVC hashes every output into dvc.lock, so a stage whose numbers moved in the last digit
with ``OPENBLAS_NUM_THREADS`` or with the CPU made dvc.lock depend on the machine that
ran it (and BenchFill, which seeds its simulation from its inputs, printed other
headline figures). Here the stage runs as DVC runs it (``python pipelines/annotate.py``,
a fresh process each time) with 1 and with 2 BLAS threads, and with OpenBLAS's kernels
for another CPU (``OPENBLAS_CORETYPE=Sandybridge``: what an AVX-only x86 machine runs;
on an AVX-512 machine the default kernels sum in another order), and every file it
writes is compared byte for byte.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from curation.irt import simulate_responses
from tests.stage_cli import run_stage

REPO = Path(__file__).resolve().parents[2]
PARAMS = """\
benchmarks:
  sim:
    domain: math
    license: MIT
    source: simulated in tests
    items: {path: raw/items.jsonl, answer_type: numeric}
    responses: {path: raw/responses.parquet, layout: long}
annotate: {model: auto, loo: true, laplace_draws: 50, seed: 11}
"""


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for folder in ("data/difficulty", "data/calibration", "metrics", "plots")
        if (root / folder).exists()
        for p in sorted((root / folder).rglob("*"))
        if p.is_file()
    }


def _annotate(root: Path, threads: str, coretype: str | None = None) -> dict[str, str]:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=threads, OMP_NUM_THREADS=threads)
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    subprocess.run(
        [sys.executable, str(REPO / "pipelines/annotate.py"), "--benchmark", "sim"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )
    return _digests(root)


@pytest.mark.long(seconds=30)
def test_annotate_outputs_identical_with_1_and_2_threads_and_another_cpu_kernel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = tmp_path / "base"
    (base / "raw").mkdir(parents=True)
    responses, _ = simulate_responses(n_models=30, n_items=400, n_trials=1, seed=5)
    responses.write_parquet(base / "raw/responses.parquet")
    (base / "raw/items.jsonl").write_text(
        "".join(
            f'{{"item": "{i}", "question": "q", "answer": "1"}}\n'
            for i in sorted(responses["item"].unique().to_list())
        )
    )
    (base / "params.yaml").write_text(PARAMS)
    monkeypatch.chdir(base)
    for stage in ("ingest", "responses"):
        assert run_stage([stage, "--benchmark", "sim"]) == 0
    runs = {}
    for name, threads, coretype in (("1", "1", None), ("2", "2", None), ("sb", "1", "Sandybridge")):
        root = tmp_path / f"t{name}"
        shutil.copytree(base, root)
        runs[name] = _annotate(root, threads, coretype)
    assert any(k.startswith("data/difficulty/") for k in runs["1"]), runs["1"]
    assert runs["1"] == runs["2"]
    assert runs["1"] == runs["sb"]
