"""Keep dvc.yaml's code deps in the fingerprint form (run after adding a stage).

    python scripts/stage_deps.py          # list what is out of form; exit 1 if any
    python scripts/stage_deps.py --write  # rewrite the code lines of dvc.yaml's deps

Each stage's code is ``pipelines/<stage>.py`` plus every ``curation`` module it can
import (:mod:`curation.stage_code`); the ``code`` stage hashes those files into
``code-hashes/<stage>.txt``, and each stage lists that one file as its code dep.
``--write`` replaces, in each stage's ``deps``, the lines naming ``pipelines/``,
``curation/``, ``schemas`` or ``code-hashes/`` with ``code-hashes/<stage>.txt`` (data
deps and comments are kept; the ``code`` stage's own deps are left alone).
``tests/pipelines/test_stage_deps.py`` fails when dvc.yaml is out of this form.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from curation.stage_code import hashes_path  # noqa: E402

CODE_STAGE = "code"


def load_spec() -> dict[str, Any]:
    """The committed dvc.yaml, parsed."""
    spec: dict[str, Any] = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    return spec


def stage_deps(spec: dict[str, Any] | None = None) -> dict[str, tuple[Path, list[str]]]:
    """Stage name -> (its pipelines/ script, the deps dvc.yaml lists)."""
    spec = load_spec() if spec is None else spec
    out = {}
    for name, stage in spec["stages"].items():
        body = stage.get("do", stage)
        script = body["cmd"].split()[1]
        out[name] = (REPO / script, [str(d) for d in body.get("deps", [])])
    return out


def code_outs(spec: dict[str, Any]) -> list[str]:
    """The outputs the ``code`` stage declares in dvc.yaml."""
    outs = spec["stages"][CODE_STAGE]["outs"]
    return [next(iter(o)) if isinstance(o, dict) else str(o) for o in outs]


def problems(spec: dict[str, Any] | None = None) -> list[str]:
    """Every way dvc.yaml departs from the fingerprint form, one line each."""
    spec = load_spec() if spec is None else spec
    found = []
    stages = stage_deps(spec)
    declared = set(code_outs(spec)) if CODE_STAGE in stages else set()
    for name, (script, deps) in stages.items():
        if name == CODE_STAGE:
            continue
        want = hashes_path(script.stem)
        code = [d for d in deps if _CODE_DEP.match(d)]
        if code != [want]:
            found.append(f"{name}: code deps {code}, want [{want!r}]")
        if want not in declared:
            found.append(f"{name}: {want} is not an output of the {CODE_STAGE!r} stage")
    return found


_CODE_DEP = re.compile(r"^(pipelines/|curation/|curation$|schemas|code-hashes/)")
_CODE_LINE = re.compile(r"^(\s*)- (pipelines/|curation/|schemas|code-hashes/)\S*\s*(#.*)?$")


def rewrite(text: str) -> str:
    """dvc.yaml with every stage's code deps in the fingerprint form (other lines untouched)."""
    stages = stage_deps()
    out: list[str] = []
    stage: str | None = None
    in_deps = False
    written = False
    for line in text.splitlines(keepends=True):
        top = re.match(r"^  (\w[\w-]*):\s*$", line)
        if top:
            stage, in_deps, written = top.group(1), False, False
        if re.match(r"^\s+deps:\s*$", line):
            in_deps, written = True, False
            out.append(line)
            continue
        if in_deps and not re.match(r"^\s+(- |#)", line):
            in_deps = False
        match = _CODE_LINE.match(line) if in_deps else None
        if match and stage in stages and stage != CODE_STAGE:
            if not written:
                out.append(f"{match.group(1)}- {hashes_path(stages[stage][0].stem)}\n")
                written = True
            continue
        out.append(line)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite dvc.yaml in place")
    args = parser.parse_args(argv)
    dvc_yaml = REPO / "dvc.yaml"
    if args.write:
        dvc_yaml.write_text(rewrite(dvc_yaml.read_text(encoding="utf-8")), encoding="utf-8")
    bad = problems()
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
