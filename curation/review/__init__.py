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
* :func:`load_accounts`, :func:`add_account` — reviewer accounts (hashed tokens).

The ``curate review`` subcommands are :mod:`curation.commands.review`.
"""

from typing import TYPE_CHECKING, Any

from curation.review._config import TOKEN_ENV, ReviewConfig, review_config

# Everything else loads on first use, so `curate` (whose review command imports this
# package) does not pay for polars, FastAPI and uvicorn on every command.
_LAZY = {
    "add_account": "_accounts",
    "load_accounts": "_accounts",
    "ExportReport": "_export",
    "export": "_export",
    "read_decisions": "_export",
    "write_decisions": "_export",
    "RecalibrationReport": "_recalibrate",
    "arecalibrate": "_recalibrate",
    "recalibrate": "_recalibrate",
    "rebuild": "_rebuild",
    "read_candidates": "_seed",
    "seed": "_seed",
    "ReviewServer": "_serve",
    "check_bind": "_serve",
    "is_loopback": "_serve",
    "serve": "_serve",
    "QueueStats": "_stats",
    "ReviewerStats": "_stats",
    "format_stats": "_stats",
    "queue_stats": "_stats",
    "Decision": "_store",
    "DecisionConflict": "_store",
    "ItemNotFound": "_store",
    "ItemState": "_store",
    "ItemView": "_store",
    "ReviewError": "_store",
    "ReviewStore": "_store",
    "SeedReport": "_store",
    "Version": "_store",
    "create_app": "_web",
}

if TYPE_CHECKING:
    from curation.review._accounts import add_account, load_accounts
    from curation.review._export import ExportReport, export, read_decisions, write_decisions
    from curation.review._rebuild import rebuild
    from curation.review._recalibrate import RecalibrationReport, arecalibrate, recalibrate
    from curation.review._seed import read_candidates, seed
    from curation.review._serve import ReviewServer, check_bind, is_loopback, serve
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


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'curation.review' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"curation.review.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "TOKEN_ENV",
    "Decision",
    "DecisionConflict",
    "ExportReport",
    "ItemNotFound",
    "ItemState",
    "ItemView",
    "QueueStats",
    "RecalibrationReport",
    "ReviewConfig",
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
    "queue_stats",
    "read_candidates",
    "read_decisions",
    "rebuild",
    "recalibrate",
    "review_config",
    "seed",
    "serve",
    "write_decisions",
]
