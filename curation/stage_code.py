"""Which files are a DVC stage's code, and one fingerprint file per stage that hashes them.

A stage's code is ``pipelines/<stage>.py`` plus every ``curation`` module it can import,
transitively (imports inside functions too: they run), found from the source with
``ast`` (nothing is executed; names a lazily exporting package resolves on use are
followed to the module that defines them), plus the data files (prompts, templates)
of every package it reaches and ``schemas/`` (the records it validates) always.

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
_DECLARATIONS = ("__init__.py", "_settings.py")
"""A package's files that declare rather than run (lazy exports, its params models)."""
_IGNORED_SUFFIXES = (".pyc",)


def module_file(root: Path, name: str) -> Path | None:
    """The source file of ``curation.a.b`` (module or package) under ``root``, if any."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """``id`` of every node inside an ``if TYPE_CHECKING:`` block (never run)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            skipped.update(id(inner) for stmt in node.body for inner in ast.walk(stmt))
    return skipped


def lazy_exports_of(root: Path, package: str) -> dict[str, str] | None:
    """A package's ``_EXPORTS`` (public name -> absolute module), when its ``__init__``
    exports lazily (:mod:`curation.lazy`); None for an eager ``__init__``."""
    init = root.joinpath(*package.split(".")) / "__init__.py"
    if not init.is_file():
        return None
    tree = ast.parse(init.read_text(encoding="utf-8"), filename=str(init))
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets)
            and isinstance(node.value, ast.Dict)
        ):
            out: dict[str, str] = {}
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant):
                    module = str(value.value).partition(":")[0]
                    absolute = module if module.startswith(f"{PACKAGE}.") else f"{package}.{module}"
                    out[str(key.value)] = absolute
            return out
    return None


def imported_modules(root: Path, path: Path) -> set[str]:
    """Every ``curation`` module a file imports, with the parent packages Python loads.

    Imports inside functions count (they run); imports under ``if TYPE_CHECKING:`` do
    not. ``from pkg import Name`` of a lazily exporting package loads only the module
    that defines ``Name``; a plain ``import pkg`` of one may reach any of its exports.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_blocks(tree)
    found: set[str] = set()

    def add(name: str) -> None:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):
            prefix = ".".join(parts[:i])
            if module_file(root, prefix) is not None:
                found.add(prefix)

    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == PACKAGE:
                    add(alias.name)
                    for module in (lazy_exports_of(root, alias.name) or {}).values():
                        add(module)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != PACKAGE:
                continue
            add(node.module)
            lazy = lazy_exports_of(root, node.module)
            for alias in node.names:
                if lazy is not None and alias.name in lazy:
                    add(lazy[alias.name])
                else:
                    add(f"{node.module}.{alias.name}")
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
    """The stage's code as dvc-style paths: its script, every ``curation`` module it can
    reach, the data files (prompts, templates, static pages) of each package it reaches,
    and ``schemas`` (stable order).

    Module by module, not package folder by package folder: every stage reads its
    settings through :mod:`curation.params_model`, which reaches each package's
    ``_settings.py``, so whole folders would make every stage depend on every package.
    """
    entries: set[str] = set()
    packages: set[Path] = set()
    for file in import_closure(root, script):
        rel = file.relative_to(root)
        if rel != script.relative_to(root):
            entries.add(rel.as_posix())
        if rel.parts[0] == PACKAGE and len(rel.parts) > 2 and file.name not in _DECLARATIONS:
            packages.add(file.parent)  # the package's code runs: its data files are read
    for folder in packages:
        for data in folder.rglob("*"):
            if (
                data.is_file()
                and data.suffix not in (".py", *_IGNORED_SUFFIXES)
                and not any(part in _IGNORED for part in data.relative_to(folder).parts)
                and not _inside_subpackage(folder, data)
            ):
                entries.add(data.relative_to(root).as_posix())
    return [script.relative_to(root).as_posix(), *sorted(entries), "schemas"]


def _inside_subpackage(folder: Path, data: Path) -> bool:
    """True when ``data`` belongs to a sub-package of ``folder`` (counted with that one)."""
    for parent in data.relative_to(folder).parents:
        if parent != Path(".") and (folder / parent / "__init__.py").is_file():
            return True
    return False


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
