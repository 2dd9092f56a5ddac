"""`curate estimate`: a new model's full-benchmark score from its responses on any items.

The responses are read by the same readers as `curate responses import` (its ``--format``
choices, :data:`curation.responses.READERS`) or from a long/wide table; the benchmark's
stored calibration (data/calibration/<b>.json, data/difficulty/<b>.parquet) is used as is.
The estimation is :func:`curation.estimate.estimate_table`. ``--subset`` (a config name
such as ``estimate-100`` or ``calibrated-uniform-100``, or a table with item and weight
columns: :func:`curation.estimate.load_subset`) keeps the answers on the subset's items
only, as if the model had run on the subset, and gives ``--estimator weighted`` the
subset's weights. An adaptive test (``--subset adaptive-<m>``) keeps every answer (its
items are chosen per model) and ``--next`` names the items each model should answer next
(:func:`curation.estimate.next_items`), until the test's m items are answered. A
subset's conformal ``interval_scale`` (its held-out validation) widens the interval.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.commands._common import add_common, add_log_flags, log_options, read_task_logs
from curation.responses import DEFAULT_FORMAT, READERS

if TYPE_CHECKING:
    import polars as pl

    from curation.benchmarks import BenchmarkSettings
    from curation.estimate import SubsetItems

TABLE_FORMATS = ("long", "wide")
"""Response tables (model, item, n_trials, n_correct / one column per item), read as a
benchmark's bundled matrix is."""


def _table(
    args: argparse.Namespace, name: str, spec: BenchmarkSettings, known: list[str], items: str
) -> tuple[pl.DataFrame, str]:
    """A long/wide table as the benchmark's response table."""
    from curation.errors import InputError
    from curation.responses import ResponsesSettings, import_responses

    unused = [f for f, v in log_options(args).given().items() if v is not None]
    if args.threshold is not None or unused:
        raise InputError(
            f"{', '.join(unused or ['--threshold'])} does not apply to --format {args.format} "
            "(a table holds n_trials and n_correct)"
        )
    path = Path(args.path)
    if not path.is_file():
        raise InputError("no such file", file=str(path))
    rs = ResponsesSettings(path=path, layout=args.format, source="imported")
    notes: list[str] = []
    table = import_responses(
        name,
        spec.model_copy(update={"responses": rs}),
        known_items=known,
        items_file=items,
        params_file=args.params,
        notes=notes,
    )
    if args.model is not None:
        import polars as pl

        if table["model"].n_unique() > 1:
            raise InputError(
                f"--model names one model, the table has {table['model'].n_unique()}",
                file=str(path),
                field="model",
            )
        table = table.with_columns(pl.lit(args.model).alias("model"))
    summary = f"{table.height} responses ({table['model'].n_unique()} model(s)) from {path}"
    return table, "; ".join([summary, *notes])


def _on_subset(
    table: pl.DataFrame, summary: str, subset: SubsetItems
) -> tuple[pl.DataFrame, str, dict[str, float] | None]:
    """The answers on the subset's items only, the summary saying so, its weights."""
    import polars as pl

    from curation.errors import InputError

    if subset.adaptive:
        answered = table["item"].n_unique()
        note = f"adaptive test {subset.name} ({answered} of {subset.budget} items answered)"
        return table, f"{summary}; {note}", None
    inside = table.filter(pl.col("item").cast(pl.String).is_in(list(subset.items)))
    if inside.height == 0:
        raise InputError(
            f"none of the answers is on an item of subset {subset.name!r} "
            f"({len(subset.items)} items)",
            file=subset.source,
            field="item",
        )
    dropped = table["item"].n_unique() - inside["item"].n_unique()
    note = f"subset {subset.name} ({len(subset.items)} items, {subset.source})"
    if dropped:
        note += f": {dropped} answered item(s) outside it left out"
    return inside, f"{summary}; {note}", subset.weight_map()


def _with_next(
    report: Any, table: pl.DataFrame, subset: SubsetItems | None, k: int, default_block: int
) -> Any:
    """The report with each model's next items: ``k`` of them (0: the adaptive test's
    step, else ``default_block``), never past the adaptive test's budget."""
    from dataclasses import replace

    import polars as pl

    from curation.errors import InputError
    from curation.estimate import next_items, observed_of

    if k < 0:
        raise InputError(f"--next takes a number of items >= 0, got {k}")
    step = k or (subset.block if subset is not None and subset.block else default_block)
    bank = report.bank
    out: dict[str, tuple[str, ...]] = {}
    kept = table.filter(pl.col("item").cast(pl.String).is_in(list(bank.items)))
    for e in report.estimates:
        part = kept.filter(pl.col("model").cast(pl.String) == e.model)
        obs = observed_of(bank, part)
        want = step
        if subset is not None and subset.budget is not None:
            want = min(step, max(subset.budget - int(obs.idx.size), 0))
        picked = next_items(bank, obs, want).tolist() if want > 0 else []
        out[str(e.model)] = tuple(bank.items[int(i)] for i in picked)
    note = (
        f"adaptive test {subset.name}: {subset.budget} items in all, {step} per step"
        if subset is not None and subset.budget is not None
        else f"next {step} items: where each model's estimate gains most (adaptive testing)"
    )
    return replace(report, next_items=out, next_note=note)


def run(args: argparse.Namespace) -> int:
    """Read the responses, estimate every model in them, print (and ``--out``) the table."""
    from curation.errors import InputError
    from curation.estimate import (
        EstimationSettings,
        ItemBank,
        estimate_table,
        load_subset,
        write_report,
    )
    from curation.io.tables import read_table
    from curation.params_model import read_params
    from curation.paths import items_path
    from curation.settings import parse_section

    if not args.benchmark or len(args.benchmark) != 1:
        raise InputError("curate estimate needs exactly one --benchmark")
    name = args.benchmark[0]
    spec = read_params(args.params).benchmark(name, params_file=args.params)
    bank = ItemBank.load(name, calibration=args.calibration, difficulty=args.difficulty)
    items_file = items_path(name)
    if items_file.is_file():
        known = read_table(items_file, produced_by=f"ingest@{name}")["item"].to_list()
    else:  # the calibration's items are the benchmark's as far as it knows
        known, items_file = list(bank.items), Path(bank.source)
    if args.format in TABLE_FORMATS:
        table, summary = _table(args, name, spec, known, str(items_file))
    else:
        read = read_task_logs(
            args,
            name,
            spec.lm_eval_tasks or [name],
            known_items=known,
            items_file=str(items_file),
        )
        table, summary = read.table, read.summary
    weights = None
    subset = load_subset(name, args.subset) if args.subset is not None else None
    if subset is not None:
        table, summary, weights = _on_subset(table, summary, subset)
    elif args.estimator == "weighted":
        raise InputError("--estimator weighted needs --subset (the subset's weights)")
    overrides = {
        k: getattr(args, k) for k in ("level", "draws", "seed") if getattr(args, k) is not None
    }
    settings = parse_section(EstimationSettings, overrides, where="curate estimate flags")
    report = estimate_table(
        bank,
        table,
        source=str(args.path),
        input_format=args.format,
        summary=summary,
        estimator=args.estimator,
        settings=settings,
        weights=weights,
        interval_scale=(subset.interval_scale or 1.0) if subset is not None else 1.0,
    )
    if args.next is not None:
        report = _with_next(report, table, subset, args.next, settings.adaptive_block)
    print(report.render())
    if args.out is not None:
        print(f"-> {write_report(report, args.out)}")
    return 0


def register(sub: Any) -> None:
    """Add ``estimate`` to ``curate``'s subcommands."""
    p = sub.add_parser(
        "estimate",
        help="a new model's full-benchmark score (90%% interval, theta, z, rank) from any items",
    )
    add_common(p)
    p.add_argument(
        "--path", required=True, help="a log file, a folder (searched recursively) or a glob"
    )
    p.add_argument(
        "--format",
        choices=(*READERS, *TABLE_FORMATS),
        default=DEFAULT_FORMAT,
        help="; ".join(f"{r.name}: {r.description}" for r in READERS.values())
        + "; long: a table model,item,n_trials,n_correct (.csv/.parquet/.jsonl); wide: a "
        "model column and one 0/1 column per item",
    )
    add_log_flags(p)
    p.add_argument(
        "--accept-task",
        action="store_true",
        help="estimate although the log's task name is not the benchmark's (a renamed task)",
    )
    p.add_argument(
        "--estimator",
        choices=("irt", "raw", "weighted"),
        default="irt",
        help="irt (default): observed successes + the IRT prediction of the unseen items; "
        "raw: the plain accuracy on the answered items (not the full score unless they are "
        "a random sample); weighted: the accuracy weighted by --subset's weights",
    )
    p.add_argument(
        "--subset",
        default=None,
        help="estimate from the answers on this subset's items only: a config "
        "(estimate-<m>, calibrated-<target>-<m>; data/subsets/<b>/) or a table with an item "
        "column (and weight, e.g. a published estimate-<m> shard)",
    )
    p.add_argument(
        "--next",
        type=int,
        nargs="?",
        const=0,
        default=None,
        metavar="K",
        help="also name the K items each model should answer next (adaptive testing; "
        "default K: the adaptive test's step, 10): run them, add the answers, repeat "
        "until --subset adaptive-<m>'s m items are answered",
    )
    p.add_argument("--level", type=float, default=None, help="interval level (default 0.9)")
    p.add_argument("--draws", type=int, default=None, help="Monte Carlo draws (default 2000)")
    p.add_argument("--seed", type=int, default=None, help="seed of the draws (default 0)")
    p.add_argument(
        "--calibration",
        type=Path,
        default=None,
        help="calibration file (default data/calibration/<b>.json)",
    )
    p.add_argument(
        "--difficulty",
        type=Path,
        default=None,
        help="difficulty table with item, b (and a) (default data/difficulty/<b>.parquet)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="also write the estimates as JSON (schemas/estimate.schema.json), e.g. a DVC "
        "output estimate.json",
    )
    p.set_defaults(func=run)
