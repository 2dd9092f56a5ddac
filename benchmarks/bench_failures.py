"""Failure scenarios under real DVC: a failed or killed run must cost no output.

One command (minutes on 2 cores; not part of the test suite)::

    python benchmarks/bench_failures.py [--scenarios N] [--seed S] [--keep DIR]

Builds the two-benchmark toy project of the DVC tests (the real dvc.yaml and code) as a
git + DVC repo, runs `dvc repro`, commits it (the baseline), checks that a fresh clone's
`dvc repro` reproduces the committed dvc.lock outs and every output byte for byte, then
runs each scenario in its own copy of the baseline:

* ``raise`` -- a stage's code raises (a bug, injected into the copy's pipelines/ file);
* ``input`` -- a raw file a stage reads is malformed (the stage exits 2);
* ``missing dep`` -- a dependency is gone (a deleted raw file, a typo'd path in params);
* ``bad params`` -- a value or key in params.yaml a stage refuses;
* ``kill -9`` -- a change that reruns most stages, and the whole `dvc repro` process
  group killed at a random moment of it.

For every scenario the table says whether (1) the failed stage's previous outputs, and
every output of a stage that did not run to the end, are byte-identical afterwards (for a
kill: every output file is either its previous or its complete new version, nothing
half-written, no scratch file inside an output); (2) the failure printed one clear line
(no traceback); (3) after the fix (the edit undone) `dvc repro` reproduces every output
and dvc.lock byte for byte as the clean clone has them.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._table import print_table  # noqa: E402
from tests.pipelines._dvc import ENV, OUTS, write_dvc_project  # noqa: E402

STRAY_MARKERS = (".tmp", ".old-")


def sh(root: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    env = {**ENV, "PYTHONPATH": str(root)}
    return subprocess.run(args, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)


def ok(root: Path, *args: str) -> str:
    proc = sh(root, *args)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed in {root}:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def outputs(root: Path) -> dict[str, str]:
    """Every file under the output folders, plus dvc.lock -> sha256."""
    out = {}
    for folder in [*OUTS, "code-hashes"]:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and path.name != ".gitignore":
                out[path.relative_to(root).as_posix()] = hashlib.sha256(
                    path.read_bytes()
                ).hexdigest()
    out["dvc.lock"] = hashlib.sha256((root / "dvc.lock").read_bytes()).hexdigest()
    return out


def strays(files: dict[str, str]) -> list[str]:
    return [p for p in files if any(m in Path(p).name for m in STRAY_MARKERS)]


def stage_outs(root: Path) -> dict[str, list[str]]:
    """stage name -> its declared output paths (files or folders)."""
    code = (
        "import json;from dvc.repo import Repo;r=Repo('.');"
        "print(json.dumps({s.addressing:[str(o.def_path) for o in s.outs] "
        "for s in r.index.stages}))"
    )
    import json

    return dict(json.loads(ok(root, sys.executable, "-c", code)))


def files_of(paths: list[str], files: dict[str, str]) -> set[str]:
    return {f for f in files for p in paths if f == p or f.startswith(p.rstrip("/") + "/")}


def ran(text: str) -> list[str]:
    return [ln.split("'")[1] for ln in text.splitlines() if ln.startswith("Running stage")]


def failed_stage(text: str) -> str | None:
    for ln in text.splitlines():
        if "failed to reproduce" in ln:
            return ln.split("'")[1]
    return None


# ---- scenarios ----------------------------------------------------------------------------


Edit = Callable[[Path], list[str]]
"""Changes the copy; returns the paths to `git checkout` as the fix."""


def append_raise(stage: str) -> Edit:
    """A bug in ``pipelines/<stage>.py``: its ``run`` raises first thing."""

    def edit(root: Path) -> list[str]:
        import ast

        path = root / "pipelines" / f"{stage}.py"
        lines = path.read_text().splitlines(keepends=True)
        run = next(
            n
            for n in ast.parse("".join(lines)).body
            if isinstance(n, ast.FunctionDef) and n.name == "run"
        )
        first = run.body[0]
        is_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
        at = first.end_lineno if is_doc else first.lineno - 1
        lines.insert(at or 0, '    raise RuntimeError("injected bug")\n')
        path.write_text("".join(lines))
        return [f"pipelines/{stage}.py"]

    return edit


def replace_in(path: str, old: str, new: str) -> Edit:
    def edit(root: Path) -> list[str]:
        text = (root / path).read_text()
        assert old in text, f"{path}: no {old!r}"
        (root / path).write_text(text.replace(old, new, 1))
        return [path]

    return edit


def delete(path: str) -> Edit:
    """A file or a whole folder gone (a folder dep: DVC checks the folder, not each file)."""

    def edit(root: Path) -> list[str]:
        target = root / path
        assert target.exists(), f"{path}: not in the project"
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
        return [path]

    return edit


@dataclass
class Scenario:
    name: str
    kind: str
    edit: Edit
    kill: bool = False
    notes: list[str] = field(default_factory=list)


SCENARIOS = [
    Scenario("ingest raises", "raise", append_raise("ingest")),
    Scenario("annotate raises", "raise", append_raise("annotate")),
    Scenario("gaps raises", "raise", append_raise("gaps")),
    Scenario("subsets raises", "raise", append_raise("subsets")),
    Scenario("build raises", "raise", append_raise("build")),
    Scenario(
        "items: broken JSON line",
        "input",
        replace_in("raw/items.jsonl", '{"id": "q2"', '{"id": "q2" BROKEN'),
    ),
    Scenario(
        "responses: n_correct > n_trials",
        "input",
        replace_in("raw/responses.csv", "weak,q0,2,1", "weak,q0,2,7"),
    ),
    Scenario("raw items deleted", "missing dep", delete("raw2/items.jsonl")),
    Scenario(
        "responses path typo'd",
        "missing dep",
        replace_in("params.yaml", "path: raw/responses.csv", "path: raw/respnses.csv"),
    ),
    Scenario("review export deleted", "missing dep", delete("data/review/export")),
    Scenario(
        "check.list_limit: 0",
        "bad params",
        replace_in("params.yaml", "list_limit: 5", "list_limit: 0"),
    ),
    Scenario(
        "annotate key typo'd",
        "bad params",
        replace_in("params.yaml", "laplace_draws: 50", "laplace_drawz: 50"),
    ),
    Scenario(
        "subsets.sizes: [-3]",
        "bad params",
        replace_in("params.yaml", "sizes: [3]", "sizes: [-3]"),
    ),
]
KILL_EDITS = {
    "annotate.laplace_draws": replace_in("params.yaml", "laplace_draws: 50", "laplace_draws: 60"),
    "an item's text": replace_in("raw/items.jsonl", "What is 4 + 4?", "What is four plus 4?"),
    "build.max_shard_rows": replace_in(
        "params.yaml", "  dist: dist\n", "  dist: dist\n  max_shard_rows: 3\n"
    ),
}
"""The changes a kill interrupts (the kills cycle through them): annotate and what
follows it; ingest and every stage after it; the build alone."""


# ---- running ------------------------------------------------------------------------------


def build_baseline(work: Path) -> Path:
    root = write_dvc_project(work / "baseline")
    ok(root, "dvc", "repro")
    ok(root, "git", "add", "-A")
    ok(root, "git", "commit", "-qm", "baseline")
    return root


def clean_clone(baseline: Path, work: Path) -> tuple[dict[str, str], bool]:
    """A fresh clone's `dvc repro`: its outputs, and whether dvc.lock came out unchanged."""
    clone = work / "clone"
    ok(work, "git", "clone", "-q", str(baseline), str(clone))
    ok(clone, "dvc", "repro")
    same_lock = (clone / "dvc.lock").read_bytes() == (baseline / "dvc.lock").read_bytes()
    return outputs(clone), same_lock


def copy(baseline: Path, dst: Path) -> Path:
    shutil.copytree(baseline, dst, symlinks=True, ignore=shutil.ignore_patterns("tmp"))
    return dst


def one_line(text: str) -> bool:
    """One error line, no traceback: ours (`error: ...`) or DVC's (`ERROR: ...`)."""
    if "Traceback (most recent call last)" in text:
        return False
    ours = [ln for ln in text.splitlines() if ln.startswith("error: ")]
    dvcs = [ln for ln in text.splitlines() if ln.startswith("ERROR: ")]
    return len(ours) == 1 or (not ours and len(dvcs) == 1)


def run_failure(sc: Scenario, baseline: Path, work: Path, outs_by_stage: dict[str, list[str]]):
    root = copy(baseline, work / sc.name.replace(" ", "_").replace("'", ""))
    before = outputs(root)
    paths = sc.edit(root)
    t0 = time.perf_counter()
    proc = sh(root, "dvc", "repro")
    text = proc.stdout + proc.stderr
    after = outputs(root)
    stages = ran(text)
    failed = failed_stage(text)
    finished = set(stages) - {failed}
    # outputs of stages that ran to the end may change; all others must not
    allowed = files_of([p for s in finished for p in outs_by_stage.get(s, [])], after)
    allowed |= {"dvc.lock"} if finished else set()
    lost = sorted(
        p for p in set(before) | set(after) if before.get(p) != after.get(p) and p not in allowed
    )
    kept = proc.returncode != 0 and not lost and not strays(after)
    line = one_line(text)
    message = next((ln for ln in text.splitlines() if ln.startswith(("error: ", "ERROR: "))), "")
    ok(root, "git", "checkout", "HEAD", "--", *paths)
    rerun = sh(root, "dvc", "repro")
    return root, kept, line, message, lost, rerun, time.perf_counter() - t0


def run_kill(sc: Scenario, baseline: Path, work: Path, at: float, *, after_stage: str = ""):
    """`dvc repro` killed ``at`` seconds after it started, or (``after_stage``) ``at``
    seconds after it printed that it runs that stage."""
    root = copy(baseline, work / sc.name.replace(" ", "_").replace("'", ""))
    before = outputs(root)
    paths = sc.edit(root)
    t0 = time.perf_counter()
    env = {**ENV, "PYTHONPATH": str(root)}
    proc = subprocess.Popen(
        ["dvc", "repro"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        for line in proc.stdout or ():
            lines.append(line)
            if after_stage and line.startswith(f"Running stage '{after_stage}'"):
                started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if after_stage:
        while not started.wait(0.05) and proc.poll() is None:
            pass
    try:
        proc.wait(timeout=at)
        finished_first = True
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        finished_first = False
    reader.join(timeout=10)
    text = "".join(lines)
    after = outputs(root)
    return root, before, after, paths, text, finished_first, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=7, help="kill -9 scenarios (default 7)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the kill moments")
    ap.add_argument("--keep", type=Path, help="work folder to keep (default: a temp folder)")
    ap.add_argument("--only", help="run only the scenarios whose name contains this")
    ap.add_argument(
        "--kill-in",
        action="append",
        default=[],
        metavar="STAGE[+S]",
        help="also: an item's text changed, the run killed S seconds (default 1) after it "
        "starts STAGE, e.g. fill@toy+1.5 (repeatable)",
    )
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-failures-"))
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    baseline = build_baseline(work)
    clean, same_lock = clean_clone(baseline, work)
    base_out = outputs(baseline)
    print(
        f"baseline built; fresh clone: dvc.lock {'identical' if same_lock else 'DIFFERS'}, "
        f"outputs {'identical' if clean == base_out else 'DIFFER'} "
        f"({len(clean)} files) [{time.perf_counter() - start:.0f} s]",
        flush=True,
    )
    outs_by_stage = stage_outs(baseline)
    rows = []
    for sc in SCENARIOS:
        if args.only and args.only not in sc.name:
            continue
        root, kept, line, message, lost, rerun, secs = run_failure(
            sc, baseline, work, outs_by_stage
        )
        same = rerun.returncode == 0 and outputs(root) == clean
        rows.append(
            [
                sc.kind,
                sc.name,
                "yes" if kept else f"NO {lost[:2]}",
                "yes" if line else "NO",
                "yes" if same else "NO",
                f"{secs:.0f}",
                message[:90],
            ]
        )
        print("  ".join(rows[-1][:6]), flush=True)
        shutil.rmtree(root, ignore_errors=True)
    # how long each change takes uninterrupted: the kill moments are drawn inside it
    kills = args.kills if not args.only or "kill" in args.only else 0
    full: dict[str, tuple[dict[str, str], float]] = {}
    sampled = list(KILL_EDITS)[: max(0, min(kills, len(KILL_EDITS)))]
    targeted = "an item's text"  # reruns every stage: a kill can land in any of them
    if args.kill_in and targeted not in sampled:
        sampled.append(targeted)
    for label in sampled:
        sample = Scenario(f"kill sample {label}", "kill -9", KILL_EDITS[label], kill=True)
        root, _before, outs, _paths, _text, done, secs = run_kill(sample, baseline, work, 900)
        assert done, f"the uninterrupted run of {label} did not finish"
        full[label] = (outs, secs)
        shutil.rmtree(root, ignore_errors=True)
    labels = sampled[: max(0, min(kills, len(KILL_EDITS)))]
    planned: list[tuple[str, float, str]] = []  # (change, seconds, after which stage start)
    for k in range(kills):
        label = labels[k % len(labels)]
        planned.append((label, rng.uniform(1.0, full[label][1]), ""))
    for spec in args.kill_in:
        stage, _, delay = spec.partition("+")
        planned.append((targeted, float(delay or 1.0), stage))
    for label, at, after_stage in planned:
        after_full, full_secs = full[label]
        when = f"{at:.1f} s into {after_stage}" if after_stage else f"{at:.1f} s"
        sc = Scenario(f"kill -9 at {when}", "kill -9", KILL_EDITS[label], kill=True)
        root, before, after, paths, text, done, secs = run_kill(
            sc, baseline, work, at, after_stage=after_stage
        )
        torn = sorted(
            p
            for p in after
            if p != "dvc.lock" and after[p] not in (before.get(p), after_full.get(p))
        )
        stray = strays(after)
        kept = not torn and not stray
        ok(root, "git", "checkout", "HEAD", "--", *paths)
        rerun = sh(root, "dvc", "repro")
        same = rerun.returncode == 0 and outputs(root) == clean
        last = ran(text)[-1] if ran(text) else "-"
        rows.append(
            [
                "kill -9",
                f"{label}: kill {when}"
                if after_stage
                else f"{label}: kill at {at:.1f}/{full_secs:.0f} s",
                "yes" if kept else f"NO {(torn + stray)[:2]}",
                "n/a",
                "yes" if same else "NO",
                f"{secs:.0f}",
                f"during {last}" + (" (finished first)" if done else ""),
            ]
        )
        print("  ".join(rows[-1][:6]), flush=True)
        shutil.rmtree(root, ignore_errors=True)
    print_table(
        "Failure scenarios under real DVC (toy project, 2 benchmarks)",
        ["kind", "scenario", "outputs kept", "one message", "rerun = clean clone", "s", "what"],
        rows,
    )
    good = sum(r[2] == "yes" and r[3] in ("yes", "n/a") and r[4] == "yes" for r in rows)
    print(
        f"{good}/{len(rows)} scenarios pass all checks; fresh clone reproduces dvc.lock: "
        f"{same_lock}; {time.perf_counter() - start:.0f} s in all"
    )
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if good == len(rows) and same_lock else 1


if __name__ == "__main__":
    raise SystemExit(main())
