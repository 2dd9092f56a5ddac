"""Human review of gap-filling candidates (SPEC §5): a queue, a web page, decisions as data.

* :class:`ReviewStore` — the SQLite (WAL) queue: items with a status (pending,
  accepted, rejected, needs-calibration), append-only item versions and an append-only
  decision log (triggers refuse UPDATE/DELETE). :meth:`ReviewStore.decide` records one
  decision made on a stated version and raises :class:`DecisionConflict` when someone
  else decided first.
* :func:`seed` — add candidates (schema ``candidate``) and new versions; idempotent,
  never drops a decision, never undoes an edit.
* :func:`create_app`, :class:`ReviewServer`, :func:`serve`, :func:`check_bind` — the web
  page (FastAPI + Jinja2, htmx and KaTeX vendored); a non-local bind needs a token.
* :func:`export` — ``decisions.jsonl`` (schema ``decision``), the reviewed items for the
  build (``accepted_item``) and edited items back to calibration (``item``).
* :func:`recalibrate` — measure exported edited items again (BenchFill's panel and online
  calibration, the judge) into ``data/review/recalibrated/<benchmark>.parquet``
  (``candidate``), which ``seed`` reads by default: the item returns as pending.
* :func:`queue_stats`, :func:`format_stats` — queue size and reviewer throughput.
* :func:`rebuild` — the queue database again from ``decisions.jsonl`` and the candidates.
* :func:`load_accounts`, :func:`add_account`, :func:`remove_account` — reviewer accounts
  (hashed tokens; a running server follows the file).

The ``curate review`` subcommands are :mod:`curation.commands.review`.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.review._accounts import add_account, load_accounts, remove_account
    from curation.review._export import ExportReport, export, read_decisions, write_decisions
    from curation.review._rebuild import rebuild
    from curation.review._recalibrate import RecalibrationReport, arecalibrate, recalibrate
    from curation.review._seed import read_candidates, seed
    from curation.review._serve import ReviewServer, check_bind, is_loopback, serve
    from curation.review._settings import DEFAULT_GUIDELINES, TOKEN_ENV, ReviewSettings
    from curation.review._stats import QueueStats, ReviewerStats, format_stats, queue_stats
    from curation.review._store import (
        Decision,
        DecisionConflict,
        ItemNotFound,
        ItemState,
        ItemView,
        ReviewError,
        ReviewStore,
        SeedReport,
        Version,
    )
    from curation.review._web import create_app

_EXPORTS = {
    "ReviewSettings": "_settings",
    "TOKEN_ENV": "_settings",
    "DEFAULT_GUIDELINES": "_settings",
    "Decision": "_store",
    "DecisionConflict": "_store",
    "ExportReport": "_export",
    "ItemNotFound": "_store",
    "ItemState": "_store",
    "ItemView": "_store",
    "QueueStats": "_stats",
    "RecalibrationReport": "_recalibrate",
    "ReviewError": "_store",
    "ReviewServer": "_serve",
    "ReviewStore": "_store",
    "ReviewerStats": "_stats",
    "SeedReport": "_store",
    "Version": "_store",
    "add_account": "_accounts",
    "check_bind": "_serve",
    "arecalibrate": "_recalibrate",
    "create_app": "_web",
    "export": "_export",
    "format_stats": "_stats",
    "is_loopback": "_serve",
    "load_accounts": "_accounts",
    "remove_account": "_accounts",
    "queue_stats": "_stats",
    "read_candidates": "_seed",
    "read_decisions": "_export",
    "rebuild": "_rebuild",
    "recalibrate": "_recalibrate",
    "seed": "_seed",
    "serve": "_serve",
    "write_decisions": "_export",
}

__all__ = [
    "ReviewSettings",
    "TOKEN_ENV",
    "DEFAULT_GUIDELINES",
    "Decision",
    "DecisionConflict",
    "ExportReport",
    "ItemNotFound",
    "ItemState",
    "ItemView",
    "QueueStats",
    "RecalibrationReport",
    "ReviewError",
    "ReviewServer",
    "ReviewStore",
    "ReviewerStats",
    "SeedReport",
    "Version",
    "add_account",
    "check_bind",
    "arecalibrate",
    "create_app",
    "export",
    "format_stats",
    "is_loopback",
    "load_accounts",
    "remove_account",
    "queue_stats",
    "read_candidates",
    "read_decisions",
    "rebuild",
    "recalibrate",
    "seed",
    "serve",
    "write_decisions",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
