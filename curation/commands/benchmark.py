"""`curate benchmark add`: onboard a benchmark in one command.

Copies the raw files under ``data/raw/<name>/`` (git-tracked inputs), writes a validated
entry into params.yaml (appended to ``benchmarks:``, comments kept), creates the inputs
the stages need (the imports folder, the empty review export), adds the benchmark's
column to the ECDF plot that dvc.yaml's top-level ``plots:`` lists by benchmark, and
prints the next command. Everything is read and validated before anything is written.

Without ``--items`` the benchmark is matrix-only (a leaderboard export: a response
matrix, no item texts; ``items: {texts: false}``, see :mod:`curation.items`): its items
are the matrix's ids. A wide file's model column is ``--model-column``, else ``model``,
else the first column that does not hold numbers (pandas' unnamed index column), and
the report names the one taken.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from curation.benchmarks import check_benchmark_name
from curation.errors import ConfigError, CurationError, InputError
from curation.items import ANSWER_TYPES
from curation.params import load_params
from curation.params_model import validate_params

FIELD_TARGETS = ("item", "question", "answer", "choices", "answer_type")
UNKNOWN_LICENSE = "unknown"


@contextlib.contextmanager
def _naming_originals(scratch: str, copies: dict[str, Path | None]) -> Iterator[None]:
    """Errors raised while checking the scratch copies (``copies``: name in ``scratch`` ->
    the user's file) name the files the user gave, never the scratch folder. The error
    keeps its type and fields (an :class:`InputError` still names its record and field)."""
    try:
        yield
    except CurationError as exc:
        renames = {
            str(Path(scratch) / name): str(original)
            for name, original in copies.items()
            if original is not None
        }

        def fix(text: str) -> str:
            for copy, user in renames.items():
                text = text.replace(copy, user)
            return text

        if isinstance(exc, InputError):
            exc.file = fix(exc.file) if exc.file else exc.file
            exc.message = fix(exc.message)
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (fix(exc.args[0]), *exc.args[1:])
        raise


def parse_field_map(text: str | None) -> dict[str, str]:
    """``item=id,question=prompt,answer=target`` -> {target: source}."""
    if not text:
        return {}
    out: dict[str, str] = {}
    for part in text.split(","):
        target, sep, source = part.partition("=")
        target, source = target.strip(), source.strip()
        if not sep or not target or not source:
            raise ConfigError(f"--field-map: {part!r} is not TARGET=SOURCE")
        if target not in FIELD_TARGETS:
            raise ConfigError(
                f"--field-map: {target!r} is not a field; valid: {', '.join(FIELD_TARGETS)}"
            )
        out[target] = source
    return out


def _lm_eval_long(path: Path, *, name: str, known: list[str], item_field: str | None) -> str:
    from curation.responses import READERS, LogOptions

    read = READERS["lm-eval"].table(
        path,
        LogOptions(item_field=item_field),
        benchmark=name,
        known_items=known,
        items_file="--items",
    )
    return read.table.select("model", "item", "n_trials", "n_correct").write_csv()


def _insert_entry(params_text: str, name: str, entry: dict[str, Any]) -> str:
    """params.yaml with ``entry`` appended to the ``benchmarks:`` mapping."""
    block = yaml.safe_dump({name: entry}, sort_keys=False, allow_unicode=True, width=100)
    block = "".join(f"  {line}\n" for line in block.splitlines())
    lines = params_text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "benchmarks:"), None)
    if start is None:
        raise ConfigError("params.yaml: no top-level `benchmarks:` mapping to add to")
    end = len(lines)
    for i in range(start + 1, len(lines)):
        if lines[i].strip() and not lines[i].startswith((" ", "#")):
            end = i
            break
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    if lines and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    return "".join(lines[:end]) + block + "".join(lines[end:])


_ECDF_COLUMNS = re.compile(r"^(\s*plots/gaps-data/ecdf\.csv:\s*\[)([^\]\n]*)(\])", re.M)


def _with_plot_column(dvc_text: str, name: str, known: list[str]) -> str | None:
    """dvc.yaml with ``name`` added to the ECDF plot's columns, or None if that plot does
    not list benchmarks (absent, or a list without any configured benchmark)."""
    match = _ECDF_COLUMNS.search(dvc_text)
    if match is None:
        return None
    columns = [c.strip() for c in match.group(2).split(",") if c.strip()]
    if name in columns or not set(columns) & set(known):
        return None
    new = dvc_text[: match.end(2)] + f", {name}" + dvc_text[match.end(2) :]
    yaml.safe_load(new)  # still YAML (raises on a broken edit, before anything is written)
    return new


def _wide_model_column(responses: Path, declared: str | None) -> tuple[str, str]:
    """(the model column of a wide matrix, how it was chosen): ``declared`` if given (and
    present), else :func:`curation.responses.find_model_column`."""
    from curation.io.readers import detect_format, read_frame
    from curation.responses import describe_column, find_model_column

    frame = read_frame(responses, detect_format(responses))
    if declared is not None:
        if declared not in frame.columns:
            raise InputError(
                f"--model-column {declared!r} is not a column (columns start {frame.columns[:3]})",
                file=str(responses),
                record="header",
            )
        if declared == "model":  # the default name: nothing to say
            return declared, ""
        return declared, f"model column {describe_column(declared)} (--model-column)"
    found = find_model_column(frame)
    if found is None:
        raise InputError(
            "no model column: every column holds numbers; name it with --model-column",
            file=str(responses),
            record="header",
        )
    if found == "model":
        return found, ""
    how = ", the first non-item column (--model-column to choose)"
    return found, f"model column {describe_column(found)}{how}"


def add_benchmark(
    name: str,
    *,
    items: Path | None,
    responses: Path | None,
    fmt: str,
    field_map: dict[str, str],
    domain: str,
    license: str,
    source: str | None,
    answer_type: str,
    model_column: str | None,
    n_trials: int,
    item_field: str | None,
    reference: bool,
    params_file: str = "params.yaml",
) -> str:
    """Onboard benchmark ``name`` (see the module doc); returns the report to print.

    Every input is read and validated (the name, the params file with the new entry, the
    items and responses) before the first file is written, so a refused call leaves the
    project as it was. ``items`` None: a matrix-only benchmark (module doc);
    ``model_column`` None: found in the file (wide layout).
    """
    from curation.io.tables import write_table
    from curation.items import ingest_benchmark, textless_items
    from curation.paths import REVIEW_ACCEPTED_TEMPLATE, REVIEW_DECISIONS, imports_dir, raw_dir
    from curation.responses import import_responses
    from curation.schemas import empty_frame

    try:
        check_benchmark_name(name)
    except ValueError as exc:
        raise ConfigError(f"benchmark name {name!r}: {exc}") from None
    params = load_params(params_file)  # edited as text below (comments kept), checked here
    # a project without benchmarks yet (the bundled examples removed) is valid once it
    # has this one: it is checked with the new entry below
    configured = list(params.get("benchmarks") or {})
    if configured:
        validate_params(params, params_file=params_file)
    if name in configured:
        raise ConfigError(f"{params_file}: benchmark {name!r} already exists")
    for label, path in (("--items", items), ("--responses", responses)):
        if path is not None and not path.is_file():
            raise InputError(f"{label}: file does not exist", file=str(path))
    raw = raw_dir(name)
    if raw.exists() and any(p.name != "imports" for p in raw.iterdir()):
        raise InputError("already holds files; pick another name or remove it", file=str(raw))
    if responses is None:
        raise ConfigError(
            "curate benchmark add needs --responses (a wide or long matrix, or lm-eval logs) "
            "with collect.enabled false; to ask the panel instead, add the entry by hand"
        )
    textless = items is None
    if textless and fmt == "lm-eval":
        raise ConfigError(
            "--format lm-eval needs --items (the logs' documents are checked against them); "
            "for a matrix-only benchmark write the logs as one table first: `curate "
            "responses import --format lm-eval --path LOGS --out M.parquet`, then "
            "`curate benchmark add NAME --responses M.parquet --format long`"
        )
    origin = items if items is not None else responses
    entry: dict[str, Any] = {
        "domain": domain,
        "license": license,
        "source": source or f"{origin.name} (added by `curate benchmark add`)",
    }
    if not reference:
        entry["in_domain_reference"] = False
    # the copies get distinct names (items a/data.jsonl and responses b/data.jsonl must not
    # land on one file), each keeping its extension: that is how the readers pick a format
    resp_name = "responses.csv" if fmt == "lm-eval" else "responses" + "".join(responses.suffixes)
    items_name = None if items is None else "items" + "".join(items.suffixes)
    if items_name is None:  # matrix-only: the items are the matrix's ids
        entry["items"] = {"texts": False, "path": (raw / resp_name).as_posix()}
    else:
        fields = {"item": "item", "question": "question", "answer": "answer", **field_map}
        entry["items"] = {
            "path": (raw / items_name).as_posix(),
            "fields": fields,
            "answer_type": answer_type,
        }
    column_note = ""
    entry["responses"] = {
        "path": (raw / resp_name).as_posix(),
        "layout": "long" if fmt == "lm-eval" else fmt,
    }
    if fmt == "wide":
        column, column_note = _wide_model_column(responses, model_column)
        entry["responses"]["model_column"] = column
        entry["responses"]["n_trials"] = n_trials
    entry["responses"]["source"] = "imported"
    responses_text: str | None = None

    # validate everything in a scratch copy before writing anything; a message names the
    # user's own file, never the scratch copy
    with (
        tempfile.TemporaryDirectory() as scratch,
        _naming_originals(
            scratch, {**({items_name: items} if items_name else {}), resp_name: responses}
        ),
    ):
        sraw = Path(scratch)
        test_entry = yaml.safe_load(yaml.safe_dump(entry))
        if items is not None and items_name is not None:
            shutil.copyfile(items, sraw / items_name)
            test_entry["items"]["path"] = str(sraw / items_name)
        if fmt == "lm-eval":
            test_entry["responses"]["path"] = str(sraw / "responses.csv")
        else:
            shutil.copyfile(responses, sraw / resp_name)
            test_entry["responses"]["path"] = str(sraw / resp_name)
        if textless:
            test_entry["items"]["path"] = test_entry["responses"]["path"]
        trial = {**params, "benchmarks": {**(params.get("benchmarks") or {}), name: test_entry}}
        checked = validate_params(trial, params_file=params_file)
        spec = checked.benchmark(name)
        if textless:  # what the ingest stage does: the matrix's ids
            table = textless_items(name, spec, params_file=params_file)
        else:
            table = ingest_benchmark(name, spec, params_file=params_file)
        known = table.get_column("item").to_list()
        if fmt == "lm-eval":
            responses_text = _lm_eval_long(responses, name=name, known=known, item_field=item_field)
            (sraw / "responses.csv").write_text(responses_text, encoding="utf-8")
        matrix = import_responses(
            name, spec, known_items=known, items_file=str(origin), params_file=params_file
        )
    n_models = matrix.get_column("model").n_unique()

    # write: raw files, imports folder, the review export, then params.yaml
    new_text = _insert_entry(Path(params_file).read_text(encoding="utf-8"), name, entry)
    validate_params(yaml.safe_load(new_text), params_file=params_file).benchmark(name)
    dvc_yaml = Path(params_file).parent / "dvc.yaml"
    dvc_text = (
        _with_plot_column(dvc_yaml.read_text(encoding="utf-8"), name, configured)
        if dvc_yaml.is_file()
        else None
    )
    raw.mkdir(parents=True, exist_ok=True)
    if items is not None and items_name is not None:
        shutil.copyfile(items, raw / items_name)
    if fmt == "lm-eval":
        assert responses_text is not None
        (raw / "responses.csv").write_text(responses_text, encoding="utf-8")
    else:
        shutil.copyfile(responses, raw / resp_name)
    imports_dir(name).mkdir(parents=True, exist_ok=True)
    (imports_dir(name) / ".gitkeep").touch()
    review = checked.review
    accepted = Path((review.accepted or REVIEW_ACCEPTED_TEMPLATE).format(benchmark=name))
    if not accepted.is_file():
        write_table(empty_frame("accepted_item"), accepted, "accepted_item")
    decisions = Path(review.decisions or REVIEW_DECISIONS)
    if not decisions.is_file():
        decisions.parent.mkdir(parents=True, exist_ok=True)
        decisions.write_text("", encoding="utf-8")
    Path(params_file).write_text(new_text, encoding="utf-8")
    plot = ""
    if dvc_text is not None:
        dvc_yaml.write_text(dvc_text, encoding="utf-8")
        plot = f"; {dvc_yaml}: the ECDF plot gains column {name}"
    ref = (
        "it joins the domain reference of the other benchmarks"
        if reference
        else "other benchmarks' published numbers are unchanged "
        "(in_domain_reference: false; --reference to rank against it)"
    )
    if license == UNKNOWN_LICENSE:
        print(
            f"warning: {params_file}: benchmarks.{name}.license is unknown; set the source's "
            "license (an SPDX id such as MIT or CC-BY-4.0) before publishing: `curate "
            "publish` refuses an unknown license",
            file=sys.stderr,
            flush=True,
        )
    kind = " (matrix-only: no item texts; fill, judge and build skip it)" if textless else ""
    column = f"; {column_note}" if column_note else ""
    return (
        f"{name}: {table.height} items{kind}, {matrix.height} responses ({n_models} models"
        f"{column}) -> {raw}/ and {params_file}: benchmarks.{name}{plot}; {ref}\n"
        f"next: dvc repro   (then: git add {raw} {params_file} {accepted} dvc.yaml dvc.lock "
        "metrics plots)"
    )


def register(sub: Any) -> None:
    """Add ``benchmark`` and its ``add`` action to ``curate``'s subcommands."""
    p = sub.add_parser("benchmark", help="benchmarks in params.yaml (subcommand: add)")
    bsub = p.add_subparsers(dest="benchmark_command", metavar="ACTION", required=True)
    q = bsub.add_parser("add", help="onboard a benchmark: raw files, params entry, inputs")
    q.add_argument(
        "name", metavar="NAME", help="benchmark name (letters, digits, - and _; no dots)"
    )
    q.add_argument(
        "--items",
        type=Path,
        help="items file (jsonl/json/csv/parquet); without it the benchmark is matrix-only "
        "(a leaderboard: the items are the matrix's ids, no texts)",
    )
    q.add_argument(
        "--responses",
        type=Path,
        help="response matrix (--format wide or long) or lm-eval samples file (--format lm-eval)",
    )
    q.add_argument(
        "--format",
        choices=("wide", "long", "lm-eval"),
        default="wide",
        help="of --responses: wide = one row per model, one 0/1 (or rate) column per item; "
        "long = columns model, item, n_trials, n_correct; lm-eval = a --log_samples file "
        "(default: wide)",
    )
    q.add_argument(
        "--field-map",
        help="TARGET=SOURCE,... for the items (targets: " + ", ".join(FIELD_TARGETS) + ")",
    )
    q.add_argument(
        "--domain",
        default="general",
        help="domain (math, code, ...): benchmarks of one domain rank models against each "
        "other (default: general)",
    )
    q.add_argument(
        "--license",
        default=UNKNOWN_LICENSE,
        help="license of the source items, an SPDX id such as MIT or CC-BY-4.0; it goes into "
        "the dataset card, and `curate publish` refuses 'unknown' (the default; warned)",
    )
    q.add_argument(
        "--source",
        default=None,
        help="where the items come from (repository, commit, paper); default: the items "
        "file's name",
    )
    q.add_argument(
        "--answer-type",
        choices=ANSWER_TYPES,
        default="exact",
        help="how answers are graded: numeric (numbers with tolerance, fractions, \\boxed{}), "
        "exact (string match), choice (a letter), code (never run without a sandbox), "
        "free (not graded automatically) (default: exact)",
    )
    q.add_argument(
        "--model-column",
        default=None,
        help="wide: the model column (default: 'model', else the first column that does "
        "not hold numbers, e.g. pandas' unnamed index)",
    )
    q.add_argument("--n-trials", type=int, default=1, help="wide: trials behind each cell")
    q.add_argument("--item-field", help="lm-eval: field of `doc` with the item id")
    q.add_argument(
        "--reference",
        action="store_true",
        help="let the other benchmarks of the domain rank models against this one too "
        "(changes their Kendall tau)",
    )
    q.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")

    def _run(args: Any) -> int:
        print(
            add_benchmark(
                args.name,
                items=args.items,
                responses=args.responses,
                fmt=args.format,
                field_map=parse_field_map(args.field_map),
                domain=args.domain,
                license=args.license,
                source=args.source,
                answer_type=args.answer_type,
                model_column=args.model_column,
                n_trials=args.n_trials,
                item_field=args.item_field,
                reference=args.reference,
                params_file=args.params,
            )
        )
        return 0

    q.set_defaults(func=_run)


__all__ = ["add_benchmark", "parse_field_map", "register"]
