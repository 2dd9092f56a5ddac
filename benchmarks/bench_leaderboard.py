"""A leaderboard onboarded and reproduced as a user would (issue 30): per-stage wall and
peak RSS of the default `dvc repro`.

    .venv/bin/python benchmarks/bench_leaderboard.py [--rev HEAD] [--models 4030]
        [--items 250 100] [--hand-entry] [--stage-timeout S] [--keep DIR]

In a scratch clone of this repository at ``--rev`` (commit first: uncommitted edits are
not measured) with the bundled benchmarks taken out of params.yaml:

1. ``benchmarks/make_leaderboard.py`` writes one wide CSV per ``--items`` value, the
   same simulated models in each (4,030 × 250 and × 100: the second gives MIRT a joint
   pool of 4,030 × 350);
2. each is onboarded with ``curate benchmark add lbN --responses lbN.csv`` (the one
   command), or with ``--hand-entry`` by writing the matrix-only entry and its imports
   folder by hand (what a revision without the matrix-only ``add`` needed);
3. ``dvc repro``, default params; each output line timestamped. Per stage: wall (from
   DVC's "Running stage" line to the next one: DVC's hashing included), CPU seconds of
   the stage's processes and the peak RSS of the largest (/proc polled every 0.2 s: the
   last fraction of a second of a process is not counted), the 1-minute load average
   when it started; and the busiest other processes on the machine at the start (the
   machine is shared: quote them, and read CPU beside wall).

``--stage-timeout S`` runs the stages one at a time (``dvc repro -s``, in DVC's order)
and stops any that runs longer than S seconds, recording "killed"; the stages that need
its outputs then fail at once ("not run"). Without it, one plain ``dvc repro``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from _table import print_table

REPO = Path(__file__).resolve().parent.parent
RUNNING = re.compile(r"^Running stage '([^']+)'")
ORDER = ("ingest", "responses", "check", "annotate", "gaps", "fill", "judge", "subsets",
         "build", "headline", "mirt")  # fmt: skip
"""Stage names in dependency order (each only needs stages before it)."""


@dataclass
class Stage:
    name: str
    wall: float = 0.0
    cpu: float = 0.0
    rss_mb: float = 0.0
    load: float = 0.0
    status: str = "ok"


TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Watch:
    """The current stage's peak RSS and CPU, polled from /proc under ``root_pid`` (DVC's
    own process left out: its hashing is in the wall time, not the CPU column)."""

    root_pid: int
    peak: dict[str, float] = field(default_factory=dict)
    cpu: dict[int, tuple[str, float]] = field(default_factory=dict)
    """pid -> (stage it ran in, its last user + system seconds)."""
    current: str = "(dvc)"
    done: bool = False

    def stage_cpu(self, name: str) -> float:
        return sum(sec for stage, sec in self.cpu.values() if stage == name)

    def _children(self) -> list[int]:
        kids: dict[int, list[int]] = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                kids.setdefault(ppid, []).append(int(d))
        out, todo = [], [self.root_pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += kids.get(pid, [])
        return out

    def poll(self) -> None:
        while not self.done:
            top = 0.0
            for pid in self._children():
                try:
                    with open(f"/proc/{pid}/status") as f:
                        for line in f:
                            if line.startswith("VmRSS:"):
                                top = max(top, int(line.split()[1]) / 1024)
                    if pid != self.root_pid:
                        with open(f"/proc/{pid}/stat") as f:
                            fields = f.read().rsplit(")", 1)[1].split()
                        sec = (int(fields[11]) + int(fields[12])) / TICK
                        stage = self.cpu.get(pid, (self.current, 0.0))[0]
                        self.cpu[pid] = (stage, sec)
                except (OSError, IndexError, ValueError):
                    continue
            self.peak[self.current] = max(self.peak.get(self.current, 0.0), top)
            time.sleep(0.2)


def env_for(root: Path) -> dict[str, str]:
    venv_bin = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=f"{venv_bin}:{env.get('PATH', '')}", PYTHONPATH=str(root),
               DVC_NO_ANALYTICS="1", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")  # fmt: skip
    return env


def busiest(n: int = 6) -> list[str]:
    """The ``n`` processes with the most CPU over the last second, not ours."""
    out = subprocess.run(["ps", "-eo", "pid,pcpu,rss,args", "--sort=-pcpu"],
                         capture_output=True, text=True).stdout.splitlines()[1:]  # fmt: skip
    mine = os.getpid()
    return [line.strip()[:110] for line in out if not line.split()[0] == str(mine)][:n]


def load1() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def strip_benchmarks(params: Path) -> None:
    """params.yaml with an empty ``benchmarks:`` mapping (text edit: comments kept)."""
    lines = params.read_text().splitlines(keepends=True)
    start = lines.index("benchmarks:\n")
    end = next(i for i in range(start + 1, len(lines))
               if lines[i].strip() and not lines[i].startswith((" ", "#")))  # fmt: skip
    params.write_text("".join(lines[: start + 1] + lines[end:]))


def hand_entry(work: Path, name: str, csv: Path) -> None:
    raw = work / "data/raw" / name
    (raw / "imports").mkdir(parents=True, exist_ok=True)
    (raw / "imports/.gitkeep").touch()
    shutil.copyfile(csv, raw / csv.name)
    path = f"data/raw/{name}/{csv.name}"
    entry = {name: {"domain": "leaderboard", "license": "unknown", "source": "simulated",
                    "items": {"texts": False, "path": path},
                    "responses": {"path": path, "layout": "wide", "model_column": "model",
                                  "n_trials": 1}}}  # fmt: skip
    block = "".join(f"  {line}\n" for line in yaml.safe_dump(entry).splitlines())
    text = (work / "params.yaml").read_text()
    (work / "params.yaml").write_text(text.replace("benchmarks:\n", "benchmarks:\n" + block, 1))


def run_repro(work: Path, args: list[str], watch_stages: dict[str, Stage],
              timeout: float | None) -> tuple[int, float]:  # fmt: skip
    env = env_for(work)
    t0 = time.perf_counter()
    proc = subprocess.Popen(["dvc", "repro", *args], cwd=work, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)  # fmt: skip
    watch = Watch(proc.pid)
    threading.Thread(target=watch.poll, daemon=True).start()
    killed = threading.Event()
    if timeout is not None:

        def _kill() -> None:
            killed.set()
            os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, _kill)
        timer.start()
    starts: list[tuple[float, str]] = []
    assert proc.stdout is not None
    for raw in proc.stdout:
        line = raw.rstrip("\n")
        t = time.perf_counter() - t0
        print(f"  [{t:7.1f}s] {line}"[:220], flush=True)
        if m := RUNNING.match(line):
            starts.append((t, m.group(1)))
            watch.current = m.group(1)
            watch_stages[m.group(1)] = Stage(m.group(1), load=load1())
    rc = proc.wait()
    if timeout is not None:
        timer.cancel()
    wall = time.perf_counter() - t0
    watch.done = True
    ends = [t for t, _ in starts[1:]] + [wall] * bool(starts)
    for (t, name), end in zip(starts, ends, strict=True):
        s = watch_stages[name]
        s.wall, s.rss_mb, s.cpu = end - t, watch.peak.get(name, 0.0), watch.stage_cpu(name)
    if killed.is_set() and starts:
        watch_stages[starts[-1][1]].status = f"killed at {timeout:.0f} s"
    return rc, wall


def stage_names(work: Path) -> list[str]:
    """Every stage of the project, in dependency order (``stage@b`` expanded)."""
    dvc = yaml.safe_load((work / "dvc.yaml").read_text())["stages"]
    params = yaml.safe_load((work / "params.yaml").read_text())
    out = []
    for base in ORDER:
        if "foreach" in dvc[base]:
            out += [f"{base}@{b}" for b in params["benchmarks"]]
        else:
            out.append(base)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rev", default="HEAD")
    ap.add_argument("--models", type=int, default=4030)
    ap.add_argument("--items", type=int, nargs="+", default=[250, 100])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hand-entry", action="store_true")
    ap.add_argument("--stage-timeout", type=float)
    ap.add_argument("--keep", type=Path, help="work here and keep it (else a temp folder)")
    args = ap.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-lb-")) / "repo"
    if work.exists():
        raise SystemExit(f"{work} exists")
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.rev],
                         capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    subprocess.run(["git", "clone", "-q", str(REPO), str(work)], check=True)
    subprocess.run(["git", "-C", str(work), "checkout", "-q", "--detach", rev], check=True)
    strip_benchmarks(work / "params.yaml")
    data = work.parent / "incoming"
    subprocess.run([sys.executable, str(REPO / "benchmarks/make_leaderboard.py"), "--out",
                    str(data), "--models", str(args.models), "--seed", str(args.seed),
                    "--items", *map(str, args.items)], check=True)  # fmt: skip
    env = env_for(work)
    for csv in sorted(data.glob("lb*.csv")):
        name = csv.stem
        if args.hand_entry:
            hand_entry(work, name, csv)
            print(f"{name}: entry written by hand")
        else:
            out = subprocess.run([sys.executable, "-m", "curation.cli", "benchmark", "add",
                                  name, "--responses", str(csv)], cwd=work, env=env,
                                 capture_output=True, text=True)  # fmt: skip
            print(out.stdout + out.stderr, end="")
            if out.returncode:
                raise SystemExit(f"curate benchmark add {name} failed")
    others = busiest()
    start_load = load1()
    stages: dict[str, Stage] = {}
    t0 = time.perf_counter()
    if args.stage_timeout is None:
        rc, _ = run_repro(work, [], stages, None)
        if rc:
            raise SystemExit(f"dvc repro failed (exit {rc}) in {work}")
    else:
        for name in ["code", *stage_names(work)]:
            rc, _ = run_repro(work, ["-s", name], stages, args.stage_timeout)
            if rc and name not in stages:  # an input a killed stage owed is missing
                stages[name] = Stage(name, status=f"not run (exit {rc})")
            elif rc and stages[name].status == "ok":
                stages[name].status = f"failed (exit {rc})"
    total = time.perf_counter() - t0
    rows = [[s.name, f"{s.wall:.1f}", f"{s.cpu:.1f}", f"{s.rss_mb:.0f}", f"{s.load:.1f}",
             s.status] for s in stages.values()]  # fmt: skip
    print_table(
        f"dvc repro of {args.models} models x {'+'.join(map(str, args.items))} items at {rev}"
        f" ({'hand entry' if args.hand_entry else 'curate benchmark add'}): {total:.0f} s, "
        f"load {start_load:.1f} at start",
        ["stage", "wall s", "CPU s", "peak RSS MB", "load1", "status"],
        rows,
    )
    print("\nbusiest other processes at the start (pid %cpu rss args):")
    print("\n".join(f"  {line}" for line in others))
    print(f"\nworkspace: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
