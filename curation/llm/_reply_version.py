"""Which code wrote a backend's replies: the part of a cache key the request cannot give.

A real endpoint's reply depends on the request alone (model id, messages, sampling,
sample index: :meth:`ChatRequest.key`), so it is reused across code changes: a rerun
after an edit asks the servers nothing. A simulated reply is computed by this package's
code; keyed by the request alone, a rerun after a simulator change would serve the old
replies, and committed outputs would depend on what a checkout had cached before (a
fresh clone computes the new ones). So a simulated backend's replies are versioned by
the source of the code that computes them: the whole ``curation`` package (the
simulators lean on grading, calibration and prompt helpers, so a narrower set would
miss changes) plus the backend's own class when it lives elsewhere (a test's
subclass). Simulated replies are instant, so a code change costing every cached one is
free; a per-simulator version number would be cheaper to compare but easy to forget.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
"""The ``curation`` package folder (a checkout's or an installed wheel's)."""
SIMULATED = "simulated"
"""``Backend.name`` of every simulation (panel, world, rewriter, judge)."""


@functools.cache
def source_digest(root: Path) -> str:
    """sha256 over every ``*.py`` under ``root`` (relative path and bytes, sorted).

    Memoised per process: the source does not change under a running stage."""
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def _outside_sources(cls: type, root: Path) -> list[Path]:
    """Source files of ``cls`` and its bases that are not under ``root``."""
    out: list[Path] = []
    for klass in cls.__mro__:
        try:
            file = inspect.getsourcefile(klass)
        except TypeError:  # builtins (object, Protocol machinery)
            continue
        if file is None:
            continue
        path = Path(file).resolve()
        if not path.is_relative_to(root) and path not in out:
            out.append(path)
    return out


def reply_version(backend: object, *, root: Path = PACKAGE_ROOT) -> str:
    """``""`` for a real endpoint; for a simulated backend, a digest of the code that
    computes its replies (see the module doc)."""
    if getattr(backend, "name", None) != SIMULATED:
        return ""
    h = hashlib.sha256(source_digest(root).encode())
    for path in _outside_sources(type(backend), root):
        h.update(path.read_bytes())
    return "code:" + h.hexdigest()[:16]


def stored_key(key: str, version: str = "") -> str:
    """The cache row of request ``key`` answered by code ``version``: the request key
    itself for a real endpoint (``""``: caches written before versions existed still
    hit), else a hash of both. The request key recorded in outputs stays the request's."""
    if not version:
        return key
    return hashlib.sha256(f"{key}\x1f{version}".encode()).hexdigest()
