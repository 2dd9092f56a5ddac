"""`curate validate` and `curate schema`: params.yaml against its JSON Schema, and its files.

``curate validate`` is what a user runs after editing params.yaml, before ``dvc repro``:

1. the whole file against ``schemas/params.schema.json`` (the model it is generated
   from, :class:`curation.params_model.ParamsFile`), one message by key path with the
   closest valid key for a typo;
2. every file it names exists and parses: each benchmark's raw items are ingested and
   its response matrix imported, in memory (nothing is written), so a bad row is found
   here rather than half-way through the pipeline.

``curate schema --write`` regenerates ``schemas/params.schema.json`` after a section
gains a key; ``curate schema --check`` (and a test) fails when the committed copy is stale.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from curation.errors import ConfigError
from curation.params import require_file
from curation.params_model import (
    ParamsFile,
    panel_model_json_schema,
    params_json_schema,
    read_params,
)

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"
"""The committed schemas (repository layout: schemas/ beside curation/)."""
SCHEMA_FILE = SCHEMA_DIR / "params.schema.json"
GENERATED: dict[Path, Callable[[], dict[str, Any]]] = {
    SCHEMA_FILE: params_json_schema,
    SCHEMA_DIR / "panel_model.schema.json": panel_model_json_schema,
}
"""Every schema generated from a model the code uses (the rest of schemas/ is written by hand)."""


def schema_text(path: Path = SCHEMA_FILE) -> str:
    """A generated schema, as committed (indented, keys sorted, final newline)."""
    return json.dumps(GENERATED[path](), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def check_files(params: ParamsFile, *, params_file: str) -> list[str]:
    """Ingest and import every benchmark in memory; one line per benchmark checked."""
    from curation.items import ingest_benchmark, textless_items
    from curation.responses import import_responses

    lines = []
    for name, spec in params.benchmarks.items():
        if spec.items.texts:
            items = ingest_benchmark(name, spec, params_file=params_file)
            line = f"{name}: {items.height} items"
        else:  # what the ingest stage does: the ids of the response matrix
            items = textless_items(name, spec, params_file=params_file)
            line = f"{name}: {items.height} item ids (matrix-only)"
        notes: list[str] = []
        if spec.responses is not None:
            table = import_responses(
                name,
                spec,
                known_items=items["item"].to_list(),
                items_file=str(spec.items.path),
                params_file=params_file,
                notes=notes,
            )
            line += f", {table.height} responses from {table['model'].n_unique()} models"
        lines.append(line)
        lines += [f"  warning: {note}" for note in notes]
    difficulties = params.collect.simulation.difficulties
    if difficulties:
        require_file(
            Path(difficulties), params_file=params_file, key="collect.simulation.difficulties"
        )
    return lines


def run_validate(args: argparse.Namespace) -> int:
    """`curate validate`: the params file against its model, then (unless --schema-only)
    every file it names, checked the way the stages check them; writes nothing."""
    params = read_params(args.params)
    if not args.schema_only:
        params.fill.prompt_files(params_file=args.params)  # as the fill stage checks them
        for line in check_files(params, params_file=args.params):
            print(f"  {line}")
    print(f"{args.params}: OK")
    return 0


def run_schema(args: argparse.Namespace) -> int:
    """`curate schema`: print params.yaml's JSON Schema, --write every generated schema, or
    --check: fail when a committed copy differs from what its model generates."""
    if args.write:
        from curation.io.atomic import write_text

        for path in GENERATED:
            write_text(path, schema_text(path))
            print(f"wrote {path}")
    elif args.check:
        for path in GENERATED:
            current = path.read_text(encoding="utf-8") if path.is_file() else ""
            if current != schema_text(path):
                raise ConfigError(f"{path}: stale; run `curate schema --write`")
            print(f"{path}: up to date")
    else:
        print(schema_text(), end="")
    return 0


def register(sub: Any) -> None:
    """Add ``validate`` and ``schema`` to ``curate``'s subcommands."""
    p = sub.add_parser(
        "validate",
        help="check params.yaml against its schema and every file it names (writes nothing)",
    )
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    p.add_argument(
        "--schema-only", action="store_true", help="only the schema check, not the files"
    )
    p.set_defaults(func=run_validate)
    p = sub.add_parser("schema", help="print the JSON Schema of params.yaml (--write: update it)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--write", action="store_true", help="write schemas/params.schema.json (and panel_model)"
    )
    mode.add_argument("--check", action="store_true", help="fail if the committed copy is stale")
    p.set_defaults(func=run_schema)
