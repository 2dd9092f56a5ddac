"""The boundaries the house promises, read from the source with ``ast`` (nothing runs):

* a stage (``pipelines/*.py``) uses ``curation`` only through public modules;
* a package under ``curation/`` never imports another package's private module (a
  ``_x`` module is private to the package that holds it and to that package's
  sub-packages): each package's public face is its ``__init__`` and its public modules;
* the import graph of ``curation/`` has no cycle. Imports inside functions count (they
  run when the function does); ``importlib.import_module`` with a computed name (the
  lazy ``__init__`` tables) is not followed.

The checks are tested on a small made-up tree too, so a check that silently finds
nothing fails here as well.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from curation.stage_code import lazy_exports_of

ROOT = Path(__file__).resolve().parents[1]

ALLOWED: Mapping[tuple[str, str], str] = {}
"""(importer, private module) -> why it is allowed for now. Every entry must still be needed."""


def module_name(root: Path, path: Path) -> str:
    """``curation/llm/_client.py`` -> ``curation.llm._client``; a package is its folder."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(root: Path, folders: tuple[str, ...] = ("curation", "pipelines")) -> dict[str, Path]:
    """Every Python module under ``folders`` of ``root``, by dotted name."""
    return {
        module_name(root, path): path
        for folder in folders
        for path in sorted((root / folder).rglob("*.py"))
        if "__pycache__" not in path.parts
    }


def _type_only(tree: ast.Module) -> set[int]:
    """``id`` of every node under ``if TYPE_CHECKING:`` (imported for the type checker only)."""
    return {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for stmt in node.body
        for inner in ast.walk(stmt)
    }


def imports(
    name: str, path: Path, known: Mapping[str, Path], *, runtime: bool = False
) -> Iterator[tuple[str, int]]:
    """(imported module, line) for every import in ``path``, wherever it sits.

    ``from a.b import c`` imports module ``a.b.c`` when that is a module of ``known``,
    else module ``a.b`` (``c`` is a name in it) — or, with ``runtime``, the module a lazily
    exporting ``a.b`` loads for ``c`` (:mod:`curation.lazy`). Relative imports are resolved.
    ``runtime`` also leaves out imports under ``if TYPE_CHECKING:``, which never run.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    skipped = _type_only(tree) if runtime else set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            init = known.get(base)
            lazy = (
                lazy_exports_of(init.parents[len(base.split("."))], base)
                if runtime and init is not None and init.name == "__init__.py"
                else None
            )
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if lazy is not None and alias.name in lazy:
                    yield lazy[alias.name], node.lineno
                else:
                    yield (sub if sub in known else base), node.lineno


def private_owner(module: str) -> str | None:
    """The package a private module belongs to (``curation.llm._client`` -> ``curation.llm``),
    or None for a public module."""
    parts = module.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def private_imports(known: Mapping[str, Path]) -> dict[tuple[str, str], list[str]]:
    """(importer, private module of another package) -> the places (``file:line``)."""
    found: dict[tuple[str, str], list[str]] = {}
    for name, path in known.items():
        for target, line in imports(name, path, known):
            if target.split(".")[0] != "curation":
                continue
            owner = private_owner(target)
            if owner is None or name == owner or name.startswith(owner + "."):
                continue
            found.setdefault((name, target), []).append(f"{path.relative_to(ROOT)}:{line}")
    return found


def graph(known: Mapping[str, Path], package: str = "curation") -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it loads when it runs (a name from a lazily
    exporting package: the module that defines it; type-checking imports do not run)."""
    edges: dict[str, set[str]] = {n: set() for n in known if n.split(".")[0] == package}
    for name in edges:
        for target, _ in imports(name, known[name], known, runtime=True):
            while target and target not in known:  # ``from curation.x import Name``
                target = target.rpartition(".")[0]
            if target in edges and target != name:
                edges[name].add(target)
    return edges


def cycles(edges: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


KNOWN = modules(ROOT)


def test_no_stage_or_package_imports_another_packages_private_module() -> None:
    found = private_imports(KNOWN)
    broken = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not broken, "private modules imported from outside their package:\n" + "\n".join(
        f"  {place}: {target}" for (_, target), places in sorted(broken.items()) for place in places
    )


def test_every_allowlist_entry_is_still_needed() -> None:
    stale = set(ALLOWED) - set(private_imports(KNOWN))
    assert not stale, f"these imports are gone; delete their ALLOWED entries: {sorted(stale)}"


def test_the_import_graph_of_curation_has_no_cycle() -> None:
    edges = graph(KNOWN)
    assert len(edges) > 150  # the whole package was read
    assert "curation.llm._types" in edges["curation.llm._client"]
    assert cycles(edges) == []


def _write(root: Path, files: Mapping[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def test_the_checks_find_private_imports_and_cycles(tmp_path: Path, monkeypatch) -> None:
    _write(
        tmp_path,
        {
            "curation/__init__.py": "",
            "curation/a/__init__.py": "from curation.a._x import f\n",
            "curation/a/_x.py": "def f():\n    from . import _y\n",
            "curation/a/_y.py": "from curation.a._x import f\n",  # a cycle with _x
            "curation/a/sub/_z.py": "from curation.a._x import f\n",  # own package: fine
            "curation/b/__init__.py": "from curation.a import f\n",  # public: fine
            "curation/b/_m.py": "def g():\n    from curation.a import _x\n",
            "pipelines/stage.py": "import curation.a._y\nfrom curation.a import f\n",
        },
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    known = modules(tmp_path)
    assert set(private_imports(known)) == {
        ("curation.b._m", "curation.a._x"),
        ("pipelines.stage", "curation.a._y"),
    }
    assert cycles(graph(known)) == [["curation.a._x", "curation.a._y"]]
    # a two-module cycle through package __init__ files is found too
    _write(
        tmp_path,
        {
            "curation/a/_y.py": "import curation.b\n",
            "curation/b/__init__.py": "from curation.a._y import *\n",
        },
    )
    found = cycles(graph(modules(tmp_path)))
    assert found == [["curation.a._y", "curation.b"]]


@pytest.mark.parametrize(
    ("module", "owner"),
    [
        ("curation.llm._client", "curation.llm"),
        ("curation.irt.mirt._fit", "curation.irt.mirt"),
        ("curation.llm", None),
        ("curation.commands.help", None),
        ("curation.review.__main__", None),
    ],
)
def test_a_private_module_belongs_to_the_package_that_holds_it(module, owner) -> None:
    assert private_owner(module) == owner


def test_type_only_imports_and_lazy_exports_are_not_cycles(tmp_path: Path) -> None:
    """A module that names the params file only for the type checker, and a package whose
    exports load on first use, close no cycle; the same import at run time does."""
    _write(
        tmp_path,
        {
            "curation/__init__.py": "",
            "curation/top.py": "from curation.a import Settings\n",  # composes a's settings
            "curation/a/__init__.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from curation.a._run import run\n"
                "    from curation.a._settings import Settings\n"
                '_EXPORTS = {"run": "_run", "Settings": "_settings"}\n'
            ),
            "curation/a/_settings.py": "class Settings: ...\n",
            "curation/a/_run.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from curation.top import X\n"
            ),
        },
    )
    assert cycles(graph(modules(tmp_path))) == []
    _write(tmp_path, {"curation/a/_settings.py": "from curation.top import X\n"})
    assert cycles(graph(modules(tmp_path))) == [["curation.a._settings", "curation.top"]]
