"""`curate review rebuild`: the queue database again, from decisions.jsonl and the
candidate tables (queue.sqlite is working state; the exported log is the record).

Replays the history: the original candidate tables give version 1 of each item, each
logged decision is written again with its id, time, reviewer and batch (an edit makes
its version again, exactly as it did), and when a decision names a later version the
candidate tables are seeded again for that item (the recalibrated edit). A decision
whose version or text the tables no longer hold stops the rebuild with its id.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from curation.errors import InputError
from curation.review._export import read_decisions
from curation.review._seed import read_candidates, seed_records
from curation.review._settings import ReviewSettings
from curation.review._store import ReviewStore, SeedRecord

if TYPE_CHECKING:
    from curation.benchmarks import BenchmarkSettings


@dataclass
class RebuildReport:
    db: str
    items: int
    decisions: int

    def __str__(self) -> str:
        return f"rebuilt {self.db}: {self.items} item(s), {self.decisions} decision(s) replayed"


def rebuild(
    *,
    config: ReviewSettings,
    benchmarks: Mapping[str, BenchmarkSettings],
    files: list[Path],
    force: bool = False,
) -> RebuildReport:
    """Recreate ``config.db`` (refused if it exists, unless ``force``); see module doc."""
    target = Path(config.db)
    if target.exists() and not force:
        raise InputError(
            "exists; rebuilding replaces it (pass --force, after `curate review export` "
            "if it holds decisions the log lacks)",
            file=str(target),
        )
    log = sorted(read_decisions(config.decisions), key=lambda r: r["decision_id"])
    recalibrated = {str(config.recalibrated_path(b)) for b in benchmarks}
    frames = [read_candidates(f) for f in files]
    records, _filtered = seed_records(frames, config=config, benchmarks=benchmarks)
    # seed_records keeps row order, dropping filtered rows: match records back to files
    by_file: dict[int, str] = {}
    keyed = [(f, r) for f, df in zip(files, frames, strict=True) for r in df.iter_rows(named=True)]
    j = 0
    for i, seeded in enumerate(records):
        while keyed[j][1] != seeded.record:
            j += 1
        by_file[i] = str(keyed[j][0])
        j += 1
    first = [r for i, r in enumerate(records) if by_file[i] not in recalibrated]
    per_item: dict[tuple[str, str], list[SeedRecord]] = defaultdict(list)
    for r in records:
        per_item[(r.record["benchmark"], r.record["candidate"])].append(r)

    tmp = target.with_name(target.name + ".rebuild")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    try:
        store = ReviewStore.create(tmp, required_reviews=config.required_reviews)
        store.seed(first, created_by="rebuild")
        for rec in log:
            key = (rec["benchmark"], rec["candidate"])
            if key not in per_item:
                raise InputError(
                    f"decision #{rec['decision_id']} is on {key[0]}/{key[1]}, which no candidate "
                    "table holds",
                    file=str(config.decisions),
                )
            if store.state(*key).version < rec["version"]:
                store.seed(per_item[key], created_by="rebuild")
            store.replay(rec)
        store.seed(records, created_by="rebuild")
        items = len(store.current_versions())
    except BaseException:  # no half-built queue.sqlite.rebuild left behind
        for suffix in ("", "-wal", "-shm"):
            Path(str(tmp) + suffix).unlink(missing_ok=True)
        raise
    for suffix in ("-wal", "-shm"):
        Path(str(target) + suffix).unlink(missing_ok=True)
    os.replace(tmp, target)
    for suffix in ("-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    return RebuildReport(db=str(target), items=items, decisions=len(log))
