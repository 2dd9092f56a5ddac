"""Response tables: import from raw matrices, pivot to a matrix, and check before fitting."""

from curation.responses._checks import DEFAULT_WARN, CheckReport, check_matrix
from curation.responses._import import import_responses
from curation.responses._matrix import ResponseMatrix
from curation.responses._overlay import overlay, read_imports, replaces_base, write_imports
from curation.responses._report import render_check_markdown, summary_line

__all__ = [
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
