"""BenchFill's memory: every item with a measured difficulty the search may build on.

Seeded with the benchmark (items + their calibrated difficulty), it grows by every
calibrated child. Parents are the entries closest to the target; the reference list
is the entries just below and just above it. Each search track (BenchFill, baseline)
has its own memory, so the baseline never profits from BenchFill's children.

What persists is the journal (:mod:`curation.fill._journal`): memory is rebuilt from
the benchmark plus the journal's calibrated candidates, so it cannot drift from them.
A snapshot is written as ``memory.parquet`` (schema ``fill_memory``) for inspection.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import polars as pl

from curation.candidates import Candidate
from curation.schemas import conform, empty_frame


@dataclass(frozen=True)
class MemoryEntry:
    """One item with its difficulty on the benchmark's calibration."""

    item: str
    question: str
    answer: str | None
    answer_type: str
    choices: tuple[str, ...] | None
    b: float
    se: float
    z: float
    z_low: float | None
    z_high: float | None
    origin: str
    """benchmark (seeded) or candidate (a calibrated child)."""
    method: str | None = None
    """Track that produced it (benchfill, baseline); None for benchmark items."""
    parent: str | None = None
    insertion: int | None = None
    round: int | None = None
    source: str = "original"
    """original (benchmark item), collected or simulated."""
    latent_b: float | None = None
    """Simulation only: the difficulty the simulated panel answers from."""
    lineage: str = "{}"

    def to_parent(self) -> dict[str, Any]:
        """The mapping handed to a judge as ``parent``."""
        return {
            "item": self.item,
            "question": self.question,
            "answer": self.answer,
            "answer_type": self.answer_type,
            "choices": list(self.choices) if self.choices is not None else None,
            "b": self.b,
            "se": self.se,
            "z": self.z,
            "origin": self.origin,
        }

    @property
    def chain(self) -> list[str]:
        """Ids from the benchmark item down to this entry."""
        if self.origin == "benchmark":
            return [self.item]
        return [*json.loads(self.lineage).get("parents", []), self.item]


def seed_entries(items: pl.DataFrame, difficulty: pl.DataFrame) -> list[MemoryEntry]:
    """Benchmark items that have a difficulty, as memory entries (item order)."""
    d = {r["item"]: r for r in difficulty.iter_rows(named=True)}
    out = []
    for row in items.iter_rows(named=True):
        r = d.get(row["item"])
        if r is None:
            continue
        choices = row.get("choices")
        out.append(
            MemoryEntry(
                item=str(row["item"]),
                question=row["question"],
                answer=row.get("answer"),
                answer_type=row["answer_type"],
                choices=tuple(choices) if choices is not None else None,
                b=float(r["b"]),
                se=float(r["se"]),
                z=float(r["z"]),
                z_low=float(r["z_low"]),
                z_high=float(r["z_high"]),
                origin="benchmark",
                latent_b=float(r["b"]),
            )
        )
    return out


def entry_from_candidate(record: Candidate) -> MemoryEntry:
    """A calibrated candidate record as a memory entry."""
    lineage = record.lineage_dict()
    choices = lineage.get("choices")
    sim = lineage.get("simulation") or {}
    if record.b is None or record.se is None or record.z is None:
        raise ValueError(f"candidate {record.candidate} is not calibrated")
    return MemoryEntry(
        item=record.candidate,
        question=record.question,
        answer=record.answer,
        answer_type=record.answer_type,
        choices=tuple(choices) if choices else None,
        b=float(record.b),
        se=float(record.se),
        z=float(record.z),
        z_low=record.z_low,
        z_high=record.z_high,
        origin="candidate",
        method=record.method,
        parent=record.parent,
        insertion=lineage.get("insertion"),
        round=record.round,
        source=record.source,
        latent_b=sim.get("latent_b"),
        lineage=record.lineage,
    )


class Memory:
    """Entries in insertion order, with the two queries the search needs."""

    def __init__(self, entries: Iterable[MemoryEntry] = ()) -> None:
        self._entries: list[MemoryEntry] = []
        self._by_id: dict[str, MemoryEntry] = {}
        for e in entries:
            self.add(e)

    def add(self, entry: MemoryEntry) -> None:
        if entry.item in self._by_id:
            raise ValueError(f"memory already holds {entry.item!r}")
        self._entries.append(entry)
        self._by_id[entry.item] = entry

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[MemoryEntry]:
        return iter(self._entries)

    def __getitem__(self, item: str) -> MemoryEntry:
        return self._by_id[item]

    def __contains__(self, item: object) -> bool:
        return item in self._by_id

    def closest(self, z_star: float, n: int) -> list[MemoryEntry]:
        """The ``n`` entries with z closest to ``z_star`` (ties: smaller SE, then id)."""
        ranked = sorted(self._entries, key=lambda e: (abs(e.z - z_star), e.se, e.item))
        return ranked[:n]

    def references(
        self, z_star: float, n: int, *, exclude: Iterable[str] = ()
    ) -> list[MemoryEntry]:
        """At most ``n`` entries just below and just above ``z_star``, by z ascending.

        Half come from each side (the nearest ones); a side with too few entries leaves
        its share to the other, so an end-of-axis target still gets ``n`` references.
        """
        if n <= 0:
            return []
        skip = set(exclude)
        pool = [e for e in self._entries if e.item not in skip]
        below = sorted((e for e in pool if e.z < z_star), key=lambda e: (-e.z, e.item))
        above = sorted((e for e in pool if e.z >= z_star), key=lambda e: (e.z, e.item))
        n_below = min(len(below), n // 2)
        n_above = min(len(above), n - n_below)
        n_below = min(len(below), n - n_above)
        picked = below[:n_below] + above[:n_above]
        return sorted(picked, key=lambda e: (e.z, e.item))

    def to_frame(self, benchmark: str, calibration: str) -> pl.DataFrame:
        """The memory as a ``fill_memory`` table."""
        if not self._entries:
            return empty_frame("fill_memory")
        rows = [
            {
                "benchmark": benchmark,
                "item": e.item,
                "origin": e.origin,
                "method": e.method,
                "parent": e.parent,
                "insertion": e.insertion,
                "round": e.round,
                "question": e.question,
                "answer": e.answer,
                "answer_type": e.answer_type,
                "b": e.b,
                "se": e.se,
                "z": e.z,
                "z_low": e.z_low,
                "z_high": e.z_high,
                "source": e.source,
                "calibration": calibration,
                "lineage": e.lineage,
            }
            for e in self._entries
        ]
        return conform(pl.DataFrame(rows, infer_schema_length=None), "fill_memory")
