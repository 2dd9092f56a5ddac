"""Response tables: import from raw matrices, pivot to a matrix, and check before fitting."""

from typing import TYPE_CHECKING

from curation.lazy import lazy_exports

if TYPE_CHECKING:
    from curation.responses._checks import DEFAULT_WARN, CheckReport, check_matrix
    from curation.responses._import import import_responses
    from curation.responses._matrix import ResponseMatrix
    from curation.responses._overlay import overlay, read_imports, replaces_base, write_imports
    from curation.responses._report import render_check_markdown, summary_line
    from curation.responses._settings import CheckSettings, ResponsesSettings, WarnSettings

_EXPORTS = {
    "CheckSettings": "_settings",
    "ResponsesSettings": "_settings",
    "WarnSettings": "_settings",
    "DEFAULT_WARN": "_checks",
    "CheckReport": "_checks",
    "ResponseMatrix": "_matrix",
    "check_matrix": "_checks",
    "import_responses": "_import",
    "overlay": "_overlay",
    "read_imports": "_overlay",
    "replaces_base": "_overlay",
    "write_imports": "_overlay",
    "render_check_markdown": "_report",
    "summary_line": "_report",
}

__all__ = [
    "CheckSettings",
    "ResponsesSettings",
    "WarnSettings",
    "DEFAULT_WARN",
    "CheckReport",
    "ResponseMatrix",
    "check_matrix",
    "import_responses",
    "overlay",
    "read_imports",
    "replaces_base",
    "write_imports",
    "render_check_markdown",
    "summary_line",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
