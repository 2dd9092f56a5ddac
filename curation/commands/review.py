"""`curate review seed | serve | export | recalibrate | rebuild | add-reviewer |
remove-reviewer | undo | stats`.

Thin wrappers over :mod:`curation.review`: each reads ``--params`` (else params.yaml if
present) and the review section, then calls one library function and prints its report.
The library (polars, FastAPI, uvicorn) is imported inside each command, so registering
these actions costs nothing for the other commands.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curation.commands._common import require_project
from curation.review import TOKEN_ENV

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings
    from curation.params_model import ParamsFile
    from curation.review import ReviewSettings


def _context(args: argparse.Namespace) -> tuple[ParamsFile | None, ReviewSettings]:
    """The validated params (``--params``, else params.yaml if present, else none) and
    their review section (the defaults without a params file; ``--db`` replaces ``db``)."""
    from curation.params_model import read_params
    from curation.review import ReviewSettings

    params = None
    if args.params is not None:
        params = read_params(require_project(args.params))
    elif Path("params.yaml").is_file():
        params = read_params("params.yaml")
    elif getattr(args, "db", None) is None:  # neither a project nor a queue named
        require_project()
    config = params.review if params is not None else ReviewSettings()
    if getattr(args, "db", None) is not None:
        config = config.model_copy(update={"db": Path(args.db)})
    return params, config


def _benchmarks(params: ParamsFile | None) -> Mapping[str, BenchmarkSettings]:
    """params' benchmark entries (none without a params file)."""
    return params.benchmarks if params is not None else {}


def _candidate_files(patterns: Sequence[Path], names: Iterable[str]) -> list[Path]:
    """Expand ``{benchmark}`` in the configured candidate paths over params' benchmarks.

    A benchmark whose file does not exist yet (gap filling not run for it) is skipped; if
    no file exists at all, the error says which stage makes them.
    """
    names = list(names)
    files: list[Path] = []
    for pattern in patterns:
        text = str(pattern)
        if "{benchmark}" in text:
            files += [Path(text.format(benchmark=b)) for b in names]
        else:
            files.append(pattern)
    existing = [f for f in files if f.exists()]
    if not existing:
        from curation.errors import InputError

        raise InputError(
            "no candidate file yet; run `dvc repro` (the fill and judge stages) first",
            file=", ".join(str(f) for f in files) or "review.candidates",
        )
    return existing


def cmd_seed(args: argparse.Namespace) -> int:
    """`curate review seed`: add the candidate tables (args, else review.candidates) to the
    queue, creating it if needed; seeding the same files twice adds nothing."""
    from curation.review import ReviewStore, seed

    params, config = _context(args)
    benchmarks = _benchmarks(params)
    files = [Path(f) for f in args.files] or _candidate_files(config.candidates, benchmarks)
    store = ReviewStore.create(config.db, required_reviews=config.required_reviews)
    print(seed(store, files, config=config, benchmarks=benchmarks), flush=True)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """`curate review serve`: the review web page; check_bind refuses a non-local address
    without a token or accounts before anything listens."""
    from curation.review import ReviewStore, check_bind, load_accounts, serve

    _params, config = _context(args)
    token = args.token if args.token is not None else os.environ.get(TOKEN_ENV) or None
    host = args.host or config.host
    port = config.port if args.port is None else args.port
    store = ReviewStore.open(config.db, required_reviews=config.required_reviews)
    accounts = load_accounts(config.users)
    check_bind(host, token, accounts=bool(accounts))
    serve(
        store,
        host=host,
        port=port,
        token=token,
        default_reviewer=args.reviewer,
        accounts=accounts,
        guidelines=config.guidelines_file,
    )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    """`curate review export`: write the decision log and reviewed items the build reads (an
    empty queue is created first, so a never-reviewed project still exports)."""
    from curation.review import ReviewStore, export

    params, config = _context(args)
    if not config.db.is_file() and not config.decisions.is_file():
        print(f"no review queue yet: creating an empty one at {config.db}", flush=True)
        store = ReviewStore.create(config.db, required_reviews=config.required_reviews)
    else:
        store = ReviewStore.open(config.db, required_reviews=config.required_reviews)
    print(
        export(store, config=config, benchmarks=_benchmarks(params), force=args.force),
        flush=True,
    )
    return 0


def cmd_recalibrate(args: argparse.Namespace) -> int:
    """`curate review recalibrate`: measure exported edited items again; it needs a params
    file (panel, calibrate and judge settings), so one is required here."""
    import sys

    from curation.params_model import read_params
    from curation.review import recalibrate

    params, config = _context(args)
    where = args.params if args.params is not None else "params.yaml"
    if params is None:  # recalibration needs the panel, BenchFill's and the judge's settings
        params = read_params(where)  # the error names the missing file

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    report = recalibrate(
        config=config,
        params=params,
        params_file=where,
        benchmarks=args.benchmark,
        force=args.force,
        log=log,
    )
    print(report, flush=True)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """`curate review stats`: queue by status, throughput and agreement, as text or JSON."""
    from curation.review import ReviewStore, format_stats, queue_stats

    _params, config = _context(args)
    stats = queue_stats(ReviewStore.open(config.db, required_reviews=config.required_reviews))
    if args.json:
        print(json.dumps(stats.to_dict(), indent=2, sort_keys=True))
    else:
        print(format_stats(stats))
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    """`curate review rebuild`: recreate the queue database from decisions.jsonl and the
    candidate tables (after a lost or damaged database)."""
    from curation.review import rebuild

    params, config = _context(args)
    benchmarks = _benchmarks(params)
    files = [Path(f) for f in args.files] or _candidate_files(config.candidates, benchmarks)
    print(rebuild(config=config, benchmarks=benchmarks, files=files, force=args.force), flush=True)
    return 0


def cmd_add_reviewer(args: argparse.Namespace) -> int:
    """`curate review add-reviewer`: add an account to the users file and print its token
    once (only its sha256 is stored)."""
    from curation.errors import ConfigError
    from curation.review import add_account

    _params, config = _context(args)
    users = Path(args.users) if args.users else config.users
    if users is None:
        raise ConfigError("no users file: set review.users in params.yaml or pass --users")
    token = add_account(users, args.name, role=args.role, rotate=args.rotate)
    what = "has a new token (the old one no longer works)" if args.rotate else "added"
    print(
        f"{args.name} {what} in {users}; their token (shown once, only its sha256 is "
        f"stored; a running server takes it at once):\n{token}",
        flush=True,
    )
    return 0


def cmd_remove_reviewer(args: argparse.Namespace) -> int:
    """`curate review remove-reviewer`: delete an account; its token stops working at once,
    a running server included (its decisions stay in the log)."""
    from curation.errors import ConfigError
    from curation.review import remove_account

    _params, config = _context(args)
    users = Path(args.users) if args.users else config.users
    if users is None:
        raise ConfigError("no users file: set review.users in params.yaml or pass --users")
    gone = remove_account(users, args.name)
    print(f"{gone.name} ({gone.role}) removed from {users}; their token no longer works")
    return 0


def cmd_undo(args: argparse.Namespace) -> int:
    """`curate review undo`: undo one bulk batch by new superseding decisions (the log is
    append-only)."""
    from curation.review import ReviewStore, load_accounts

    _params, config = _context(args)
    store = ReviewStore.open(config.db, required_reviews=config.required_reviews)
    role = load_accounts(config.users).role_of(args.reviewer)  # the users file says who may
    print(store.undo_batch(args.batch, reviewer=args.reviewer, role=role), flush=True)
    return 0


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--params", default=None, help="params file (default: params.yaml if present)")
    p.add_argument("--db", default=None, help="queue database (default: review.db in params)")


def register(sub: Any) -> None:
    """Add ``review`` and its actions to ``curate``'s subcommands."""
    p = sub.add_parser(
        "review",
        help="human review queue: seed, serve (web page), export, recalibrate, stats",
    )
    sub = p.add_subparsers(dest="review_command", metavar="ACTION", required=True)

    q = sub.add_parser(
        "seed",
        help="add candidates (and new versions) to the queue; never drops a decision",
    )
    q.add_argument(
        "files", nargs="*", help="candidate tables (default: review.candidates in params)"
    )
    _common(q)
    q.set_defaults(func=cmd_seed)

    q = sub.add_parser("serve", help="the review web page (127.0.0.1 unless told otherwise)")
    q.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    q.add_argument("--port", type=int, default=None, help="port (default 8765; 0 = any free)")
    q.add_argument(
        "--token",
        default=None,
        help=f"access token, required on a non-local address (or set {TOKEN_ENV})",
    )
    q.add_argument("--reviewer", default=None, help="reviewer name for new browser sessions")
    _common(q)
    q.set_defaults(func=cmd_serve)

    q = sub.add_parser(
        "export",
        help="write data/review/export/decisions.jsonl and the reviewed items for the build",
    )
    q.add_argument(
        "--force",
        action="store_true",
        help="overwrite a decision file that holds decisions this queue does not have",
    )
    _common(q)
    q.set_defaults(func=cmd_export)

    q = sub.add_parser(
        "recalibrate",
        help="measure exported edited items again (panel + judge); seed then returns them",
    )
    q.add_argument(
        "-b",
        "--benchmark",
        action="append",
        default=None,
        help="only this benchmark (repeatable; default: every benchmark in params)",
    )
    q.add_argument(
        "--force",
        action="store_true",
        help="recalibrate every edited item, even one already done for its edit",
    )
    _common(q)
    q.set_defaults(func=cmd_recalibrate)

    q = sub.add_parser(
        "rebuild",
        help="recreate the queue database from decisions.jsonl and the candidate tables",
    )
    q.add_argument(
        "files", nargs="*", help="candidate tables (default: review.candidates in params)"
    )
    q.add_argument("--force", action="store_true", help="replace an existing queue database")
    _common(q)
    q.set_defaults(func=cmd_rebuild)

    q = sub.add_parser("add-reviewer", help="add a reviewer account and print its token once")
    q.add_argument("name", help="the reviewer's name, as decisions record it")
    q.add_argument(
        "--role",
        choices=("reviewer", "adjudicator"),
        default=None,
        help="an adjudicator's decision resolves a conflict between reviewers (default: "
        "reviewer; with --rotate: the account's own)",
    )
    q.add_argument(
        "--rotate",
        action="store_true",
        help="give an existing account a new token; the old one stops working at once",
    )
    q.add_argument("--users", default=None, help="users file (default: review.users in params)")
    _common(q)
    q.set_defaults(func=cmd_add_reviewer)

    q = sub.add_parser("remove-reviewer", help="remove an account: its token stops working at once")
    q.add_argument("name", help="the reviewer whose account goes")
    q.add_argument("--users", default=None, help="users file (default: review.users in params)")
    _common(q)
    q.set_defaults(func=cmd_remove_reviewer)

    q = sub.add_parser("undo", help="undo a bulk batch (new superseding decisions, no deletes)")
    q.add_argument("batch", help="the batch id that Accept all… / Reject all… printed")
    q.add_argument("--reviewer", required=True, help="who undoes it")
    _common(q)
    q.set_defaults(func=cmd_undo)

    q = sub.add_parser(
        "stats", help="queue by status, throughput, agreement (kappa, alpha) per reviewer pair"
    )
    q.add_argument("--json", action="store_true", help="print JSON")
    _common(q)
    q.set_defaults(func=cmd_stats)
