"""Every params key is declared once: on its section's model, which is the object the code
reads. These tests fail when a second declaration creeps back in:

* a parser helper of the old family is defined again (``mapping``/``number``/``integer``/
  ``boolean``/``reject_unknown`` in curation.settings, ``_opt``/``_get``/``DEFAULTS``, the
  ``*_settings(params)`` parsers, ``legacy_mapping``);
* a function takes the params file as a raw mapping (every parameter named ``params`` is
  annotated ``ParamsFile``);
* code reads a params key out of a mapping with a literal fallback equal to the model's
  default (``section.get("max_trials", 160)``): a second default;
* the published JSON Schema's default differs from the model's for some key.
"""

from __future__ import annotations

import ast
import json
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined, to_jsonable_python

from curation.params_model import ParamsFile

REPO = Path(__file__).resolve().parent.parent
SETTINGS_MODULES = {"_settings.py", "params_model.py", "benchmarks.py", "settings.py"}
"""Where params keys are declared (and nowhere else)."""

OLD_PARSERS = {
    "mapping",
    "number",
    "integer",
    "boolean",
    "reject_unknown",
    "_opt",
    "_get",
    "_section",
    "_where",
    "_known_keys",
    "legacy_mapping",
    "fill_settings",
    "calibration_settings",
    "collect_settings",
    "llm_settings",
    "panel_models",
    "judge_settings",
    "review_config",
    "subsets_config",
    "grading_settings",
    "plot_settings",
    "benchmark_spec",
    "benchmark_limit",
    "settings_from_params",
}
"""The second family of params parsers (issue 27): none of these may be defined again."""

RECORD_READS: set[tuple[str, str]] = {
    ("curation/irt/_calibrate.py", "b_sd"),
    ("curation/measure/_resolution.py", "b_sd"),
    ("curation/measure/_fitted.py", "method"),
    ("curation/measure/_resolution.py", "method"),
}
"""``.get(key, default)`` on a stored record (a calibration file written by an older
version), not on params: the fallback is the value such a file was written with."""


def _sources() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted([*REPO.glob("curation/**/*.py"), *REPO.glob("pipelines/*.py")]):
        rel = path.relative_to(REPO).as_posix()
        yield rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)


def _models(cls: type[BaseModel], seen: set[type[BaseModel]]) -> Iterator[type[BaseModel]]:
    if cls in seen:
        return
    seen.add(cls)
    yield cls
    for field in cls.model_fields.values():
        stack: list[Any] = [field.annotation]
        while stack:
            t = stack.pop()
            if isinstance(t, type) and issubclass(t, BaseModel):
                yield from _models(t, seen)
            stack.extend(typing.get_args(t))


def _model_defaults() -> dict[str, set[Any]]:
    """Key name -> the defaults the models declare for a key of that name."""
    out: dict[str, set[Any]] = {}
    for model in _models(ParamsFile, set()):
        for name, field in model.model_fields.items():
            if field.default is not PydanticUndefined and isinstance(
                field.default, int | float | str | bool
            ):
                out.setdefault(name, set()).add(field.default)
    return out


def test_no_old_parser_is_defined() -> None:
    found = [
        f"{rel}:{node.lineno}: {node.name}"
        for rel, tree in _sources()
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in OLD_PARSERS
    ]
    found += [
        f"{rel}:{node.lineno}: DEFAULTS"
        for rel, tree in _sources()
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == "DEFAULTS"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    ]
    assert found == [], "a second params parser:\n" + "\n".join(found)


def test_every_params_argument_is_the_validated_file() -> None:
    loose = []
    for rel, tree in _sources():
        if rel in ("curation/params.py", "curation/params_model.py"):
            continue  # reading and validating the YAML is their job
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg == "params" and (
                    arg.annotation is None or "ParamsFile" not in ast.unparse(arg.annotation)
                ):
                    loose.append(f"{rel}:{node.lineno}: {node.name}({arg.arg})")
    assert loose == [], "functions taking params as a raw mapping:\n" + "\n".join(loose)


def test_no_second_default_outside_the_models() -> None:
    defaults = _model_defaults()
    seconds = []
    for rel, tree in _sources():
        if Path(rel).name in SETTINGS_MODULES:
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("get", "setdefault", "pop")
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[1], ast.Constant)
            ):
                continue
            key, fallback = node.args[0].value, node.args[1].value
            if key in defaults and fallback in defaults[key] and (rel, key) not in RECORD_READS:
                seconds.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert seconds == [], "a params default declared a second time:\n" + "\n".join(seconds)


def _schema_defaults(schema: dict[str, Any]) -> Iterator[tuple[str, str, Any]]:
    for name, definition in schema.get("$defs", {}).items():
        for key, prop in definition.get("properties", {}).items():
            if "default" in prop:
                yield name, key, prop["default"]


@pytest.mark.parametrize("schema_file", ["params.schema.json"])
def test_schema_defaults_are_the_model_defaults(schema_file: str) -> None:
    schema = json.loads((REPO / "schemas" / schema_file).read_text(encoding="utf-8"))
    by_name = {m.__name__: m for m in _models(ParamsFile, set())}
    checked = 0
    for model_name, key, default in _schema_defaults(schema):
        field = by_name[model_name].model_fields[key]
        value = field.get_default(call_default_factory=True)
        # as pydantic writes a default into the schema: a Path as its text, a model as
        # its JSON dump (json.dumps alone cannot encode either)
        assert to_jsonable_python(value) == default, f"{model_name}.{key}"
        checked += 1
    assert checked > 100  # the walk really reached the sections
