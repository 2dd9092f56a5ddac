"""Run one bad-input case of ``tests/corpus/cases.yaml`` in a copy of a built toy project.

A case is one row: edits to the project (a raw file, an intermediate, params.yaml), an
optional ``pre`` list of commands that must succeed after the edits (to make a degenerate
matrix the current one, say), then one command run in-process -- a stage
(``["annotate"]``, as ``python pipelines/annotate.py`` would) or ``curate`` (``["curate",
...]``). The outcome is compared with the row: exit code, a message fragment, one
``error:`` line and no traceback, and (``untouched``, the default) every output under
data/, metrics/, reports/, plots/ and dist/ byte-identical to before the command.

Shared by tests/test_bad_inputs.py and by the "before the fix" count (running the same
table against another checkout's code).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

CORPUS = Path(__file__).parent
CASES_FILE = CORPUS / "cases.yaml"
OUTPUT_DIRS = ("data", "metrics", "reports", "plots", "dist")
WIDE_EDITS: list[dict[str, Any]] = [
    {"set": "benchmarks.toy.responses.layout", "value": "wide"},
    {"delete": "benchmarks.toy.responses.columns"},
]
"""``wide: true`` in a row: the toy benchmark's matrix is read as a wide CSV."""
TEMPLATE_STAGES = ("ingest", "responses", "check", "annotate", "gaps", "subsets", "build")


def load_cases() -> list[dict[str, Any]]:
    return list(yaml.safe_load(CASES_FILE.read_text(encoding="utf-8"))["cases"])


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for d in OUTPUT_DIRS
        if (root / d).exists()
        for p in sorted((root / d).rglob("*"))
        if p.is_file()
    }


def run_command(argv: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of a stage or ``curate`` command, in-process."""
    from tests.stage_cli import run_stage

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            if argv[0] == "curate":
                from curation.cli import main

                code = main(argv[1:])
            else:
                code = run_stage(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except BaseException as exc:  # noqa: BLE001 - an escaped exception is the finding
            import traceback

            err.write("Traceback (most recent call last):\n" + traceback.format_exc())
            code = -1 if not isinstance(exc, Exception) else 1
    return code, out.getvalue(), err.getvalue()


def make_template(root: Path) -> Path:
    """The toy project (tests/conftest.py) with every stage up to ``build`` run."""
    from tests.conftest import write_toy_project

    write_toy_project(root)
    here = Path.cwd()
    os.chdir(root)
    try:
        for stage in TEMPLATE_STAGES:
            code, out, err = run_command([stage])
            if code != 0:
                raise RuntimeError(f"template stage {stage} failed ({code}): {err}{out}")
    finally:
        os.chdir(here)
    return root


# ---- edits --------------------------------------------------------------------------------


def _walk(params: dict[str, Any], dotted: str) -> tuple[Any, str]:
    *parents, key = dotted.split(".")
    node: Any = params
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    return node, key


def _edit_params(root: Path, edit: dict[str, Any]) -> None:
    path = root / "params.yaml"
    params = yaml.safe_load(path.read_text())
    if "set" in edit:
        node, key = _walk(params, edit["set"])
        if isinstance(node, list):
            node[int(key)] = edit["value"]
        else:
            node[key] = edit["value"]
    elif "rename" in edit:
        node, key = _walk(params, edit["rename"])
        node[edit["to"]] = node.pop(key)
    elif "delete" in edit:
        node, key = _walk(params, edit["delete"])
        node.pop(key)
    path.write_text(yaml.safe_dump(params, sort_keys=False, allow_unicode=True))


def apply_edit(root: Path, edit: dict[str, Any]) -> None:
    if {"set", "rename", "delete"} & set(edit):
        _edit_params(root, edit)
        return
    target = _resolve(root, edit["file"])
    target.parent.mkdir(parents=True, exist_ok=True)
    if "text" in edit:
        target.write_text(edit["text"], encoding="utf-8")
    elif "bytes_hex" in edit:
        target.write_bytes(bytes.fromhex(edit["bytes_hex"]))
    elif "copy" in edit:
        shutil.copyfile(CORPUS / edit["copy"], target)
    elif "copy_from" in edit:
        shutil.copyfile(_resolve(root, edit["copy_from"]), target)
    elif "rehash_manifest" in edit:  # what a careful forger does after editing a file
        manifest = json.loads(target.read_text(encoding="utf-8"))
        for rel, entry in manifest["files"].items():
            data = (target.parent / rel).read_bytes()
            entry.update(sha256=hashlib.sha256(data).hexdigest(), size=len(data))
        target.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    elif "truncate" in edit:
        data = target.read_bytes()
        target.write_bytes(data[: int(edit["truncate"] * len(data))])
    elif "replace" in edit:
        text = target.read_text(encoding="utf-8")
        assert edit["replace"] in text, f"{edit['file']}: no {edit['replace']!r}"
        target.write_text(text.replace(edit["replace"], edit["with"], 1), encoding="utf-8")
    elif "json_set" in edit:
        obj = json.loads(target.read_text(encoding="utf-8"))
        node, key = _walk(obj, edit["json_set"])
        node[key] = edit["value"]
        target.write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")
    elif "remove" in edit:
        target.unlink()
    else:
        raise ValueError(f"unknown edit {edit}")


def _resolve(root: Path, pattern: str) -> Path:
    """A path of the project; a glob pattern names its first match."""
    if not any(ch in pattern for ch in "*?["):
        return root / pattern
    found = sorted(root.glob(pattern))
    assert found, f"no file matches {pattern}"
    return found[0]


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    changed: list[str]

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.out + self.err


def run_case(case: dict[str, Any], template: Path, work: Path) -> Outcome:
    """Copy the template to ``work``, apply the case, run its command there."""
    shutil.copytree(template, work, symlinks=True)
    here = Path.cwd()
    os.chdir(work)
    try:
        for edit in (WIDE_EDITS if case.get("wide") else []) + case.get("edits", []):
            apply_edit(work, dict(edit))
        for pre in case.get("pre", []):
            code, out, err = run_command(list(pre))
            assert code == 0, f"pre-command {pre} failed ({code}): {err}{out}"
        before = snapshot(work)
        code, out, err = run_command(list(case["command"]))
        after = snapshot(work)
    finally:
        os.chdir(here)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    return Outcome(code, out, err, changed)


def problems(case: dict[str, Any], outcome: Outcome) -> list[str]:
    """What the outcome gets wrong against the row (empty: the case passes)."""
    wrong = []
    if outcome.traceback:
        wrong.append("traceback shown")
    if outcome.code != case.get("exit", 2):
        wrong.append(f"exit {outcome.code}, expected {case.get('exit', 2)}")
    text = outcome.out + outcome.err
    if case["says"] not in text:
        wrong.append(f"message lacks {case['says']!r}")
    if case.get("exit", 2) != 0:
        lines = [ln for ln in outcome.err.strip().splitlines() if ln.strip()]
        if len(lines) != 1 or not lines[0].startswith("error: "):
            wrong.append(f"expected one 'error:' line, got {len(lines)} line(s)")
    if case.get("untouched", True) and outcome.changed:
        wrong.append(f"outputs changed: {', '.join(outcome.changed[:4])}")
    return wrong


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.corpus.runner``: run the whole table, print kinds x pass/fail."""
    import sys
    import tempfile
    import time
    from collections import Counter

    argv = sys.argv[1:] if argv is None else argv
    start = time.perf_counter()
    cases = load_cases()
    total: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch:
        template = make_template(Path(scratch) / "template")
        for i, case in enumerate(cases):
            try:
                outcome = run_case(case, template, Path(scratch) / f"case-{i}")
                wrong = problems(case, outcome)
            except AssertionError as exc:  # the case could not even be set up
                outcome, wrong = Outcome(-1, "", str(exc), []), [f"setup: {exc}"]
            total[case["kind"]] += 1
            if wrong:
                failed[case["kind"]] += 1
                if "-v" in argv:
                    first = (outcome.err.strip().splitlines() or [""])[-1][:160]
                    print(f"FAIL {case['name']}: {'; '.join(wrong)} | {first}")
    print(f"{'kind':<16}{'cases':>6}{'failing':>9}")
    for kind in total:
        print(f"{kind:<16}{total[kind]:>6}{failed[kind]:>9}")
    print(f"{'all':<16}{sum(total.values()):>6}{sum(failed.values()):>9}")
    print(f"{time.perf_counter() - start:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
