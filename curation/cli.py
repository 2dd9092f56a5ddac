"""The `curate` command: one small function per subcommand (stages from one table).

Every stage subcommand runs the same code as its DVC stage (``pipelines/<stage>.py``),
for one benchmark (``--benchmark``) or for every benchmark in params.yaml.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from curation.errors import CurationError
from curation.params import benchmark_names, load_params

StageRun = Callable[..., str]


def _stage(module: str) -> StageRun:
    import importlib

    return importlib.import_module(f"curation.stages.{module}").run


def _run_per_benchmark(args: argparse.Namespace, module: str) -> int:
    params = load_params(args.params)
    names = args.benchmark or benchmark_names(params)
    run = _stage(module)
    for name in names:
        print(run(params, name, params_file=args.params), flush=True)
    return 0


def _run_joint(args: argparse.Namespace, module: str) -> int:
    print(_stage(module)(load_params(args.params), params_file=args.params), flush=True)
    return 0


# Stage subcommands, in pipeline order: name -> (module in curation.stages, per benchmark?, help)
STAGE_COMMANDS: dict[str, tuple[str, bool, str]] = {
    "ingest": ("ingest", True, "read raw benchmark items into data/items/<b>.parquet"),
    "collect": ("collect", True, "responses from the panel if collect.enabled, else imported"),
    "check": ("check", True, "response-matrix diagnostics: informativeness, reversals"),
    "annotate": ("annotate", True, "fit IRT difficulties: data/difficulty/<b>.parquet"),
    "gaps": ("gaps", False, "DDM, coverage gaps, certificates, blind intervals, report"),
    "mirt": ("mirt", False, "multidimensional IRT over all benchmarks: dimensions, flips"),
    "fill": ("fill", True, "BenchFill: fill the largest gaps (+ baseline, oracle)"),
    "judge": ("judge", True, "LLM judge verdicts on calibrated candidates"),
    "subsets": ("subsets", True, "calibrated subsets by quantile matching: data/subsets/<b>/"),
    "build": ("build", True, "versioned HF dataset with card: dist/<b>/<version>/"),
}


def _add_stage_command(sub: Any, name: str) -> None:
    module, per_benchmark, help_text = STAGE_COMMANDS[name]
    p = sub.add_parser(name, help=help_text)
    _add_common(p, benchmarks=per_benchmark)
    runner = _run_per_benchmark if per_benchmark else _run_joint
    p.set_defaults(func=lambda args: runner(args, module))


def _cmd_responses_import(args: argparse.Namespace) -> int:
    if args.format == "lm-eval":
        return _import_lm_eval(args)
    return _run_per_benchmark(args, "responses")


def _import_lm_eval(args: argparse.Namespace) -> int:
    from curation.errors import InputError
    from curation.io.lm_eval import lm_eval_responses
    from curation.params import benchmark_spec
    from curation.stages._paths import items_path, responses_path
    from curation.stages._write import read_table, write_table

    if not args.path or not args.benchmark or len(args.benchmark) != 1:
        raise InputError("--format lm-eval needs --path and exactly one --benchmark")
    name = args.benchmark[0]
    benchmark_spec(load_params(args.params), name, params_file=args.params)
    items_file = items_path(name)
    items = read_table(items_file, produced_by=f"ingest --benchmark {name}")
    table = lm_eval_responses(
        args.path,
        benchmark=name,
        known_items=items["item"].to_list(),
        items_file=str(items_file),
        model=args.model,
        metric=args.metric,
        filter_name=args.filter,
        item_field=args.item_field,
    )
    out = responses_path(name)
    write_table(table, out, "response")
    print(f"{name}: {table.height} responses from lm-eval logs -> {out}")
    return 0


def _cmd_publish(args: argparse.Namespace) -> int:
    from curation.publish._cli import run_publish_command

    return int(run_publish_command(args) or 0)


def _cmd_progress_test(args: argparse.Namespace) -> int:
    from curation.stages.progress import run_progress_test

    print(
        run_progress_test(
            benchmark=args.benchmark,
            model_a=args.model_a,
            model_b=args.model_b,
            responses=args.responses,
            n_bins=args.bins,
            n_permutations=args.permutations,
            seed=args.seed,
            out=args.out,
        )
    )
    return 0


def _cmd_power(args: argparse.Namespace) -> int:
    from curation.stages.progress import run_power

    print(
        run_power(
            benchmark=args.benchmark,
            widths=args.width,
            repeats=args.repeats,
            n_sims=args.sims,
            alpha=args.alpha,
            seed=args.seed,
            plot=args.plot,
        )
    )
    return 0


def _cmd_summary(args: argparse.Namespace) -> int:
    from curation.summary import print_summary

    return print_summary(load_params(args.params))


def _add_common(p: argparse.ArgumentParser, *, benchmarks: bool = True) -> None:
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    if benchmarks:
        p.add_argument(
            "--benchmark",
            "-b",
            action="append",
            help="benchmark name from params.yaml (repeatable; default: all)",
        )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curate",
        description="benchcurate: measure and repair LLM benchmarks. Each stage subcommand "
        "runs the same code as its DVC stage; `dvc repro` runs them all.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    _add_stage_command(sub, "ingest")

    p = sub.add_parser("responses", help="response tables (subcommand: import)")
    rsub = p.add_subparsers(dest="responses_command", metavar="ACTION", required=True)
    q = rsub.add_parser("import", help="import response matrices into data/responses/<b>.parquet")
    _add_common(q)
    q.add_argument(
        "--format",
        choices=("params", "lm-eval"),
        default="params",
        help="params: as declared in params.yaml; lm-eval: --log_samples JSONL files",
    )
    q.add_argument("--path", help="lm-eval: samples_<task>_<date>.jsonl file, folder or glob")
    q.add_argument("--model", help="lm-eval: model name (default: from the file's folder)")
    q.add_argument("--metric", help="lm-eval: per-sample metric (default: acc / exact_match)")
    q.add_argument("--filter", help="lm-eval: filter name when the log has several")
    q.add_argument("--item-field", help="lm-eval: field of `doc` with the item id (default doc_id)")
    q.set_defaults(func=_cmd_responses_import)

    for name in ("collect", "check", "annotate", "gaps", "mirt", "fill", "judge"):
        _add_stage_command(sub, name)

    from curation.review import register as register_review

    register_review(sub)

    for name in ("subsets", "build"):
        _add_stage_command(sub, name)

    from curation.publish._cli import add_publish_arguments

    p = sub.add_parser("publish", help="upload a built version to the Hub (one commit + tag)")
    add_publish_arguments(p)
    p.set_defaults(func=_cmd_publish)

    p = sub.add_parser("progress-test", help="is checkpoint B better than A? (stratified test)")
    p.add_argument("--benchmark", "-b", required=True, help="calibrated benchmark")
    p.add_argument("--model-a", required=True, help="the old checkpoint (model name)")
    p.add_argument("--model-b", required=True, help="the new checkpoint (model name)")
    p.add_argument(
        "--responses",
        type=Path,
        default=None,
        help="long table (model, item, n_trials, n_correct) with both checkpoints; "
        "default: the benchmark's imported responses",
    )
    p.add_argument("--bins", type=int, default=5, help="difficulty strata (default 5)")
    p.add_argument("--permutations", type=int, default=9999, help="default 9999")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=None, help="also write the result as JSON")
    p.set_defaults(func=_cmd_progress_test)

    p = sub.add_parser("power", help="Theorem 2.3 power simulation on a benchmark's gaps")
    p.add_argument("--benchmark", "-b", required=True, help="calibrated benchmark")
    p.add_argument(
        "--width",
        type=float,
        action="append",
        help="progress width (repeatable; default: half and twice the Max Gap)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        nargs="+",
        default=None,
        help="re-evaluations per item (default: 1 4 16 64)",
    )
    p.add_argument("--sims", type=int, default=400, help="simulations per point (default 400)")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--plot", type=Path, default=None, help="PNG path (default plots/power/<b>.png)")
    p.set_defaults(func=_cmd_power)

    p = sub.add_parser("summary", help="print the per-benchmark figures of the last run")
    _add_common(p, benchmarks=False)
    p.set_defaults(func=_cmd_summary)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args: Any = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CurationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
