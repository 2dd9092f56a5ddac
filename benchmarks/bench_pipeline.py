"""The default pipeline as a user meets it (issue 20): first `dvc repro` and a no-op one.

    .venv/bin/python benchmarks/bench_pipeline.py [--rev REV] [--noop-repeats N]
        [--stages gaps,annotate@gsm8k --before REV --repeats N] [--keep DIR]

What it does, in a scratch directory (nothing in this checkout is touched):

1. ``git clone`` this repository and check out ``--rev`` (default ``HEAD``: commit first,
   uncommitted edits are not measured); the clone has no DVC cache, no run cache and no
   outputs, exactly like a user's fresh clone. Offline: ``HF_HUB_OFFLINE=1``,
   ``DVC_NO_ANALYTICS=1``, ``PYTHONPATH`` = the clone.
2. ``dvc repro`` (plain: stages whose outputs are all in git are skipped, as for a user;
   ``--force`` runs every stage). Printed: total wall, CPU of every process DVC started
   (user + system from the children's rusage: DVC waits for each stage, so the stage's
   own children count too), peak RSS of the largest process, and per-stage wall — the time
   from DVC's "Running stage" line to the next stage's (so it includes DVC hashing and
   caching that stage's outputs) — summed per stage name as well.
3. no-op ``dvc repro`` vs ``dvc status`` alone, interleaved, ``--noop-repeats`` times:
   medians of wall and CPU.
4. whether ``dvc.lock`` after the run is byte-identical to the committed one.
5. with ``--stages`` and ``--before REV``: each named stage's command run in the same
   clone with the code of ``REV`` (``git archive``) and of ``--rev``, interleaved
   ``--repeats`` times (wall/CPU medians), and whether their outputs' hashes agree.
"""

from __future__ import annotations

import argparse
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

REPO = Path(__file__).resolve().parent.parent
RUNNING = re.compile(r"^Running stage '([^']+)'")


@dataclass
class Run:
    """One command's wall and CPU (its waited-for descendants), and its output lines."""

    wall: float
    cpu: float
    maxrss_mb: float
    lines: list[tuple[float, str]] = field(default_factory=list)


def env_for(root: Path) -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(
        PATH=f"{venv_bin}:{env.get('PATH', '')}",
        PYTHONPATH=str(root),
        DVC_NO_ANALYTICS="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )
    return env


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


def print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(h), *(len(r[j]) for r in rows)) for j, h in enumerate(header)]
    line = "  ".join("-" * w for w in widths)
    print(f"\n{title}\n{line}")
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print(line)
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    print(line, flush=True)


def clone(rev: str, dest: Path) -> str:
    sha = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", rev], check=True, capture_output=True, text=True
    ).stdout.strip()
    subprocess.run(["git", "clone", "-q", str(REPO), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", sha], check=True)
    return sha


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


def output_hashes(work: Path) -> str:
    """DVC's view of what changed: `dvc status` text (empty when every out matches)."""
    r = run(["dvc", "status", "--json"], work, env_for(work))
    return "\n".join(t for _, t in r.lines)


def bench_stages(work: Path, names: list[str], before: Path, repeats: int) -> None:
    cmds = stage_cmds(work, names)
    roots = {"before": before, "now": work}
    rows = []
    for name, cmd in cmds.items():
        times: dict[str, list[Run]] = {k: [] for k in roots}
        same: dict[str, str] = {}
        for _ in range(repeats):
            for label, root in roots.items():
                script, *rest = cmd.split()[1:]
                argv = [sys.executable, str(root / script), *rest]
                times[label].append(run(argv, work, env_for(root)))
                same[label] = output_hashes(work)
        med = {k: (statistics.median(r.wall for r in v), statistics.median(r.cpu for r in v))
               for k, v in times.items()}  # fmt: skip
        rows.append([
            name, f"{med['before'][0]:.1f} / {med['before'][1]:.1f}",
            f"{med['now'][0]:.1f} / {med['now'][1]:.1f}",
            f"{med['before'][0] / med['now'][0]:.1f}x",
            "yes" if "changed outs" not in same["now"] else "no (outputs differ from dvc.lock)",
        ])  # fmt: skip
    print_table(
        f"stages before vs now, same clone and inputs: wall / CPU s, median of {repeats} "
        "(interleaved)",
        ["stage", "before", "now", "speed-up (wall)", "now's outputs = dvc.lock"],
        rows,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--force", action="store_true", help="dvc repro -f (every stage)")
    ap.add_argument("--noop-repeats", type=int, default=5)
    ap.add_argument("--stages", default="", help="comma-separated stages to time vs --before")
    ap.add_argument("--before", default=None, help="git revision for --stages")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--keep", type=Path, default=None, help="keep the clone here")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    try:
        work = args.keep or tmp / "clone"
        sha = clone(args.rev, work)
        load = os.getloadavg()
        print(
            f"revision {sha[:12]} ({args.rev}); python {sys.version.split()[0]}; "
            f"{os.cpu_count()} CPUs; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
            flush=True,
        )
        r = bench_repro(work, args.force)
        noop = bench_noop(work, args.noop_repeats)
        lock_same = (
            subprocess.run(
                ["git", "-C", str(work), "diff", "--quiet", "--", "dvc.lock"], check=False
            ).returncode
            == 0
        )
        n = statistics.median(x.wall for x in noop["dvc repro (no-op)"])
        s = statistics.median(x.wall for x in noop["dvc status"])
        load = os.getloadavg()
        print_table(
            f"summary (revision {sha[:12]}; load average at the end {load[0]:.1f} {load[1]:.1f})",
            ["what", "value"],
            [
                ["first `dvc repro` wall", f"{r.wall:.0f} s"],
                ["first `dvc repro` CPU (all processes)", f"{r.cpu:.0f} s"],
                ["peak RSS (largest process)", f"{r.maxrss_mb / 1024:.2f} GB"],
                ["no-op `dvc repro` wall (median)", f"{n:.1f} s"],
                ["`dvc status` wall (median)", f"{s:.1f} s"],
                ["dvc.lock identical to the committed one", "yes" if lock_same else "no"],
            ],
        )
        if args.stages and args.before:
            before = export(args.before, tmp / "before")
            bench_stages(work, args.stages.split(","), before, args.repeats)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
