"""The search journal: an append-only JSONL file that lets a killed run resume.

Line 1 is a header with the fingerprint of everything that determines the search
(settings, panel, calibration, benchmark tables). Then one line per finished round
(its candidate records, with lineage and cost) and one per finished insertion (the
candidate chosen). A line is written with one ``write`` and fsync'd before the
search moves on, so after a ``kill -9`` the file holds every finished round; a torn
last line (the process died inside the write) is dropped on reading.

On a rerun the search walks the same control flow and takes each finished round and
insertion from the journal instead of redoing it; the unfinished round is redone,
its LLM calls served from the completion cache. A journal whose fingerprint differs
(params or inputs changed) is discarded and the search starts afresh (its rounds cannot
serve other inputs). The file lives outside the stage's DVC outputs
(:func:`curation.paths.fill_journal_dir`): it is written while the search runs, so
inside an output a killed run would leave that output half-new, and the journal of a
run on other inputs would make it differ from a fresh clone's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from curation.io.atomic import atomic_path, writes_now

FORMAT = "benchcurate.fill.journal/1"


class Journal:
    """Read the finished work of an earlier run; append the work of this one."""

    def __init__(self, path: str | os.PathLike[str], fingerprint: str) -> None:
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.restarted = False
        """True if an earlier journal was discarded because its fingerprint differed."""
        self.resumed = False
        """True if finished work of an earlier run was found."""
        self._rounds: dict[tuple[str, int, int], dict[str, Any]] = {}
        self._insertions: dict[tuple[str, int], dict[str, Any]] = {}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lines = self._read()
        if lines and (
            lines[0].get("kind") != "header" or lines[0].get("fingerprint") != fingerprint
        ):
            self.path.unlink()
            self.restarted = True
            lines = []
        if not lines:
            self._write_all([{"kind": "header", "format": FORMAT, "fingerprint": fingerprint}])
            return
        for rec in lines[1:]:
            if rec.get("kind") == "round":
                self._rounds[rec["method"], rec["insertion"], rec["round"]] = rec
            elif rec.get("kind") == "insertion":
                self._insertions[rec["method"], rec["insertion"]] = rec
        self.resumed = bool(self._rounds or self._insertions)

    def _read(self) -> list[dict[str, Any]]:
        """Complete lines; a torn tail (no newline, or not JSON) is cut off the file."""
        if not self.path.is_file():
            return []
        data = self.path.read_bytes()
        good: list[dict[str, Any]] = []
        end = 0
        for line in data.splitlines(keepends=True):
            if not line.endswith(b"\n"):
                break
            try:
                rec = json.loads(line)
            except ValueError:
                break
            if not isinstance(rec, dict):
                break
            good.append(rec)
            end += len(line)
        if end != len(data):
            with open(self.path, "r+b") as fh:
                fh.truncate(end)
                fh.flush()
                os.fsync(fh.fileno())
        return good

    def _write_all(self, records: list[dict[str, Any]]) -> None:
        # at once (a resumed run reads it), from a scratch file outside the DVC output
        with writes_now(), atomic_path(self.path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            for rec in records:
                fh.write(_line(rec))
            fh.flush()
            os.fsync(fh.fileno())

    def _append(self, record: dict[str, Any]) -> None:
        data = _line(record).encode("utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)

    # ---- queries -------------------------------------------------------------------------

    def round(self, method: str, insertion: int, round_: int) -> dict[str, Any] | None:
        return self._rounds.get((method, insertion, round_))

    def insertion(self, method: str, insertion: int) -> dict[str, Any] | None:
        return self._insertions.get((method, insertion))

    @property
    def n_rounds(self) -> int:
        return len(self._rounds)

    # ---- writes --------------------------------------------------------------------------

    def record_round(
        self,
        method: str,
        insertion: int,
        round_: int,
        *,
        target_z: float,
        candidates: list[dict[str, Any]],
    ) -> None:
        rec = {
            "kind": "round",
            "method": method,
            "insertion": insertion,
            "round": round_,
            "target_z": target_z,
            "candidates": candidates,
        }
        self._append(rec)
        self._rounds[method, insertion, round_] = rec

    def record_insertion(
        self,
        method: str,
        insertion: int,
        *,
        target_z: float,
        selected: str | None,
        rounds: int,
        confirmed: dict[str, Any] | None = None,
    ) -> None:
        """``confirmed``: the selected candidate after its confirmation round (replayed
        as is, so a resumed run makes no call for it)."""
        rec = {
            "kind": "insertion",
            "method": method,
            "insertion": insertion,
            "target_z": target_z,
            "selected": selected,
            "rounds": rounds,
            "confirmed": confirmed,
        }
        self._append(rec)
        self._insertions[method, insertion] = rec


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n"
