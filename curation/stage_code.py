"""Which files are a DVC stage's code, and one fingerprint file per stage that hashes them.

A stage's code is ``pipelines/<stage>.py`` plus every ``curation`` module it can import,
transitively (imports inside functions too: they run), found from the source with
``ast`` (nothing is executed). A sub-package counts as its whole folder (its prompts
and templates are code too), a top-level module as its file, and ``schemas/`` (the
records it validates) always.

Why a fingerprint file instead of listing those folders as deps in ``dvc.yaml``: after
every stage DVC re-reads and rewrites the whole ``dvc.lock`` with a pure-Python
round-trip YAML parser, so its cost per stage grows with the lock's length, and the
code deps were 61% of it (~20 entries per stage, 29 stages). The ``code`` stage writes
``code-hashes/<stage>.txt`` (the md5 of every file above, one line each, sorted), and
each stage depends on its own file alone. A changed module changes exactly the
fingerprints of the stages that import it, so DVC reruns exactly those (the other
fingerprints are left as they are, and DVC compares hashes).
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

PACKAGE = "curation"
HASHES_DIR = "code-hashes"
"""Where the ``code`` stage writes one fingerprint per stage (committed, ``cache: false``)."""
_IGNORED = ("__pycache__",)
_IGNORED_SUFFIXES = (".pyc",)


def module_file(root: Path, name: str) -> Path | None:
    """The source file of ``curation.a.b`` (module or package) under ``root``, if any."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(root: Path, path: Path) -> set[str]:
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
                if module_file(root, prefix) is not None:
                    found.add(prefix)
    return found


def import_closure(root: Path, entry: Path) -> set[Path]:
    """Files of ``entry`` and of every ``curation`` module reachable from it."""
    seen: set[Path] = {entry}
    todo = [entry]
    while todo:
        for name in imported_modules(root, todo.pop()):
            file = module_file(root, name)
            if file is not None and file not in seen:
                seen.add(file)
                todo.append(file)
    return seen


def code_entries(root: Path, script: Path) -> list[str]:
    """The stage's code as dvc-style paths: its script, the ``curation`` sub-package
    folders and top-level modules it reaches, and ``schemas`` (stable order)."""
    entries: set[str] = set()
    for file in import_closure(root, script):
        rel = file.relative_to(root)
        if rel.parts[0] == PACKAGE and len(rel.parts) > 2:
            entries.add(f"{PACKAGE}/{rel.parts[1]}")
        elif rel != script.relative_to(root):
            entries.add(rel.as_posix())
    return [script.relative_to(root).as_posix(), *sorted(entries), "schemas"]


def _files(root: Path, entry: str) -> list[Path]:
    path = root / entry
    if path.is_file():
        return [path]
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file()
        and not any(part in _IGNORED for part in p.relative_to(path).parts)
        and p.suffix not in _IGNORED_SUFFIXES
    )


def fingerprint(root: Path, script: Path) -> str:
    """The text of ``code-hashes/<stage>.txt``: md5 and path of every file of the stage's code."""
    lines = [
        f"# {script.relative_to(root).as_posix()} and every file it can import "
        "(written by pipelines/code.py; the stage's only code dep)"
    ]
    files = sorted({f for entry in code_entries(root, script) for f in _files(root, entry)})
    for file in files:
        digest = hashlib.md5(file.read_bytes(), usedforsecurity=False).hexdigest()
        lines.append(f"{digest}  {file.relative_to(root).as_posix()}")
    return "\n".join(lines) + "\n"


def stage_scripts(root: Path) -> list[Path]:
    """Every stage script that gets a fingerprint: ``pipelines/*.py`` but ``code.py``."""
    return sorted(
        p for p in (root / "pipelines").glob("*.py") if p.stem not in ("__init__", "code")
    )


def hashes_path(stage: str) -> str:
    """``code-hashes/<stage>.txt``: the dep ``dvc.yaml`` lists for ``stage``'s code."""
    return f"{HASHES_DIR}/{stage}.txt"
