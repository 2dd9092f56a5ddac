"""`curate validate` and the stages accept exactly the same params files (issue 27).

Mutations are drawn per key of :class:`~curation.params_model.ParamsFile`, walking its
JSON Schema from a toy project's params (the bundled file's ``gaps``, ``subsets``,
``build`` and ``plots`` sections on the toy benchmark):

* a key dropped, a nested section cut to some of its keys, an in-range value: the file
  must validate (every key of these sections has a default) and every stage that reads the
  section must then run, in-process on a prebuilt toy project, exit 0 — the direction the
  old parsers broke (``gaps: {thresholds: {ddm: 0.2}}`` validated, then the stage died
  with KeyError 'max_gap');
* a misspelt key, a value of a type the schema does not allow, a value outside the
  schema's bounds, anywhere in the file: validation must refuse it with one ConfigError
  naming the key — and so every stage refuses it too (``stage_main`` validates with the
  same function before ``run``). These are a finite list, cheap to check: all of them are
  (about 1,000), not a sample. A key the schema and the model disagree on fails here.

The first property, run against the code before issue 27's gaps rewrite, fails on its
first example (``gaps.thresholds.ddm`` dropped: the gaps stage exits 3, KeyError).
Figures are written as empty files here (matplotlib's rendering is most of the stages'
time and reads no setting), so the four stages take under a second per example.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from curation.errors import ConfigError
from curation.params_model import ParamsFile, validate_params
from tests.conftest import REPO, TOY_PARAMS, copy_project

STAGE_SECTIONS = ("gaps", "subsets", "build", "plots")
"""The sections whose every stage runs here (the report side of the pipeline)."""
STAGES = (["gaps"], ["headline"], ["subsets"], ["build"])
"""The stages that read them, in pipeline order: gaps and headline read ``gaps``; subsets
``subsets``; build ``build``, ``subsets`` (the subset names) and ``plots``, like gaps."""
CROSS_FIELD = {("subsets", "reference", "kind")}
"""Keys whose valid values depend on another key (checked by a model validator)."""
SCHEMA = ParamsFile.model_json_schema()


def base_params() -> dict[str, Any]:
    """The toy project's params with the bundled report sections (sizes the toy can fill,
    a short bootstrap)."""
    params = yaml.safe_load(TOY_PARAMS)
    shipped = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    for section in STAGE_SECTIONS:
        params[section] = copy.deepcopy(shipped[section])
    params["subsets"]["sizes"] = [3, 5]
    params["gaps"]["intervals"]["replicates"] = 20
    return params


BASE = base_params()


# ---- the schema, key by key ----------------------------------------------------------------


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _alternatives(schema: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema)
    if "anyOf" in schema:
        return [a for alt in schema["anyOf"] for a in _alternatives(alt)]
    return [schema]


def _model(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The section (a model: ``properties``, no other keys) among ``schema``'s forms."""
    for alt in _alternatives(schema):
        if "properties" in alt and alt.get("additionalProperties") is False:
            return alt
    return None


def _entries(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The section every value of a ``name -> section`` mapping is (``benchmarks``)."""
    for alt in _alternatives(schema):
        extra = alt.get("additionalProperties")
        if alt.get("type") == "object" and isinstance(extra, dict) and _model(extra):
            return _model(extra)
    return None


@dataclass(frozen=True)
class Key:
    path: tuple[str, ...]
    schema: dict[str, Any]
    required: bool


def keys(model: dict[str, Any], raw: Any, path: tuple[str, ...] = ()) -> Iterator[Key]:
    """Every key of ``model`` (and of the sections below it that ``raw`` writes out)."""
    for name, prop in model["properties"].items():
        here = (*path, name)
        yield Key(here, prop, name in model.get("required", ()))
        value = raw.get(name) if isinstance(raw, dict) else None
        if not isinstance(value, dict):
            continue
        inner = _model(prop)
        if inner is not None:
            yield from keys(inner, value, here)
        entries = _entries(prop)
        if entries is not None:
            for entry, sub in value.items():
                yield from keys(entries, sub, (*here, entry))


def _get(raw: dict[str, Any], path: tuple[str, ...]) -> Any:
    for part in path:
        raw = raw[part]
    return raw


def _parent(raw: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The mapping that holds ``path``'s key (sections left out are written as ``{}``)."""
    for part in path[:-1]:
        if not isinstance(raw.get(part), dict):
            raw[part] = {}
        raw = raw[part]
    return raw


def _types(schema: dict[str, Any]) -> set[str] | None:
    """The JSON types a key takes (None: any)."""
    out: set[str] = set()
    for alt in _alternatives(schema):
        if "type" in alt:
            out |= {alt["type"]} if isinstance(alt["type"], str) else set(alt["type"])
        elif "enum" in alt or "const" in alt:
            values = alt.get("enum", [alt.get("const")])
            out |= {"string" if isinstance(v, str) else "number" for v in values}
        elif "properties" in alt:
            out.add("object")
        else:
            return None
    return out


WRONG = {"string": "x", "integer": 7, "number": 0.5, "boolean": True, "array": ["x"]}
WRONG["object"] = {"x": 1}


def wrong_values(schema: dict[str, Any]) -> list[Any]:
    """Values of a JSON type the key does not take."""
    types = _types(schema)
    if types is None:
        return []
    if "number" in types:
        types = types | {"integer"}
    return [v for t, v in WRONG.items() if t not in types]


def out_of_range(schema: dict[str, Any]) -> list[Any]:
    """Values of the right type outside the key's bounds (keys of one form only)."""
    forms = _alternatives(schema)
    if len(forms) != 1:
        return []
    s = forms[0]
    step = 1 if s.get("type") == "integer" else 0.5
    out: list[Any] = []
    if "minimum" in s:
        out.append(s["minimum"] - step)
    if "exclusiveMinimum" in s:
        out.append(s["exclusiveMinimum"])
    if "maximum" in s:
        out.append(s["maximum"] + step)
    if "exclusiveMaximum" in s:
        out.append(s["exclusiveMaximum"])
    if "enum" in s and all(isinstance(v, str) for v in s["enum"]):
        out.append("not-a-choice")
    if s.get("type") == "array" and s.get("minItems", 0) >= 1:
        out.append([])
    if s.get("type") == "string" and s.get("minLength", 0) >= 1:
        out.append("")
    if s.get("type") == "string" and "pattern" in s:
        out.append("%%")
    return out


def in_range(schema: dict[str, Any]) -> st.SearchStrategy[Any] | None:
    """Valid values of a bounded number, a choice or a flag (small: the stages run)."""
    forms = _alternatives(schema)
    if len(forms) != 1:
        return None
    s = forms[0]
    if "enum" in s:
        return st.sampled_from(s["enum"])
    if s.get("type") == "boolean":
        return st.booleans()
    if s.get("type") in ("integer", "number"):
        lo = s.get("minimum", s.get("exclusiveMinimum", 0))
        hi = s.get("maximum", s.get("exclusiveMaximum", lo + 10))
        hi = min(hi, lo + 10)  # a few bootstrap replicates, shards of a few rows
        if s["type"] == "integer":
            return st.integers(int(lo) + ("exclusiveMinimum" in s), int(hi))
        return st.floats(
            lo, hi, exclude_min="exclusiveMinimum" in s, exclude_max="exclusiveMaximum" in s
        )
    return None


def typo(name: str) -> str:
    return name + name[-1]


# ---- mutations --------------------------------------------------------------------------


def _drop(raw: dict[str, Any], key: Key, _: Any) -> None:
    _parent(raw, key.path).pop(key.path[-1], None)


def _partial(raw: dict[str, Any], key: Key, keep: Any) -> None:
    section = _get(raw, key.path)
    for name in [n for n in section if n not in keep]:
        del section[name]


def _set(raw: dict[str, Any], key: Key, value: Any) -> None:
    _parent(raw, key.path)[key.path[-1]] = value


def _misspell(raw: dict[str, Any], key: Key, _: Any) -> None:
    parent = _parent(raw, key.path)
    parent[typo(key.path[-1])] = parent.pop(key.path[-1], None) or 1


@st.composite
def accepted_mutation(draw: st.DrawFn, section: str) -> tuple[str, Key, Any]:
    """A change every stage must take: a key dropped, a nested section partly written, or
    a valid value."""
    candidates = [k for k in keys(_model(SCHEMA["properties"][section]) or {}, BASE[section])]
    candidates = [Key((section, *k.path), k.schema, k.required) for k in candidates]
    present = [k for k in candidates if _has(BASE, k.path)]
    nested = [k for k in present if _model(k.schema) and isinstance(_get(BASE, k.path), dict)]
    ranged = [k for k in candidates if k.path not in CROSS_FIELD and in_range(k.schema) is not None]
    droppable = [k for k in present if not k.required]
    pools = {"drop": droppable, "partial": nested, "value": ranged}
    kind = draw(st.sampled_from([kind for kind, pool in pools.items() if pool]))
    if kind == "drop":
        return "drop", draw(st.sampled_from(droppable)), None
    if kind == "partial":
        key = draw(st.sampled_from(nested))
        names = sorted(_get(BASE, key.path))
        return "partial", key, draw(st.sets(st.sampled_from(names), max_size=len(names) - 1))
    key = draw(st.sampled_from(ranged))
    strategy = in_range(key.schema)
    assert strategy is not None
    return "value", key, draw(strategy)


def _has(raw: dict[str, Any], path: tuple[str, ...]) -> bool:
    try:
        _get(raw, path)
    except (KeyError, TypeError):
        return False
    return True


APPLY = {"drop": _drop, "partial": _partial, "value": _set}


ALL_KEYS = list(keys(_model(SCHEMA) or SCHEMA, BASE))
REFUSED: list[tuple[str, Key, Any]] = [
    *(("typo", k, None) for k in ALL_KEYS if _has(BASE, k.path)),
    *(("type", k, v) for k in ALL_KEYS for v in wrong_values(k.schema)),
    *(("range", k, v) for k in ALL_KEYS for v in out_of_range(k.schema)),
]
"""Every change validate must refuse: a misspelt key, a wrong type, a value out of range."""


# ---- the toy project ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def project(annotated_toy: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The toy benchmark ingested, imported and fitted (a copy of the run's shared build),
    then gaps and subsets with these params; figures written empty."""
    import matplotlib.figure

    from tests.stage_cli import run_stage

    root = copy_project(annotated_toy, tmp_path_factory.mktemp("property"))
    (root / "params.yaml").write_text(yaml.safe_dump(BASE, sort_keys=False))
    fill = root / "metrics" / "fill" / "toy.json"
    fill.parent.mkdir(parents=True)
    fill.write_text(json.dumps({"methods": {}}))
    with pytest.MonkeyPatch.context() as mp, contextlib.chdir(root):
        mp.setattr(matplotlib.figure.Figure, "draw_without_rendering", lambda self: None)
        mp.setattr(
            matplotlib.figure.Figure, "savefig", lambda self, f, **_: Path(f).write_bytes(b"")
        )
        for stage in (["gaps"], ["subsets"]):
            assert run_stage(stage) == 0, stage
        yield root


# ---- the properties ---------------------------------------------------------------------


@settings(
    max_examples=10,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_what_validates_every_stage_runs_with(project: Path, data: st.DataObject) -> None:
    from curation.cli import main
    from tests.stage_cli import run_stage

    raw = copy.deepcopy(BASE)
    changed = []
    for section in STAGE_SECTIONS:
        for _ in range(data.draw(st.integers(1, 2), label=f"{section} changes")):
            kind, key, value = data.draw(accepted_mutation(section), label=section)
            if kind != "partial" or _has(raw, key.path):  # not cut by an earlier change
                APPLY[kind](raw, key, value)
                changed.append((kind, ".".join(key.path), value))
    (project / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    assert main(["validate", "--schema-only"]) == 0, changed
    for stage in STAGES:
        assert run_stage(stage) == 0, (stage, changed)


def test_validate_refuses_typos_wrong_types_and_values_out_of_range() -> None:
    """Every such change, one at a time (a finite list, cheap to validate: all of it rather
    than a sample), is one ConfigError that names the key."""
    wrong = []
    for kind, key, value in REFUSED:
        raw = copy.deepcopy(BASE)
        if kind == "typo":
            _misspell(raw, key, None)
            named = ".".join((*key.path[:-1], typo(key.path[-1])))
        else:
            _set(raw, key, value)
            named = ".".join(key.path)
        try:
            validate_params(raw)
        except ConfigError as exc:
            if not str(exc).startswith(f"params.yaml: {named}"):
                wrong.append(f"{kind} {named} = {value!r}: {exc}")
        else:
            wrong.append(f"{kind} {named} = {value!r}: accepted")
    assert wrong == [], "\n".join(wrong)


def test_the_mutations_reach_every_report_section_and_nested_key() -> None:
    """The walk is not empty: it finds the keys the old parsers got wrong."""
    paths = {k.path for k in ALL_KEYS}
    assert ("gaps", "thresholds", "max_gap") in paths
    assert ("subsets", "reference", "kind") in paths
    assert ("build", "card", "language") in paths
    assert ("benchmarks", "toy", "items", "path") in paths
    kinds = {kind for kind, _, _ in REFUSED}
    assert kinds == {"typo", "type", "range"} and len(REFUSED) > 300
