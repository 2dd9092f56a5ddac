"""Atomic file writes: write to a scratch file, then rename it over the target.

A stage that fails half-way must leave the previous outputs exactly as they were, so
nothing is ever written in place. Inside :func:`all_or_nothing` (every stage runs in one,
through ``curation.stage_main``) the renames wait until the whole block has succeeded:
a stage that writes its tables and then fails on its metrics leaves all of them old.

Scratch files live in ``.curate-tmp/<pid>/`` at the project root (the working directory
every stage runs in), never beside the target: a process killed with ``kill -9`` leaves
its half-written files there, outside every declared DVC output and dependency, so
nothing half-written is ever hashed into ``dvc.lock``; :func:`clean_scratch` (run at the
start of every stage) removes what dead processes left. A target outside the working
directory, or on another file system, gets its scratch file beside it as before.

Folders: :func:`atomic_dir` stages a whole folder and swaps it in; :func:`replaces_dir`
says a block writes *every* file of a folder, so the files it did not write this time
(left by an earlier run) go when the block commits. With both, a stage's folder output
is exactly what this run wrote, as on a fresh clone, even though DVC keeps (persists) the
outputs of a stage while it runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import json
import math
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

SCRATCH_DIR = ".curate-tmp"
"""Scratch folder at the project root (git-ignored; in no DVC output or dependency)."""


@dataclass
class _Pending:
    """What an :func:`all_or_nothing` block will do when it ends without an error."""

    files: dict[Path, Path] = field(default_factory=dict)
    """target -> finished scratch file (or staged folder)."""
    owned: list[Path] = field(default_factory=list)
    """Folders the block writes whole (:func:`replaces_dir`)."""


_PENDING: ContextVar[_Pending | None] = ContextVar("pending_writes", default=None)


def _discard(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


@contextlib.contextmanager
def all_or_nothing() -> Iterator[None]:
    """Hold back every :func:`atomic_path` / :func:`atomic_dir` rename until the block ends
    without an error.

    On an error the scratch files are removed and every target keeps its old content.
    (A file written inside the block reads as its old content until the block ends.)
    """
    pending = _Pending()
    token = _PENDING.set(pending)
    try:
        yield
    except BaseException:
        for tmp in pending.files.values():
            _discard(tmp)
        raise
    finally:
        _PENDING.reset(token)
    for target, tmp in pending.files.items():
        _replace(tmp, target)
    written = set(pending.files)
    for folder in pending.owned:
        _prune(folder, written)


def _prune(folder: Path, keep: set[Path]) -> None:
    """Remove every file under ``folder`` that is not in ``keep`` (nor inside a kept
    folder), then the folders left empty."""
    if not folder.is_dir():
        return
    kept_dirs = {k for k in keep if k.is_dir()}
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path in keep or any(path.is_relative_to(d) for d in kept_dirs):
            continue
        if path.is_dir() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.rmdir()  # only when empty: a kept file may be inside
        else:
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def writes_now() -> Iterator[None]:
    """Inside an :func:`all_or_nothing` block: rename at once again."""
    token = _PENDING.set(None)
    try:
        yield
    finally:
        _PENDING.reset(token)


def replaces_dir(folder: str | os.PathLike[str]) -> None:
    """Inside an :func:`all_or_nothing` block: the block writes all of ``folder``; files
    in it that the block did not write are removed when it commits (nothing on error).
    Outside a block: nothing to do (the caller wrote the folder itself)."""
    pending = _PENDING.get()
    if pending is not None:
        pending.owned.append(Path(folder))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def scratch_root(root: str | os.PathLike[str] | None = None) -> Path:
    """``<root>/.curate-tmp`` (root: the working directory)."""
    return Path(root if root is not None else Path.cwd()) / SCRATCH_DIR


def clean_scratch(root: str | os.PathLike[str] | None = None) -> list[Path]:
    """Remove the scratch folders of processes that are gone (a kill -9 leaves them);
    returns what was removed. A running process's folder is left alone."""
    base = scratch_root(root)
    removed: list[Path] = []
    if not base.is_dir():
        return removed
    for entry in base.iterdir():
        if entry.name.isdigit() and _pid_alive(int(entry.name)):
            continue
        _discard(entry)
        removed.append(entry)
    with contextlib.suppress(OSError):
        base.rmdir()  # gone when empty: a clean tree has no scratch folder
    return removed


def drop_own_scratch(root: str | os.PathLike[str] | None = None) -> None:
    """Remove this process's scratch folder (at the end of a stage: nothing is pending)."""
    base = scratch_root(root)
    _discard(base / str(os.getpid()))
    with contextlib.suppress(OSError):
        base.rmdir()


def _scratch_for(target: Path) -> Path:
    """Where the scratch file of ``target`` goes: this process's folder under the working
    directory when ``target`` is inside it (same file system), else beside ``target``."""
    parent = target.parent
    cwd = Path.cwd()
    try:
        inside = parent.resolve().is_relative_to(cwd.resolve())
    except OSError:
        inside = False
    if inside:
        mine = scratch_root(cwd) / str(os.getpid())
        mine.mkdir(parents=True, exist_ok=True)
        if mine.stat().st_dev == parent.stat().st_dev:
            return mine
    return parent


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where the
    system cannot (other kernels, some file systems)."""
    libc_name = ctypes.util.find_library("c")
    if not libc_name:
        return False
    try:
        libc = ctypes.CDLL(libc_name, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EPERM, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _replace(tmp: Path, target: Path) -> None:
    """Move a finished scratch file or staged folder over ``target``."""
    if not tmp.is_dir() or not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, target)
        return
    if _exchange(tmp, target):  # one step: ``target`` is never missing
        _discard(tmp)
        return
    old = Path(tempfile.mkdtemp(prefix=f"{target.name}.old-", dir=tmp.parent))
    os.replace(target, old / target.name)
    os.replace(tmp, target)
    _discard(old)


def _queue(tmp: Path, target: Path) -> None:
    pending = _PENDING.get()
    if pending is None:
        _replace(tmp, target)
        return
    previous = pending.files.pop(target, None)
    if previous is not None:  # written twice in one block: the last one wins
        _discard(previous)
    pending.files[target] = tmp


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a scratch path for ``target``; rename it over ``target`` on success.

    On any exception the scratch file is removed and ``target`` is untouched.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".tmp", dir=_scratch_for(target)
    )
    os.close(fd)
    tmp = Path(tmp_name)
    os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
    try:
        yield tmp
        _queue(tmp, target)
    except BaseException:
        _discard(tmp)
        raise


@contextlib.contextmanager
def atomic_dir(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield an empty scratch folder for ``target``; it replaces ``target`` as a whole on
    success (at the end of the enclosing :func:`all_or_nothing` block, if any)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=_scratch_for(target)))
    os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes 0700; outputs get the usual mode
    try:
        yield tmp
        _queue(tmp, target)
    except BaseException:
        _discard(tmp)
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
