"""The ``--help`` page of every ``curate`` command: one paragraph of what it does and why,
and a worked example.

Kept in one table (not spread over the modules that register the commands) so the pages
read alike and a test can check that no command lacks one: :func:`document` fills in
every parser of the tree and fails on a command the table does not know.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterator

HELP: dict[str, tuple[str, str]] = {
    "": (
        "benchcurate turns LLM benchmarks into well-measured datasets: IRT difficulty for "
        "every item, where the difficulty distribution is skewed or has holes, gap filling, "
        "calibrated subsets and versioned Hub datasets. The pipeline stages are DVC stages "
        "(pipelines/<stage>.py): `dvc repro` runs them all, `dvc repro -s annotate@gsm8k` "
        "one of them. `curate` holds what sits around the pipeline.",
        "curate summary                 # the figures of the last `dvc repro`\n"
        "curate review serve            # review gap-filling candidates in the browser",
    ),
    "validate": (
        "Check params.yaml before `dvc repro`: the whole file against its JSON Schema (one "
        "message by key path, with the closest valid key for a typo), then every file it "
        "names: each benchmark's items are ingested and its responses imported in memory, "
        "so a bad row shows here and not half-way through the pipeline. Writes nothing.",
        "curate validate\ncurate validate --params my-params.yaml --schema-only",
    ),
    "schema": (
        "Print the JSON Schema of params.yaml (generated from curation/params_model.py); "
        "--write updates schemas/params.schema.json after a section gains a key, --check "
        "fails when the committed copy is stale.",
        "curate schema --check\ncurate schema --write && git add schemas/params.schema.json",
    ),
    "responses": (
        "Response tables: bring evaluation results from outside the pipeline into the "
        "inputs of the responses stage.",
        "curate responses import --format lm-eval -b gsm8k --path runs/samples_gsm8k_*.jsonl",
    ),
    "responses import": (
        "Import lm-evaluation-harness --log_samples files into data/raw/<b>/imports/, an "
        "input of the responses stage: the logs' models are added to the benchmark's response "
        "matrix (replacing only their own cells unless --replace). Nothing is refitted until "
        "`dvc repro`.",
        "curate responses import -b gsm8k --path runs/llama/samples_gsm8k_2025-01-01.jsonl\n"
        "dvc repro",
    ),
    "benchmark": (
        "Benchmarks in params.yaml: onboard a new one with its raw files and params entry.",
        "curate benchmark add mybench --items items.jsonl --responses matrix.csv",
    ),
    "benchmark add": (
        "Onboard a benchmark: copy its items (and response matrix or lm-eval samples) into "
        "data/raw/<name>/, add its entry to params.yaml's benchmarks, and check both, so the "
        "next `dvc repro` fits, measures and builds it like the bundled ones.",
        "curate benchmark add mybench --items items.jsonl --responses matrix.csv \\\n"
        "    --field-map item=id,question=prompt,answer=target --domain math --license MIT",
    ),
    "estimate": (
        "A new model's full-benchmark accuracy from its responses on any of the benchmark's "
        "items (a calibrated subset, a random sample, or all of them): the stored calibration's "
        "item parameters are used as is (no refit), the ability gets a posterior from the "
        "answered items, and the estimate is the observed successes plus the IRT prediction "
        "of the unseen items, with a 90% interval (the ability's uncertainty and the unseen "
        "items' own noise), the ability theta, its place z on the benchmark's difficulty axis "
        "and the rank among the panel. A full run prints the exact score. Reads every format "
        "`curate responses import` reads, and long/wide tables.",
        "curate estimate -b gsm8k --path runs/new-model/samples_gsm8k_*.jsonl\n"
        "curate estimate -b gsm8k --format long --path subset-answers.csv --out estimate.json",
    ),
    "review": (
        "The human review queue of gap-filling candidates: seed it from the judged candidates, "
        "review in the browser, export the decisions the build reads, recalibrate edited "
        "items, and report throughput and agreement.",
        "curate review seed && curate review serve\ncurate review export && dvc repro",
    ),
    "review seed": (
        "Add judged candidates (and new versions of edited ones) to the review queue. Seeding "
        "again is safe: a decision already taken is never dropped.",
        "curate review seed                          # review.candidates from params.yaml\n"
        "curate review seed data/judged/gsm8k.parquet",
    ),
    "review serve": (
        "Serve the review web page: one candidate at a time with its parents, the judge's "
        "verdict and the target difficulty; accept, reject or edit. Listens on 127.0.0.1 "
        "unless told otherwise (a non-local address needs a token).",
        "curate review serve --reviewer alice        # then open http://127.0.0.1:8765/",
    ),
    "review export": (
        "Write the queue's decisions to data/review/export/decisions.jsonl and every reviewed item "
        "(with its status; only accepted ones are built) to "
        "data/review/export/<b>.parquet: the inputs the build stage publishes from "
        "(commit them, then `dvc repro`).",
        "curate review export && git add data/review && dvc repro",
    ),
    "review recalibrate": (
        "Measure edited items again (panel answers + judge) so their difficulty is the "
        "edited text's, not the original candidate's; `curate review seed` then returns "
        "them to the queue as new versions.",
        "curate review recalibrate -b gsm8k && curate review seed",
    ),
    "review rebuild": (
        "Recreate the queue database from decisions.jsonl and the candidate tables, e.g. in "
        "a fresh clone where only the committed decision log exists.",
        "curate review rebuild --force",
    ),
    "review add-reviewer": (
        "Add a reviewer (or adjudicator) account to the users file and print its login token "
        "once; --rotate gives an existing account a new token. A running server follows the "
        "file: the old token stops working at its next request.",
        "curate review add-reviewer bob --role adjudicator\n"
        "curate review add-reviewer bob --rotate",
    ),
    "review remove-reviewer": (
        "Remove an account from the users file; its token stops working at once, on a running "
        "server too (the decisions it made stay in the log).",
        "curate review remove-reviewer bob",
    ),
    "review undo": (
        "Undo a bulk batch of decisions by recording new decisions that supersede them "
        "(nothing is deleted: the log stays append-only). A reviewer undoes only their own "
        "batches; an adjudicator (per the users file) any.",
        "curate review undo batch-20250101-1200 --reviewer alice",
    ),
    "review stats": (
        "Report the queue: items by status and benchmark, each reviewer's decisions and pace, "
        "judge overrules, and inter-reviewer agreement (Cohen's kappa per pair, "
        "Krippendorff's alpha per group).",
        "curate review stats\ncurate review stats --json | jq .by_status",
    ),
    "publish": (
        "Upload one built version (dist/<b>/<b>-<version>/) to a Hub dataset repository as "
        "one commit tagged with the version, after checking that nothing simulated or "
        "unreviewed is in it; records the release (and repository) in releases/<b>.json, "
        "so later builds name the repository in the card. The token is read from the "
        "environment only.",
        "curate publish gsm8k --repo-id my-org/gsm8k-benchfill --version 1.0.0 --dry-run\n"
        "HF_TOKEN=hf_... curate publish gsm8k --repo-id my-org/gsm8k-benchfill --version 1.0.0",
    ),
    "release": (
        "Record a built version as released in releases/<b>.json without uploading it (a "
        "release kept elsewhere): `build.version: auto` then bumps from it in every clone.",
        "curate release gsm8k --version 1.0.0 && git add releases/gsm8k.json",
    ),
    "progress-test": (
        "Is checkpoint B better than A on this benchmark? A stratified randomisation test "
        "(strata = difficulty bins, so a gain on easy items cannot hide a loss on hard ones); "
        "prints the p-value and the effect per stratum.",
        "curate progress-test -b math-l5 --model-a gpt-4o-2024-05-13 --model-b gpt-4o-2024-08-06",
    ),
    "power": (
        "Theorem 2.3 on the benchmark's own gaps: simulate progress of a width inside and "
        "wider than the largest gap, and print the progress test's rejection rate against the "
        "number of re-evaluations per item (progress narrower than the gap stays at alpha "
        "however many repeats). Writes the power plot; takes minutes, with a progress bar.",
        "curate power -b math-l5\ncurate power -b math-l5 --width 0.05 --width 0.2 --sims 200",
    ),
    "summary": (
        "Print the per-benchmark figures of the last run (checks, IRT, gaps, gap filling) "
        "from metrics/, as `dvc repro` prints them at its end.",
        "curate summary",
    ),
}


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def walk(
    parser: argparse.ArgumentParser, path: str = ""
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """Every parser of the tree with its command path ("" for the top, "review stats")."""
    yield path, parser
    for name, sub in _subparsers(parser):
        yield from walk(sub, f"{path} {name}".strip())


def document(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give every parser of the tree its description and example from :data:`HELP`."""
    for path, p in walk(parser):
        if path not in HELP:
            raise KeyError(f"`curate {path}` has no help text in curation/commands/help.py")
        description, example = HELP[path]
        p.description = textwrap.fill(description, 88)
        p.epilog = "example:\n" + textwrap.indent(example, "  ")
        p.formatter_class = argparse.RawDescriptionHelpFormatter
    return parser
