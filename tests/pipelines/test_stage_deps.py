"""Deps are the code: every DVC stage depends on every file of `curation` it can import.

A stage's code is ``pipelines/<stage>.py`` plus everything it imports from ``curation``,
transitively (imports inside functions included, since they run too). If ``dvc.yaml``
missed one of those files, editing it would leave ``dvc status`` clean and ``dvc repro``
would serve outputs made by the old code. This test computes each stage's import
closure from the source (``ast``, nothing is executed) and fails naming the missing
``deps`` lines.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("stage_deps", REPO / "scripts" / "stage_deps.py")
assert _spec is not None and _spec.loader is not None
stage_deps_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stage_deps_tool)
import_closure = stage_deps_tool.import_closure
missing_deps = stage_deps_tool.missing_deps
PACKAGE = stage_deps_tool.PACKAGE

STAGES = stage_deps_tool.stage_deps()


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_stage_deps_cover_its_import_closure(stage: str) -> None:
    script, deps = STAGES[stage]
    assert script.parent.name == "pipelines" and script.stem == stage, (
        f"dvc.yaml stage {stage!r} should run pipelines/{stage}.py (one hop, same name)"
    )
    missing = missing_deps(script, deps)
    assert not missing, f"dvc.yaml stage {stage!r} misses deps (add these lines): {missing}"
    assert "schemas" in deps, f"dvc.yaml stage {stage!r}: add `schemas` (records it validates)"


def test_closure_follows_imports_inside_functions(tmp_path: Path) -> None:
    """The closure must see lazy imports: a dep missed there is a stale output later."""
    closure = import_closure(REPO / "pipelines" / "fill.py")
    names = {str(p.relative_to(REPO)) for p in closure}
    assert "curation/calibrate/__init__.py" in names
    assert "curation/errors.py" in names  # reached only transitively


def test_missing_dep_is_reported() -> None:
    """Dropping a dep line makes the check fail, naming the uncovered files."""
    script, deps = STAGES["annotate"]
    assert not missing_deps(script, deps)
    without_irt = [d for d in deps if d != "curation/irt"]
    assert any(m.startswith("curation/irt/") for m in missing_deps(script, without_irt))


def test_nothing_in_the_library_imports_the_stage_layer() -> None:
    """`curation` is the library: it never reaches up into `pipelines/`."""
    offenders = []
    import ast

    for path in (REPO / PACKAGE).rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module]
            if any(m.split(".")[0] == "pipelines" for m in mods):
                offenders.append(str(path.relative_to(REPO)))
    assert not offenders


def test_pipelines_holds_only_stage_code() -> None:
    stages = set(STAGES)
    files = {p.stem for p in (REPO / "pipelines").glob("*.py")} - {"__init__"}
    assert files == stages, f"pipelines/ files that are not dvc.yaml stages: {files - stages}"


def test_generated_deps_match_dvc_yaml() -> None:
    """`python scripts/stage_deps.py --write` would change nothing in the committed dvc.yaml."""
    text = (REPO / "dvc.yaml").read_text(encoding="utf-8")
    assert stage_deps_tool.rewrite(text) == text, "run: python scripts/stage_deps.py --write"
