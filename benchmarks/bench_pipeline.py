"""The default pipeline as a user meets it (issue 20): first `dvc repro` and a no-op one.

    .venv/bin/python benchmarks/bench_pipeline.py [--rev REV] [--noop-repeats N]
        [--stages gaps,annotate@gsm8k --before REV --repeats N] [--keep DIR | --reuse DIR]
        [--only repro,noop,imports,stages]

What it prints, working in a scratch clone (nothing in this checkout is touched):

1. ``git clone`` of this repository at ``--rev`` (default ``HEAD``: commit first,
   uncommitted edits are not measured): no DVC cache, no run cache, no outputs, exactly a
   user's fresh clone. Offline: ``HF_HUB_OFFLINE=1``, ``DVC_NO_ANALYTICS=1``,
   ``PYTHONPATH`` = the clone.
2. ``dvc repro`` there (plain: stages whose outputs are all in git are skipped, as for a
   user; ``--force`` runs every stage): total wall, CPU of every process DVC started
   (user + system from the children's rusage: DVC waits for each stage, so the stage's
   own children count too), peak RSS of the largest process, per-stage wall — from DVC's
   "Running stage" line to the next stage's, so it includes DVC hashing and caching that
   stage's outputs — and the same summed per stage name; whether ``dvc.lock`` came out
   byte-identical to the committed one.
3. no-op ``dvc repro`` vs ``dvc status`` alone, interleaved ``--noop-repeats`` times
   (medians), beside ``python -c 'import dvc.repo'``.
4. the import cost of each stage process (``import pipelines.<stage>``, CPU, fresh
   processes), times the number of processes a full run starts.
5. with ``--stages`` and ``--before REV``: each named stage's command run in the clone
   with the code of ``REV`` and of ``--rev`` (both exported with ``git archive``),
   interleaved ``--repeats`` times (wall/CPU medians), and how far the outputs moved
   (identical files, else the largest change of any number in the JSON outputs).

``--keep DIR`` keeps the clone; ``--reuse DIR`` starts from such a clone (skips 1–2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from _env import env_for
from _table import print_table

REPO = Path(__file__).resolve().parent.parent
RUNNING = re.compile(r"^Running stage '([^']+)'")


@dataclass
class Run:
    """One command's wall and CPU (its waited-for descendants), and its output lines."""

    wall: float
    cpu: float
    maxrss_mb: float
    lines: list[tuple[float, str]] = field(default_factory=list)


def run(cmd: list[str], cwd: Path, env: dict[str, str], echo: bool = False) -> Run:
    """Run ``cmd``, timestamping each output line; CPU from RUSAGE_CHILDREN deltas."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append((time.perf_counter() - t0, line.rstrip("\n")))
        if echo:
            print(f"  [{lines[-1][0]:7.1f}s] {lines[-1][1]}", flush=True)
    rc = proc.wait()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc != 0:
        tail = "\n".join(t for _, t in lines[-30:])
        raise SystemExit(f"{' '.join(cmd)} failed (exit {rc}) in {cwd}:\n{tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu, after.ru_maxrss / 1024, lines)


def stage_walls(r: Run) -> list[tuple[str, float]]:
    starts = [(t, m.group(1)) for t, line in r.lines if (m := RUNNING.match(line))]
    ends = [t for t, _ in starts[1:]] + [r.wall]
    return [(name, end - t) for (t, name), end in zip(starts, ends, strict=True)]


def clone(rev: str, dest: Path) -> None:
    """A fresh clone at ``rev``: no DVC cache, run cache or outputs."""
    subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", rev], check=True)


def export(rev: str, dest: Path) -> Path:
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def bench_repro(work: Path, force: bool) -> Run:
    env = env_for(work)
    print("\n==> dvc repro" + (" -f" if force else "") + f" in {work}", flush=True)
    r = run(["dvc", "repro", *(["-f"] if force else [])], work, env, echo=True)
    per_stage = stage_walls(r)
    first = per_stage and r.lines[0][0]
    rows = [[name, f"{w:.1f}", f"{100 * w / r.wall:.0f}%"] for name, w in per_stage]
    print_table(
        "per-stage wall (s) of the first `dvc repro`, in DVC's order",
        ["stage", "wall s", "share"],
        rows,
    )
    grouped: dict[str, list[float]] = {}
    for name, w in per_stage:
        grouped.setdefault(name.split("@")[0], []).append(w)
    rows = [
        [k, str(len(v)), f"{sum(v):.1f}", f"{100 * sum(v) / r.wall:.0f}%"]
        for k, v in sorted(grouped.items(), key=lambda kv: -sum(kv[1]))
    ]
    skipped = sum(1 for _, line in r.lines if "didn't change, skipping" in line)
    print_table(
        f"per stage name: {len(per_stage)} stages run, {skipped} skipped (outputs in git); "
        f"DVC before the first stage {first or 0:.1f} s",
        ["stage", "instances", "wall s", "share"],
        rows,
    )
    return r


def bench_noop(work: Path, repeats: int) -> dict[str, list[Run]]:
    env = env_for(work)
    runs: dict[str, list[Run]] = {"dvc repro (no-op)": [], "dvc status": []}
    for _ in range(repeats):
        runs["dvc repro (no-op)"].append(run(["dvc", "repro"], work, env))
        runs["dvc status"].append(run(["dvc", "status"], work, env))
    rows = [
        [
            k,
            f"{statistics.median(r.wall for r in v):.2f}",
            f"{statistics.median(r.cpu for r in v):.2f}",
            f"{min(r.wall for r in v):.2f}-{max(r.wall for r in v):.2f}",
        ]
        for k, v in runs.items()
    ]
    py = [run([sys.executable, "-c", "import dvc.repo"], work, env) for _ in range(repeats)]
    rows.append(
        [
            "python -c 'import dvc.repo'",
            f"{statistics.median(r.wall for r in py):.2f}",
            f"{statistics.median(r.cpu for r in py):.2f}",
            "",
        ]
    )
    print_table(
        f"no-op: wall / CPU s, median of {repeats} (interleaved)",
        ["command", "wall s", "CPU s", "range"],
        rows,
    )
    return runs


def stage_cmds(work: Path, names: list[str]) -> dict[str, str]:
    """The shell command of each ``stage`` or ``stage@key`` in the clone's dvc.yaml."""
    stages = yaml.safe_load((work / "dvc.yaml").read_text())["stages"]
    out = {}
    for name in names:
        base, _, key = name.partition("@")
        spec = stages[base]
        cmd = spec["do"]["cmd"] if "foreach" in spec else spec["cmd"]
        out[name] = cmd.replace("${key}", key)
    return out


def stage_outs(work: Path, name: str) -> list[Path]:
    """The files of a stage's ``outs`` (and ``metrics``), folders expanded."""
    base, _, key = name.partition("@")
    spec = yaml.safe_load((work / "dvc.yaml").read_text())["stages"][base]
    spec = spec["do"] if "foreach" in spec else spec
    out = []
    for entry in [*spec.get("outs", []), *spec.get("metrics", [])]:
        rel = next(iter(entry)) if isinstance(entry, dict) else entry
        path = work / rel.replace("${key}", key)
        out += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return out


def _numbers(x: object, prefix: str = "") -> dict[str, float]:
    if isinstance(x, dict):
        return {k: v for key, val in x.items() for k, v in _numbers(val, f"{prefix}/{key}").items()}
    if isinstance(x, list):
        return {k: v for i, val in enumerate(x) for k, v in _numbers(val, f"{prefix}/{i}").items()}
    if isinstance(x, int | float) and not isinstance(x, bool):
        return {prefix: float(x)}
    return {}


def snapshot(files: list[Path]) -> dict[Path, tuple[str, dict[str, float]]]:
    """sha256 of each file, and the numbers of the JSON ones (to say how far they moved)."""
    out = {}
    for f in files:
        data = f.read_bytes()
        nums = _numbers(json.loads(data)) if f.suffix == ".json" else {}
        out[f] = (hashlib.sha256(data).hexdigest(), nums)
    return out


def compare(
    a: dict[Path, tuple[str, dict[str, float]]], b: dict[Path, tuple[str, dict[str, float]]]
) -> str:
    """Which outputs differ between two runs; for JSON, the largest change of any number."""
    diff = [f for f in a if a[f][0] != b.get(f, ("", {}))[0]]
    if not diff:
        return "identical"
    notes = []
    for f in diff:
        na, nb = a[f][1], b[f][1]
        if na and na.keys() == nb.keys():
            key = max(na, key=lambda k: abs(na[k] - nb[k]))
            notes.append(f"{f.name}: max |change| {abs(na[key] - nb[key]):.1e} ({key})")
        elif f.suffix not in (".png", ".svg"):
            notes.append(f.name)
    figs = sum(1 for f in diff if f.suffix in (".png", ".svg"))
    return "; ".join(notes + ([f"{figs} figure file(s) differ"] if figs else []))


def bench_stages(work: Path, names: list[str], roots: dict[str, Path], repeats: int) -> None:
    """Each stage's command run in ``work`` with the code of ``roots`` (before, now)."""
    cmds = stage_cmds(work, names)
    rows = []
    for name, cmd in cmds.items():
        times: dict[str, list[Run]] = {k: [] for k in roots}
        snaps = {}
        for _ in range(repeats):
            for label, root in roots.items():
                script, *rest = cmd.split()[1:]
                argv = [sys.executable, str(root / script), *rest]
                times[label].append(run(argv, work, env_for(root)))
                snaps[label] = snapshot(stage_outs(work, name))
        med = {k: (statistics.median(r.wall for r in v), statistics.median(r.cpu for r in v))
               for k, v in times.items()}  # fmt: skip
        rows.append([
            name, f"{med['before'][0]:.1f} / {med['before'][1]:.1f}",
            f"{med['now'][0]:.1f} / {med['now'][1]:.1f}",
            f"{med['before'][1] / med['now'][1]:.2f}x",
            compare(snaps["before"], snaps["now"]),
        ])  # fmt: skip
    print_table(
        f"stages before vs now, same clone and inputs: wall / CPU s, median of {repeats} "
        "(interleaved)",
        ["stage", "before", "now", "speed-up (CPU)", "outputs now vs before"],
        rows,
    )


STAGE_MODULES = ("code", "ingest", "responses", "check", "annotate", "gaps", "fill", "judge",
                 "subsets", "build", "headline", "mirt")  # fmt: skip


def bench_imports(work: Path, repeats: int) -> None:
    """CPU of ``import pipelines.<stage>`` in a fresh process: paid once per stage run."""
    env = env_for(work)
    stages = yaml.safe_load((work / "dvc.yaml").read_text())["stages"]
    n_bench = len(yaml.safe_load((work / "params.yaml").read_text())["benchmarks"])
    rows, total = [], 0.0
    for st in STAGE_MODULES:
        cpu = statistics.median(
            run([sys.executable, "-c", f"import pipelines.{st}"], work, env).cpu
            for _ in range(repeats)
        )
        count = n_bench if "foreach" in stages[st] else 1
        total += cpu * count
        rows.append([st, f"{cpu:.2f}", str(count), f"{cpu * count:.1f}"])
    floor = statistics.median(
        run([sys.executable, "-c", "pass"], work, env).cpu for _ in range(repeats)
    )
    rows.append(["(python -c pass)", f"{floor:.2f}", "", ""])
    rows.append(["total per `dvc repro -f`", "", "", f"{total:.1f}"])
    print_table(
        f"import cost per stage process: CPU s of `python -c 'import pipelines.<stage>'`, "
        f"median of {repeats}",
        ["stage", "import CPU s", "processes", "CPU s per run"],
        rows,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--force", action="store_true", help="dvc repro -f (every stage)")
    ap.add_argument("--noop-repeats", type=int, default=5)
    ap.add_argument("--import-repeats", type=int, default=3)
    ap.add_argument("--stages", default="", help="comma-separated stages to time vs --before")
    ap.add_argument("--before", default=None, help="git revision for --stages")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="make (and keep) the clone here")
    ap.add_argument(
        "--reuse", type=Path, default=None,
        help="a clone kept by an earlier run (its outputs in place): skip the clone and repro",
    )  # fmt: skip
    ap.add_argument("--only", default="repro,noop,imports,stages")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    try:
        work = args.reuse or args.keep or tmp / "clone"
        sha = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", args.rev], check=True, capture_output=True,
            text=True,
        ).stdout.strip()  # fmt: skip
        if args.reuse is None:
            clone(sha, work)
        load = os.getloadavg()
        print(
            f"revision {sha[:12]} ({args.rev}); python {sys.version.split()[0]}; "
            f"{os.cpu_count()} CPUs; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; "
            f"clone {work}",
            flush=True,
        )
        summary = []
        if "repro" in only and args.reuse is None:
            r = bench_repro(work, args.force)
            lock_same = (
                subprocess.run(
                    # DVC autostages dvc.lock: compare with HEAD, not with the index
                    ["git", "-C", str(work), "diff", "--quiet", "HEAD", "--", "dvc.lock"],
                    check=False,
                ).returncode
                == 0
            )
            summary += [
                ["first `dvc repro` wall", f"{r.wall:.0f} s"],
                ["first `dvc repro` CPU (all processes)", f"{r.cpu:.0f} s"],
                ["peak RSS (largest process)", f"{r.maxrss_mb / 1024:.2f} GB"],
                ["dvc.lock identical to the committed one", "yes" if lock_same else "no"],
            ]
        if "noop" in only:
            noop = bench_noop(work, args.noop_repeats)
            n = statistics.median(x.wall for x in noop["dvc repro (no-op)"])
            st = statistics.median(x.wall for x in noop["dvc status"])
            summary += [
                ["no-op `dvc repro` wall (median)", f"{n:.1f} s"],
                ["`dvc status` wall (median)", f"{st:.1f} s"],
            ]
        if summary:
            load = os.getloadavg()
            print_table(
                f"summary (revision {sha[:12]}; load average at the end {load[0]:.1f} "
                f"{load[1]:.1f})",
                ["what", "value"],
                summary,
            )
        if "imports" in only:
            bench_imports(export(args.rev, tmp / "now-imports"), args.import_repeats)
        if "stages" in only and args.stages and args.before:
            bench_stages(
                work,
                args.stages.split(","),
                {
                    "before": export(args.before, tmp / "before"),
                    "now": export(args.rev, tmp / "now"),
                },
                args.repeats,
            )
    finally:
        if args.keep is None and args.reuse is None:
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            shutil.rmtree(tmp / "before", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
