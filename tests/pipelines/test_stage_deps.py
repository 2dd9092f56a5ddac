"""Deps are the code: every DVC stage reruns when any file of `curation` it can import changes.

A stage's code is ``pipelines/<stage>.py`` plus everything it imports from ``curation``,
transitively (imports inside functions included, since they run too). The ``code``
stage hashes those files into ``code-hashes/<stage>.txt`` and each stage depends on its
own fingerprint (:mod:`curation.stage_code`). If a file were missing from a
fingerprint, editing it would leave ``dvc status`` clean and ``dvc repro`` would serve
outputs made by the old code; if a stage listed the wrong fingerprint, the same.
"""

from __future__ import annotations

import copy
import importlib.util
import shutil
from pathlib import Path

import pytest

from curation.stage_code import (
    code_entries,
    fingerprint,
    hashes_path,
    import_closure,
    stage_scripts,
)

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("stage_deps", REPO / "scripts" / "stage_deps.py")
assert _spec is not None and _spec.loader is not None
stage_deps_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(stage_deps_tool)

STAGES = stage_deps_tool.stage_deps()


def test_every_stage_depends_on_its_own_fingerprint_and_the_code_stage_makes_them_all():
    assert stage_deps_tool.problems() == []
    for name, (script, _) in STAGES.items():
        assert script.parent.name == "pipelines" and script.stem == name, (
            f"dvc.yaml stage {name!r} should run pipelines/{name}.py (one hop, same name)"
        )
    spec = stage_deps_tool.load_spec()
    assert sorted(stage_deps_tool.code_outs(spec)) == sorted(
        hashes_path(s.stem) for s in stage_scripts(REPO)
    )
    assert [str(d) for d in spec["stages"]["code"]["deps"]] == ["pipelines", "curation", "schemas"]


def test_a_wrong_or_missing_fingerprint_dep_is_reported():
    spec = stage_deps_tool.load_spec()
    broken = copy.deepcopy(spec)
    deps = broken["stages"]["annotate"]["do"]["deps"]
    deps[deps.index("code-hashes/annotate.txt")] = "code-hashes/check.txt"
    assert any(p.startswith("annotate:") for p in stage_deps_tool.problems(broken))
    gone = copy.deepcopy(spec)
    gone["stages"]["code"]["outs"] = [
        o for o in gone["stages"]["code"]["outs"] if "code-hashes/mirt.txt" not in o
    ]
    assert any("mirt" in p for p in stage_deps_tool.problems(gone))


def test_closure_follows_imports_inside_functions():
    """The closure must see lazy imports: a dep missed there is a stale output later."""
    closure = import_closure(REPO, REPO / "pipelines" / "fill.py")
    names = {str(p.relative_to(REPO)) for p in closure}
    assert "curation/calibrate/__init__.py" in names
    assert "curation/errors.py" in names  # reached only transitively


def test_the_fingerprint_hashes_every_file_of_the_closure_and_the_schemas():
    text = fingerprint(REPO, REPO / "pipelines" / "annotate.py")
    listed = {line.split("  ", 1)[1] for line in text.splitlines()[1:]}
    for file in import_closure(REPO, REPO / "pipelines" / "annotate.py"):
        assert file.relative_to(REPO).as_posix() in listed
    assert {p.relative_to(REPO).as_posix() for p in (REPO / "schemas").glob("*.json")} <= listed
    assert not any("__pycache__" in p or p.endswith(".pyc") for p in listed)
    assert "curation/fill/_search.py" not in listed  # annotate does not import BenchFill


@pytest.mark.long(seconds=55)
def test_an_edit_changes_exactly_the_fingerprints_of_the_stages_that_import_it(tmp_path):
    for name in ("pipelines", "curation", "schemas"):
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    scripts = stage_scripts(tmp_path)
    before = {s.stem: fingerprint(tmp_path, s) for s in scripts}
    edited = tmp_path / "curation" / "fill" / "_search.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    after = {s.stem: fingerprint(tmp_path, s) for s in scripts}
    changed = {s for s in before if before[s] != after[s]}
    importers = {s.stem for s in scripts if "curation/fill/_search.py" in code_entries(tmp_path, s)}
    assert changed == importers
    assert "fill" in changed and "annotate" not in changed and "ingest" not in changed
    # a file every stage imports changes every fingerprint
    errors = tmp_path / "curation" / "errors.py"
    errors.write_text(errors.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    again = {s.stem: fingerprint(tmp_path, s) for s in scripts}
    assert all(again[s] != after[s] for s in again)


def test_nothing_in_the_library_imports_the_stage_layer() -> None:
    """`curation` is the library: it never reaches up into `pipelines/`."""
    offenders = []
    import ast

    for path in (REPO / "curation").rglob("*.py"):
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


def test_closure_follows_lazy_exports_to_their_module_and_skips_type_checking_imports():
    """``from curation.fill import afill`` loads fill/_run.py; the settings alone do not."""
    fill = {str(p.relative_to(REPO)) for p in import_closure(REPO, REPO / "pipelines" / "fill.py")}
    assert "curation/fill/_run.py" in fill
    ingest = {
        str(p.relative_to(REPO)) for p in import_closure(REPO, REPO / "pipelines" / "ingest.py")
    }
    assert "curation/fill/_settings.py" in ingest  # params_model composes every section
    assert "curation/fill/_run.py" not in ingest  # reached only under TYPE_CHECKING


def test_llm_and_collect_are_listed_key_by_key_without_their_transport_keys() -> None:
    """The transport marks (curation.settings.Transport) decide what a stage depends on."""
    from curation.llm import CollectSettings, LLMSettings, PanelModel
    from curation.settings import transport_fields

    assert set(transport_fields(LLMSettings)) == {
        "timeout_s",
        "connect_timeout_s",
        "max_retries",
        "backoff_base_s",
        "backoff_max_s",
        "max_retry_after_s",
        "default_concurrency",
        "processes",
    }
    assert transport_fields(CollectSettings) == ("progress",)
    assert transport_fields(PanelModel) == ("concurrency",)
    split = stage_deps_tool.split_sections()
    assert split["llm"] == ["llm.cache", "llm.send_seed", "llm.stream_usage"]
    assert set(split) == {"llm", "collect"} and "collect.seed" in split["collect"]
    assert stage_deps_tool.section_params("fill") == ["fill"]  # no transport key of its own
    listed = stage_deps_tool.stage_params()
    for stage in ("responses", "fill", "judge"):
        assert [k for k in listed[stage] if k.startswith("llm")] == split["llm"], stage
    assert "collect.backend" in listed["judge"] and "collect.seed" not in listed["judge"]


def test_a_whole_section_a_transport_key_or_a_short_list_is_reported_and_rewritten() -> None:
    spec = stage_deps_tool.load_spec()
    for stage, bad in (
        ("fill", lambda ps: [*(p for p in ps if not p.startswith("llm.")), "llm"]),
        ("judge", lambda ps: [*ps, "llm.timeout_s"]),
        ("responses", lambda ps: [p for p in ps if p != "llm.send_seed"]),
        ("judge", lambda ps: [*ps, "collect.seed"]),  # more than PARTIAL says it reads
    ):
        broken = copy.deepcopy(spec)
        body = broken["stages"][stage]["do"]
        body["params"] = bad(body["params"])
        assert any(p.startswith(f"{stage}:") for p in stage_deps_tool.problems(broken)), stage
    text = (REPO / "dvc.yaml").read_text(encoding="utf-8")
    block = "".join(f"        - {k}\n" for k in stage_deps_tool.split_sections()["llm"])
    assert text.count(block) == 3
    whole = text.replace(block, "        - llm\n")
    assert stage_deps_tool.rewrite(whole) == text  # --write lists the keys again


def test_every_listed_params_key_is_spelt_in_the_bundled_and_the_toy_params() -> None:
    """DVC fails a stage whose listed key is missing from params.yaml ("Parameters ... are
    missing"): the bundled file and the toy project the DVC tests build both spell them."""
    import yaml

    from tests.conftest import TOY_PARAMS

    spec = stage_deps_tool.load_spec()
    toy = yaml.safe_load(TOY_PARAMS)
    assert stage_deps_tool.missing_params(spec, toy) == []
    bundled = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    assert stage_deps_tool.missing_params(spec, bundled) == []
    del bundled["collect"]["templates"], bundled["llm"]["send_seed"]
    assert stage_deps_tool.missing_params(spec, bundled) == [
        "responses@{gsm8k,math-l5,crux}: params.yaml does not spell 'collect.templates' "
        "(DVC fails the stage)",
        "responses@{gsm8k,math-l5,crux}: params.yaml does not spell 'llm.send_seed' "
        "(DVC fails the stage)",
        "fill@{gsm8k,math-l5,crux}: params.yaml does not spell 'collect.templates' "
        "(DVC fails the stage)",
        "fill@{gsm8k,math-l5,crux}: params.yaml does not spell 'llm.send_seed' "
        "(DVC fails the stage)",
        "judge@{gsm8k,math-l5,crux}: params.yaml does not spell 'llm.send_seed' "
        "(DVC fails the stage)",
    ]
