"""Atomic file writes: write to a temporary file beside the target, then rename.

A stage that fails half-way must leave the previous outputs exactly as they were, so
nothing is ever written in place. Inside :func:`all_or_nothing` (every stage runs in one,
through ``curation.stage_main``) the renames wait until the whole block has succeeded:
a stage that writes its tables and then fails on its metrics leaves all of them old.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

_PENDING: ContextVar[dict[Path, Path] | None] = ContextVar("pending_writes", default=None)
"""target -> finished temporary file, while an :func:`all_or_nothing` block runs."""


@contextlib.contextmanager
def all_or_nothing() -> Iterator[None]:
    """Hold back every :func:`atomic_path` rename until the block ends without an error.

    On an error the temporary files are removed and every target keeps its old content.
    (A file written inside the block reads as its old content until the block ends.)
    """
    pending: dict[Path, Path] = {}
    token = _PENDING.set(pending)
    try:
        yield
    except BaseException:
        for tmp in pending.values():
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise
    finally:
        _PENDING.reset(token)
    for target, tmp in pending.items():
        os.replace(tmp, target)


@contextlib.contextmanager
def writes_now() -> Iterator[None]:
    """Inside an :func:`all_or_nothing` block: rename at once again (for files written into
    a staging folder that is itself moved into place, such as a dataset build)."""
    token = _PENDING.set(None)
    try:
        yield
    finally:
        _PENDING.reset(token)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` on success.

    On any exception the temporary file is removed and ``target`` is untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp
        pending = _PENDING.get()
        if pending is None:
            os.replace(tmp, target)
        else:
            previous = pending.pop(target, None)
            if previous is not None:  # written twice in one block: the last one wins
                previous.unlink(missing_ok=True)
            pending[target] = tmp
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def atomic_open(
    target: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """Open a temporary file for writing; it replaces ``target`` only if the block succeeds."""
    if "b" in mode:
        encoding = None
    with atomic_path(target) as tmp, open(tmp, mode, encoding=encoding) as fh:
        yield fh


def write_text(target: str | os.PathLike[str], text: str) -> None:
    """Atomically write ``text`` to ``target``."""
    with atomic_open(target, "w") as fh:
        fh.write(text)


def non_finite_paths(obj: Any, path: str = "") -> list[str]:
    """Key paths of the NaN/inf numbers inside ``obj`` (JSON cannot hold them)."""
    if isinstance(obj, float):
        return [] if math.isfinite(obj) else [path or "(top)"]
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in non_finite_paths(v, f"{path}.{k}".lstrip("."))]
    if isinstance(obj, list | tuple):
        return [p for i, v in enumerate(obj) for p in non_finite_paths(v, f"{path}[{i}]")]
    return []


def write_json(target: str | os.PathLike[str], obj: Any) -> None:
    """Atomically write ``obj`` as indented, key-sorted JSON (stable diffs for DVC metrics).

    NaN/inf is refused, naming the keys, before anything is written: a figure that cannot
    be computed belongs in the file as null with a reason beside it, never as NaN.
    Floats are written to the stated precision (:mod:`curation.io.precision`), so the
    bytes are the same on every machine.
    """
    from curation.io.precision import round_floats

    try:
        text = json.dumps(round_floats(obj), indent=2, sort_keys=True, allow_nan=False)
    except ValueError:
        bad = non_finite_paths(obj)
        if not bad:
            raise
        raise ValueError(f"{target}: non-finite numbers at {', '.join(bad[:5])}") from None
    write_text(target, text + "\n")
