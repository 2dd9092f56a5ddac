"""Keep each DVC stage's code deps equal to what it imports (run after adding an import).

    python scripts/stage_deps.py          # list what each stage misses; exit 1 if any
    python scripts/stage_deps.py --write  # rewrite the code lines of dvc.yaml's deps

A stage's code is ``pipelines/<stage>.py`` plus every ``curation`` module it can import,
transitively (imports inside functions too). ``--write`` replaces, in each stage's
``deps``, the lines naming ``pipelines/``, ``curation/`` or ``schemas`` with the stage
script, the ``curation`` sub-packages it reaches (as folders: their prompts and
templates count too), the top-level ``curation`` modules it reaches, and ``schemas``;
data deps and comments are kept. ``tests/test_stage_deps.py`` fails when dvc.yaml and
the code disagree.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "curation"


def module_file(name: str) -> Path | None:
    """The source file of ``curation.a.b`` (module or package), if it exists."""
    base = REPO.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(path: Path) -> set[str]:
    """Every ``curation`` module a file imports, with the parent packages Python loads."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        for name in names:
            if name.split(".")[0] != PACKAGE:
                continue
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if module_file(prefix) is not None:
                    found.add(prefix)
    return found


def import_closure(entry: Path) -> set[Path]:
    """Files of ``entry`` and of every ``curation`` module reachable from it."""
    seen: set[Path] = {entry}
    todo = [entry]
    while todo:
        for name in imported_modules(todo.pop()):
            file = module_file(name)
            if file is not None and file not in seen:
                seen.add(file)
                todo.append(file)
    return seen


def stage_deps() -> dict[str, tuple[Path, list[str]]]:
    """Stage name -> (its pipelines/ script, the deps dvc.yaml lists)."""
    spec = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    out = {}
    for name, stage in spec["stages"].items():
        body = stage.get("do", stage)
        script = body["cmd"].split()[1]
        out[name] = (REPO / script, [str(d) for d in body.get("deps", [])])
    return out


def covered(file: Path, deps: list[str]) -> bool:
    rel = file.relative_to(REPO)
    return any(rel == Path(d) or Path(d) in rel.parents for d in deps if "${" not in d)


def missing_deps(script: Path, deps: list[str]) -> list[str]:
    return sorted(str(f.relative_to(REPO)) for f in import_closure(script) if not covered(f, deps))


def code_deps(script: Path) -> list[str]:
    """The code lines a stage's ``deps`` should hold, in a stable order."""
    entries: set[str] = set()
    for file in import_closure(script):
        rel = file.relative_to(REPO)
        if rel.parts[0] == PACKAGE and len(rel.parts) > 2:
            entries.add(f"{PACKAGE}/{rel.parts[1]}")
        elif rel != script.relative_to(REPO):
            entries.add(str(rel))
    return [str(script.relative_to(REPO)), *sorted(entries), "schemas"]


_CODE_LINE = re.compile(r"^(\s*)- (pipelines/|curation/|schemas)\S*\s*(#.*)?$")


def rewrite(text: str) -> str:
    """dvc.yaml with every stage's code deps regenerated (other lines untouched)."""
    stages = stage_deps()
    out: list[str] = []
    lines = text.splitlines(keepends=True)
    stage: str | None = None
    in_deps = False
    written = False
    for line in lines:
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
        if match and stage in stages:
            if not written:
                indent = match.group(1)
                out.extend(f"{indent}- {dep}\n" for dep in code_deps(stages[stage][0]))
                written = True
            continue
        out.append(line)
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite dvc.yaml in place")
    args = parser.parse_args(argv)
    dvc_yaml = REPO / "dvc.yaml"
    if args.write:
        dvc_yaml.write_text(rewrite(dvc_yaml.read_text(encoding="utf-8")), encoding="utf-8")
    bad = 0
    for name, (script, deps) in stage_deps().items():
        missing = missing_deps(script, deps)
        if missing:
            bad += 1
            print(f"{name}: missing deps {missing}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
