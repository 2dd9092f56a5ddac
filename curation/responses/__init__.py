"""Response tables: import from raw matrices and evaluation logs, pivot to a matrix, and
check before fitting.

* :func:`import_responses` — a benchmark's bundled matrix (wide or long) as the table;
  :func:`overlay` / :func:`read_imports` / :func:`write_imports` — logs imported by hand
  (`curate responses import`) over it.
* :data:`READERS` — the log formats (:class:`LogReader`: lm-eval, inspect_ai, leaderboard
  details) by ``--format`` name; :func:`read_logs` (a benchmark's table),
  :func:`read_cells` and :func:`write_long` (the interchange table) go through it.
* :class:`ResponseMatrix`, :func:`check_matrix` — the matrix and its checks;
  :func:`find_model_column` — which column of a wide file names the models.

Exports resolve lazily, so `curate` reads the reader table without loading numpy.
"""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.responses._checks import CheckReport, check_matrix
    from curation.responses._import import import_responses
    from curation.responses._import_logs import (
        DEFAULT_FORMAT,
        FORMATS,
        READERS,
        ImportedLogs,
        LogOptions,
        LogReader,
        log_reader,
        read_cells,
        read_logs,
        write_long,
    )
    from curation.responses._matrix import ResponseMatrix
    from curation.responses._model_column import (
        describe_column,
        find_model_column,
        require_model_column,
    )
    from curation.responses._overlay import overlay, read_imports, replaces_base, write_imports
    from curation.responses._report import render_check_markdown, summary_line
    from curation.responses._settings import CheckSettings, ResponsesSettings, WarnSettings

_EXPORTS = {
    "CheckSettings": "_settings",
    "ResponsesSettings": "_settings",
    "WarnSettings": "_settings",
    "DEFAULT_FORMAT": "_import_logs",
    "FORMATS": "_import_logs",
    "READERS": "_import_logs",
    "CheckReport": "_checks",
    "ImportedLogs": "_import_logs",
    "LogOptions": "_import_logs",
    "LogReader": "_import_logs",
    "ResponseMatrix": "_matrix",
    "describe_column": "_model_column",
    "find_model_column": "_model_column",
    "require_model_column": "_model_column",
    "check_matrix": "_checks",
    "import_responses": "_import",
    "log_reader": "_import_logs",
    "overlay": "_overlay",
    "read_cells": "_import_logs",
    "read_imports": "_overlay",
    "read_logs": "_import_logs",
    "replaces_base": "_overlay",
    "write_imports": "_overlay",
    "write_long": "_import_logs",
    "render_check_markdown": "_report",
    "summary_line": "_report",
}

__all__ = [
    "CheckSettings",
    "ResponsesSettings",
    "WarnSettings",
    "DEFAULT_FORMAT",
    "FORMATS",
    "READERS",
    "CheckReport",
    "ImportedLogs",
    "LogOptions",
    "LogReader",
    "ResponseMatrix",
    "check_matrix",
    "describe_column",
    "find_model_column",
    "require_model_column",
    "import_responses",
    "log_reader",
    "overlay",
    "read_cells",
    "read_imports",
    "read_logs",
    "replaces_base",
    "write_imports",
    "write_long",
    "render_check_markdown",
    "summary_line",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
