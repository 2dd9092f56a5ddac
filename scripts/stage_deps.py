"""Keep dvc.yaml's code deps and params in form (run after adding a stage or a setting).

    python scripts/stage_deps.py          # list what is out of form; exit 1 if any
    python scripts/stage_deps.py --write  # rewrite dvc.yaml's code deps and params lists

Each stage's code is ``pipelines/<stage>.py`` plus every ``curation`` module it can
import (:mod:`curation.stage_code`); the ``code`` stage hashes those files into
``code-hashes/<stage>.txt``, and each stage lists that one file as its code dep.
``--write`` replaces, in each stage's ``deps``, the lines naming ``pipelines/``,
``curation/``, ``schemas`` or ``code-hashes/`` with ``code-hashes/<stage>.txt`` (data
deps and comments are kept; the ``code`` stage's own deps are left alone).

Params: a section with a transport key (:data:`curation.settings.Transport`: a timeout,
retries, concurrency, a progress bar: how calls are made, never what they answer) is
listed key by key, every key but the transport ones (:func:`section_params`), so that
changing ``llm.timeout_s`` reruns nothing while changing ``llm.send_seed`` reruns every
stage that calls a model. The other sections are listed whole. ``--write`` replaces a
whole-section line, or an incomplete key list, with the section's keys; a stage that
reads only some keys of such a section on purpose says so in :data:`PARTIAL`. DVC fails
a stage whose listed key is missing from params.yaml ("Parameters ... are missing"), so
every listed key must be spelt there (null for "the default" counts): the check reads
the bundled params.yaml too.
``tests/pipelines/test_stage_deps.py`` fails when dvc.yaml is out of this form.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any, get_args

import yaml
from pydantic import BaseModel

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from curation.params_model import ParamsFile  # noqa: E402
from curation.settings import transport_fields  # noqa: E402
from curation.stage_code import hashes_path  # noqa: E402

CODE_STAGE = "code"

PARTIAL: dict[tuple[str, str], tuple[str, ...]] = {
    ("judge", "collect"): ("collect.backend",),  # the judge follows the one offline switch
}
"""(stage, section) -> the keys of a split section a stage reads on purpose (not all)."""


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The model a section's annotation holds (``PanelSettings | None`` -> PanelSettings)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for a in get_args(annotation) if (m := _model_of(a)) is not None), None)


def section_params(section: str) -> list[str]:
    """What a stage that reads the whole params ``section`` lists under ``params:``.

    The section itself when none of its own fields is transport, else
    ``<section>.<field>`` for each of its other fields, in declaration order. Entries
    below (``fill.rewriter``, ``judge.model``, ``panel.models``) are listed whole: a
    file writes them in part (role defaults fill in the rest), and a listed key that is
    missing from params.yaml fails the stage, so their own transport key (a model's
    ``concurrency``) still reruns it.
    """
    model = _model_of(ParamsFile.model_fields[section].annotation)
    transport = transport_fields(model) if model is not None else ()
    if model is None or not transport:
        return [section]
    return [f"{section}.{name}" for name in model.model_fields if name not in transport]


def split_sections() -> dict[str, list[str]]:
    """Every section listed key by key (it has a transport field) -> its keys."""
    return {
        name: keys for name in ParamsFile.model_fields if (keys := section_params(name)) != [name]
    }


def _transport_keys() -> set[str]:
    """Every transport key a stage could list, nested ones too (``fill.rewriter.concurrency``)."""
    found: set[str] = set()

    def walk(model: type[BaseModel], prefix: str) -> None:
        marked = transport_fields(model)
        for name, field in model.model_fields.items():
            key = f"{prefix}.{name}" if prefix else name
            if name in marked:
                found.add(key)
            inner = _model_of(field.annotation)
            if inner is not None:
                walk(inner, key)

    walk(ParamsFile, "")
    return found


def load_spec() -> dict[str, Any]:
    """The committed dvc.yaml, parsed."""
    spec: dict[str, Any] = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))
    return spec


def stage_params(spec: dict[str, Any] | None = None) -> dict[str, list[str]]:
    """Stage name -> the params keys dvc.yaml lists (``${key}`` not yet resolved)."""
    spec = load_spec() if spec is None else spec
    return {
        name: [str(p) for p in stage.get("do", stage).get("params", [])]
        for name, stage in spec["stages"].items()
    }


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


def problems(spec: dict[str, Any] | None = None, params: dict[str, Any] | None = None) -> list[str]:
    """Every way dvc.yaml departs from its form (code deps, params lists) or names a key
    ``params`` (default: the bundled params.yaml) does not spell, one line each."""
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
    found += params_problems(spec)
    if params is None:
        params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    found += missing_params(spec, params)
    return found


def params_problems(spec: dict[str, Any]) -> list[str]:
    """A section with a transport key listed whole, a transport key listed, or a split
    section listed in part (outside :data:`PARTIAL`): one line each."""
    found = []
    split = split_sections()
    transport = _transport_keys()
    for name, keys in stage_params(spec).items():
        for key in keys:
            if key in split:
                found.append(f"{name}: params lists {key!r} whole; it has transport keys")
            if key in transport:
                found.append(f"{name}: params lists the transport key {key!r}")
        for section, want in split.items():
            have = [k for k in keys if k.startswith(f"{section}.")]
            if not have or section in keys:  # not read, or listed whole (reported above)
                continue
            expected = list(PARTIAL.get((name, section), want))
            if have != expected:
                found.append(f"{name}: params of {section!r} are {have}, want {expected}")
    return found


def _lookup(params: Any, key: str) -> bool:
    """Whether the dotted ``key`` is spelt in the params mapping (a null value is)."""
    node = params
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def missing_params(spec: dict[str, Any], params: dict[str, Any]) -> list[str]:
    """Keys dvc.yaml lists that ``params`` does not spell (DVC would fail the stage):
    ``${key}`` of a ``foreach`` stage resolved for every benchmark."""
    found = []
    for name, keys in stage_params(spec).items():
        per_benchmark = "foreach" in spec["stages"][name]
        names = list(params.get("benchmarks") or {}) if per_benchmark else [""]
        for key in keys:
            lacking = [b for b in names if not _lookup(params, key.replace("${key}", b))]
            if lacking:
                at = f"{name}@{{{','.join(lacking)}}}" if per_benchmark else name
                found.append(f"{at}: params.yaml does not spell {key!r} (DVC fails the stage)")
    return found


_CODE_DEP = re.compile(r"^(pipelines/|curation/|curation$|schemas|code-hashes/)")
_CODE_LINE = re.compile(r"^(\s*)- (pipelines/|curation/|schemas|code-hashes/)\S*\s*(#.*)?$")


def rewrite(text: str) -> str:
    """dvc.yaml with every stage's code deps in the fingerprint form and every split
    section's params key by key (other lines untouched)."""
    stages = stage_deps()
    split = split_sections()
    out: list[str] = []
    stage: str | None = None
    block: str | None = None  # "deps" or "params"
    written: set[str] = set()
    for line in text.splitlines(keepends=True):
        top = re.match(r"^  (\w[\w-]*):\s*$", line)
        if top:
            stage, block = top.group(1), None
        opened = re.match(r"^\s+(deps|params):\s*$", line)
        if opened:
            block, written = opened.group(1), set()
            out.append(line)
            continue
        if block and not re.match(r"^\s+(- |#)", line):
            block = None
        if block == "deps" and stage in stages and stage != CODE_STAGE:
            match = _CODE_LINE.match(line)
            if match:
                if "code" not in written:
                    out.append(f"{match.group(1)}- {hashes_path(stages[stage][0].stem)}\n")
                    written.add("code")
                continue
        if block == "params" and stage is not None:
            match = _PARAM_LINE.match(line)
            section = match.group(2).split(".")[0] if match else None
            if match and section in split and (stage, section) not in PARTIAL:
                if section not in written:
                    out += [f"{match.group(1)}- {key}\n" for key in split[section]]
                    written.add(section)
                continue
        out.append(line)
    return "".join(out)


_PARAM_LINE = re.compile(r"^(\s*)- ([\w.${}-]+)\s*$")


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
