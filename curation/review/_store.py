"""The review queue: a SQLite database (WAL) with an append-only decision log.

Tables:

* ``items`` — one row per (benchmark, candidate): its current version and status. This
  is the *projection* of the two logs below; it is updated, never deleted.
* ``versions`` — every text/measurement version of a candidate, append-only: versions
  come from seeding (a candidate record) or from a reviewer's edit.
* ``decisions`` — every human decision, append-only (SQLite triggers refuse UPDATE and
  DELETE). A decision names the item version it was made on and the decision it
  supersedes, so two reviewers deciding at once cannot both win: the write happens in
  one ``BEGIN IMMEDIATE`` transaction that first checks both.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from curation.errors import CurationError, InputError

SCHEMA_VERSION = "1"
STATUSES = ("pending", "accepted", "rejected", "needs-calibration")
DECISIONS = ("accepted", "rejected", "edited")
VERDICTS = ("pass", "fail", "unjudged")
MAX_REVIEWER = 80
MAX_COMMENT = 4000
MAX_TEXT = 100_000

Status = Literal["pending", "accepted", "rejected", "needs-calibration"]
DecisionValue = Literal["accepted", "rejected", "edited"]

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS items (
  benchmark     TEXT NOT NULL,
  candidate     TEXT NOT NULL,
  status        TEXT NOT NULL
                CHECK (status IN ('pending', 'accepted', 'rejected', 'needs-calibration')),
  version       INTEGER NOT NULL CHECK (version >= 1),
  last_decision INTEGER REFERENCES decisions (id),
  source        TEXT NOT NULL CHECK (source IN ('collected', 'simulated')),
  domain        TEXT,
  license       TEXT,
  seeded_at     TEXT NOT NULL,
  updated_at    TEXT NOT NULL,
  PRIMARY KEY (benchmark, candidate)
);

CREATE TABLE IF NOT EXISTS versions (
  benchmark       TEXT NOT NULL,
  candidate       TEXT NOT NULL,
  version         INTEGER NOT NULL CHECK (version >= 1),
  origin          TEXT NOT NULL CHECK (origin IN ('seed', 'edit')),
  question        TEXT NOT NULL,
  answer          TEXT,
  record          TEXT NOT NULL,
  record_hash     TEXT NOT NULL,
  text_hash       TEXT NOT NULL,
  source          TEXT NOT NULL CHECK (source IN ('collected', 'simulated')),
  z               REAL,
  target_z        REAL,
  judge           TEXT NOT NULL CHECK (judge IN ('pass', 'fail', 'unjudged')),
  parent_kind     TEXT NOT NULL CHECK (parent_kind IN ('item', 'candidate', 'missing', 'none')),
  parent_question TEXT,
  parent_answer   TEXT,
  created_at      TEXT NOT NULL,
  created_by      TEXT NOT NULL,
  decision_id     INTEGER REFERENCES decisions (id),
  PRIMARY KEY (benchmark, candidate, version),
  FOREIGN KEY (benchmark, candidate) REFERENCES items (benchmark, candidate)
);

CREATE TABLE IF NOT EXISTS decisions (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  benchmark   TEXT NOT NULL,
  candidate   TEXT NOT NULL,
  version     INTEGER NOT NULL,
  decision    TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected', 'edited')),
  reviewer    TEXT NOT NULL CHECK (length(reviewer) > 0),
  decided_at  TEXT NOT NULL,
  comment     TEXT,
  supersedes  INTEGER REFERENCES decisions (id),
  new_version INTEGER,
  question    TEXT,
  answer      TEXT,
  text_hash   TEXT NOT NULL,
  source      TEXT NOT NULL CHECK (source IN ('collected', 'simulated')),
  FOREIGN KEY (benchmark, candidate) REFERENCES items (benchmark, candidate)
);

CREATE INDEX IF NOT EXISTS decisions_item ON decisions (benchmark, candidate, id);
CREATE INDEX IF NOT EXISTS items_status ON items (status, benchmark);

CREATE TRIGGER IF NOT EXISTS decisions_no_update BEFORE UPDATE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only: UPDATE is refused'); END;
CREATE TRIGGER IF NOT EXISTS decisions_no_delete BEFORE DELETE ON decisions
BEGIN SELECT RAISE(ABORT, 'decisions are append-only: DELETE is refused'); END;
CREATE TRIGGER IF NOT EXISTS versions_no_update BEFORE UPDATE ON versions
BEGIN SELECT RAISE(ABORT, 'item versions are append-only: UPDATE is refused'); END;
CREATE TRIGGER IF NOT EXISTS versions_no_delete BEFORE DELETE ON versions
BEGIN SELECT RAISE(ABORT, 'item versions are append-only: DELETE is refused'); END;
CREATE TRIGGER IF NOT EXISTS items_no_delete BEFORE DELETE ON items
BEGIN SELECT RAISE(ABORT, 'review items are never deleted'); END;
"""


class ReviewError(CurationError):
    """A decision that cannot be recorded as asked (the reason says what to do)."""

    http_status = 422


class ItemNotFound(ReviewError):
    """No such (benchmark, candidate) in the queue."""

    http_status = 404


class DecisionConflict(ReviewError):
    """Someone decided (or the item changed) since the reviewer loaded it; nothing was
    recorded. ``current`` is the state now."""

    http_status = 409

    def __init__(self, message: str, *, current: ItemState) -> None:
        super().__init__(message)
        self.current = current


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso_utc(moment: datetime) -> str:
    """``2025-01-31T12:34:56.789Z`` (UTC, milliseconds)."""
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def text_hash(question: str, answer: str | None) -> str:
    """sha256 of the (question, answer) a reviewer sees: ties a decision to exact text."""
    return hashlib.sha256(json.dumps([question, answer]).encode("utf-8")).hexdigest()


def record_hash(record: Mapping[str, Any]) -> str:
    canonical = json.dumps(dict(record), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def judge_verdict(record: Mapping[str, Any]) -> str:
    """pass = every judge check true; fail = any false; unjudged = otherwise."""
    checks = [record.get(k) for k in ("judge_correct", "judge_well_posed", "judge_format_kept")]
    if any(c is False for c in checks):
        return "fail"
    if checks and all(c is True for c in checks):
        return "pass"
    return "unjudged"


@dataclass(frozen=True)
class Decision:
    """One human decision, as logged (and exported to decisions.jsonl)."""

    id: int
    """Position in the append-only log (global, increasing)."""
    benchmark: str
    candidate: str
    version: int
    """The item version the decision was made on."""
    decision: DecisionValue
    reviewer: str
    decided_at: str
    """UTC ISO 8601 time, e.g. 2025-01-31T12:34:56.789Z."""
    comment: str | None
    supersedes: int | None
    """The decision id that was the item's latest when this one was made (None: first)."""
    new_version: int | None
    """For edits: the version the edit created (it goes back to calibration)."""
    question: str | None
    """For edits: the edited question."""
    answer: str | None
    """For edits: the edited answer."""
    text_hash: str
    """sha256 of the (question, answer) of the version decided on."""
    source: str
    """collected | simulated: simulated candidates can be reviewed for practice."""

    def to_record(self) -> dict[str, Any]:
        return {
            "decision_id": self.id,
            "benchmark": self.benchmark,
            "candidate": self.candidate,
            "version": self.version,
            "decision": self.decision,
            "reviewer": self.reviewer,
            "decided_at": self.decided_at,
            "comment": self.comment,
            "supersedes": self.supersedes,
            "new_version": self.new_version,
            "question": self.question,
            "answer": self.answer,
            "text_hash": self.text_hash,
            "source": self.source,
        }


@dataclass(frozen=True)
class Version:
    """One version of a candidate: its text, its measurement and its parent."""

    benchmark: str
    candidate: str
    version: int
    origin: Literal["seed", "edit"]
    question: str
    answer: str | None
    record: dict[str, Any]
    """The candidate record of this version (for edits: the previous one, text replaced,
    measurement and judge cleared)."""
    text_hash: str
    source: str
    judge: str
    parent_kind: str
    """item | candidate (parent found in the items or candidates table) | missing | none."""
    parent_question: str | None
    parent_answer: str | None
    created_at: str
    created_by: str
    decision_id: int | None

    @property
    def z(self) -> float | None:
        return self.record.get("z")

    @property
    def measured(self) -> bool:
        return self.record.get("z") is not None


@dataclass(frozen=True)
class ItemState:
    """Where one candidate stands now."""

    benchmark: str
    candidate: str
    status: Status
    version: int
    last_decision: Decision | None
    source: str

    def describe(self) -> str:
        text = f"{self.benchmark}/{self.candidate} is {self.status} (version {self.version})"
        d = self.last_decision
        if d is not None:
            text += f"; last decision #{d.id}: {d.decision} by {d.reviewer} at {d.decided_at}"
            text += f" on version {d.version}"
            if d.comment:
                text += f", comment: {d.comment!r}"
        return text


@dataclass(frozen=True)
class QueueRow:
    """One line of the queue list."""

    benchmark: str
    candidate: str
    status: str
    version: int
    source: str
    judge: str
    z: float | None
    target_z: float | None
    question: str
    last_decision: str | None
    last_reviewer: str | None
    last_decided_at: str | None


@dataclass(frozen=True)
class ItemView:
    """Everything the candidate page shows."""

    state: ItemState
    current: Version
    versions: list[Version]
    history: list[Decision]
    """Every decision on the item, oldest first."""
    domain: str | None = None
    license: str | None = None


@dataclass(frozen=True)
class SeedRecord:
    """A candidate record to seed, with its parent looked up."""

    record: dict[str, Any]
    parent_kind: str = "none"
    parent_question: str | None = None
    parent_answer: str | None = None
    domain: str | None = None
    license: str | None = None


@dataclass
class SeedReport:
    """What a seed did. Re-seeding never drops or changes a decision."""

    new_items: int = 0
    new_versions: int = 0
    unchanged: int = 0
    stale: int = 0
    """Records whose text is an older version's (e.g. the original after an edit): kept out."""
    filtered: int = 0
    """Records skipped by ``review.seed_statuses`` / ``review.seed_methods``."""
    files: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"seeded {', '.join(self.files) or 'nothing'}: {self.new_items} new item(s), "
            f"{self.new_versions} new version(s), {self.unchanged} unchanged, "
            f"{self.stale} stale (older text, kept out), {self.filtered} not for review"
        )


def _decision(row: sqlite3.Row) -> Decision:
    return Decision(
        id=row["id"],
        benchmark=row["benchmark"],
        candidate=row["candidate"],
        version=row["version"],
        decision=row["decision"],
        reviewer=row["reviewer"],
        decided_at=row["decided_at"],
        comment=row["comment"],
        supersedes=row["supersedes"],
        new_version=row["new_version"],
        question=row["question"],
        answer=row["answer"],
        text_hash=row["text_hash"],
        source=row["source"],
    )


def _version(row: sqlite3.Row) -> Version:
    return Version(
        benchmark=row["benchmark"],
        candidate=row["candidate"],
        version=row["version"],
        origin=row["origin"],
        question=row["question"],
        answer=row["answer"],
        record=json.loads(row["record"]),
        text_hash=row["text_hash"],
        source=row["source"],
        judge=row["judge"],
        parent_kind=row["parent_kind"],
        parent_question=row["parent_question"],
        parent_answer=row["parent_answer"],
        created_at=row["created_at"],
        created_by=row["created_by"],
        decision_id=row["decision_id"],
    )


def _clean_reviewer(reviewer: str) -> str:
    name = " ".join(str(reviewer or "").split())
    if not name:
        raise ReviewError("a decision needs a reviewer name: set yours first")
    if len(name) > MAX_REVIEWER:
        raise ReviewError(f"reviewer name is longer than {MAX_REVIEWER} characters")
    return name


class ReviewStore:
    """The review queue database. Each call opens its own connection, so one store can
    serve many threads (the web server) and many processes (two reviewers' servers)."""

    def __init__(self, path: str | Path, *, clock: Callable[[], datetime] = utc_now) -> None:
        self.path = Path(path)
        self._clock = clock

    # -- connections -------------------------------------------------------------------

    @classmethod
    def create(cls, path: str | Path, **kw: Any) -> ReviewStore:
        """Open the store at ``path``, creating the database (WAL) if it does not exist."""
        store = cls(path, **kw)
        store.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(store.path, isolation_level=None, timeout=30)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.executescript(_DDL)
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', ?)", (SCHEMA_VERSION,)
            )
        finally:
            conn.close()
        store._check_schema()
        return store

    @classmethod
    def open(cls, path: str | Path, **kw: Any) -> ReviewStore:
        """Open an existing store; a missing one is an error that says how to make it."""
        store = cls(path, **kw)
        if not store.path.is_file():
            raise InputError(
                "no review queue here yet; run `curate review seed` first", file=str(store.path)
            )
        store._check_schema()
        return store

    def _check_schema(self) -> None:
        with self._read() as conn:
            try:
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            except sqlite3.DatabaseError as exc:
                raise InputError(
                    f"not a review queue database ({exc})", file=str(self.path)
                ) from None
        if row is None or row[0] != SCHEMA_VERSION:
            raise InputError(
                f"review queue schema {row[0] if row else 'unknown'!s}, expected {SCHEMA_VERSION}",
                file=str(self.path),
            )

    def connect(self) -> sqlite3.Connection:
        """A new connection in autocommit mode (transactions are explicit)."""
        conn = sqlite3.connect(self.path, isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    @contextlib.contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        conn = self.connect()
        try:
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; BEGIN IMMEDIATE takes the write lock before any read,
        so a check-then-write inside it cannot race another writer."""
        conn = self.connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    def _now(self) -> str:
        return iso_utc(self._clock())

    # -- reading -----------------------------------------------------------------------

    def _state(self, conn: sqlite3.Connection, benchmark: str, candidate: str) -> ItemState:
        row = conn.execute(
            "SELECT * FROM items WHERE benchmark = ? AND candidate = ?", (benchmark, candidate)
        ).fetchone()
        if row is None:
            raise ItemNotFound(
                f"no candidate {candidate!r} of benchmark {benchmark!r} in the queue"
            )
        last = None
        if row["last_decision"] is not None:
            last = _decision(
                conn.execute(
                    "SELECT * FROM decisions WHERE id = ?", (row["last_decision"],)
                ).fetchone()
            )
        return ItemState(
            benchmark=row["benchmark"],
            candidate=row["candidate"],
            status=row["status"],
            version=row["version"],
            last_decision=last,
            source=row["source"],
        )

    def state(self, benchmark: str, candidate: str) -> ItemState:
        with self._read() as conn:
            return self._state(conn, benchmark, candidate)

    def item(self, benchmark: str, candidate: str) -> ItemView:
        """The item's state, every version and every decision."""
        with self._read() as conn:
            state = self._state(conn, benchmark, candidate)
            versions = [
                _version(r)
                for r in conn.execute(
                    "SELECT * FROM versions WHERE benchmark = ? AND candidate = ? ORDER BY version",
                    (benchmark, candidate),
                )
            ]
            history = [
                _decision(r)
                for r in conn.execute(
                    "SELECT * FROM decisions WHERE benchmark = ? AND candidate = ? ORDER BY id",
                    (benchmark, candidate),
                )
            ]
            meta = conn.execute(
                "SELECT domain, license FROM items WHERE benchmark = ? AND candidate = ?",
                (benchmark, candidate),
            ).fetchone()
        current = next(v for v in versions if v.version == state.version)
        return ItemView(
            state=state,
            current=current,
            versions=versions,
            history=history,
            domain=meta["domain"],
            license=meta["license"],
        )

    def queue(
        self,
        *,
        benchmark: str | None = None,
        status: str | None = None,
        verdict: str | None = None,
        source: str | None = None,
        limit: int = 500,
        offset: int = 0,
    ) -> tuple[list[QueueRow], int]:
        """Queue rows matching the filters (sorted by benchmark, candidate) and their total."""
        where, args = [], []
        for col, value in (
            ("i.benchmark", benchmark),
            ("i.status", status),
            ("v.judge", verdict),
            ("i.source", source),
        ):
            if value:
                where.append(f"{col} = ?")
                args.append(value)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        base = (
            "FROM items i JOIN versions v ON v.benchmark = i.benchmark "
            "AND v.candidate = i.candidate AND v.version = i.version "
            f"LEFT JOIN decisions d ON d.id = i.last_decision {clause}"
        )
        with self._read() as conn:
            total = conn.execute(f"SELECT count(*) {base}", args).fetchone()[0]
            rows = conn.execute(
                "SELECT i.benchmark, i.candidate, i.status, i.version, i.source, v.judge, v.z, "
                "v.target_z, v.question, d.decision, d.reviewer, d.decided_at "
                f"{base} ORDER BY i.benchmark, i.candidate LIMIT ? OFFSET ?",
                [*args, limit, offset],
            ).fetchall()
        return [QueueRow(*r) for r in rows], total

    def benchmarks(self) -> list[str]:
        with self._read() as conn:
            return [r[0] for r in conn.execute("SELECT DISTINCT benchmark FROM items ORDER BY 1")]

    def counts(self) -> dict[str, dict[str, int]]:
        """benchmark -> status -> number of items."""
        out: dict[str, dict[str, int]] = {}
        with self._read() as conn:
            for b, s, n in conn.execute(
                "SELECT benchmark, status, count(*) FROM items GROUP BY 1, 2 ORDER BY 1, 2"
            ):
                out.setdefault(b, {})[s] = n
        return out

    def next_item(
        self, benchmark: str, candidate: str, *, status: str = "pending"
    ) -> tuple[str, str] | None:
        """The next item with ``status`` after this one (wrapping around), if any."""
        with self._read() as conn:
            row = conn.execute(
                "SELECT benchmark, candidate FROM items WHERE status = ? AND "
                "(benchmark, candidate) > (?, ?) ORDER BY benchmark, candidate LIMIT 1",
                (status, benchmark, candidate),
            ).fetchone()
            if row is None:
                row = conn.execute(
                    "SELECT benchmark, candidate FROM items WHERE status = ? AND NOT "
                    "(benchmark = ? AND candidate = ?) ORDER BY benchmark, candidate LIMIT 1",
                    (status, benchmark, candidate),
                ).fetchone()
        return (row[0], row[1]) if row else None

    def decisions(self) -> list[Decision]:
        """The whole decision log, in log order."""
        with self._read() as conn:
            return [_decision(r) for r in conn.execute("SELECT * FROM decisions ORDER BY id")]

    def current_versions(self) -> list[tuple[ItemState, Version, str | None, str | None]]:
        """(state, current version, domain, license) of every item, sorted."""
        out = []
        with self._read() as conn:
            keys = conn.execute(
                "SELECT benchmark, candidate, domain, license FROM items ORDER BY 1, 2"
            ).fetchall()
            for b, c, domain, lic in keys:
                state = self._state(conn, b, c)
                v = conn.execute(
                    "SELECT * FROM versions WHERE benchmark = ? AND candidate = ? AND version = ?",
                    (b, c, state.version),
                ).fetchone()
                out.append((state, _version(v), domain, lic))
        return out

    def history(self, benchmark: str, candidate: str) -> list[Decision]:
        with self._read() as conn:
            return [
                _decision(r)
                for r in conn.execute(
                    "SELECT * FROM decisions WHERE benchmark = ? AND candidate = ? ORDER BY id",
                    (benchmark, candidate),
                )
            ]

    # -- seeding -----------------------------------------------------------------------

    def seed(self, records: Sequence[SeedRecord], *, created_by: str) -> SeedReport:
        """Add new candidates and new versions of known ones, in one transaction.

        * unknown candidate -> a new item, version 1;
        * the same record as any stored version -> unchanged (re-seeding is idempotent);
        * new text, or the current text with a new measurement/verdict -> a new version,
          status pending (or needs-calibration when it has no z): decisions stay in the
          log and name the version they were made on;
        * the text of an *older* version (e.g. the original text after a reviewer's edit)
          -> stale, kept out: seeding never undoes an edit.
        """
        report = SeedReport()
        now = self._now()
        with self._write() as conn:
            for seed in sorted(
                records, key=lambda s: (s.record["benchmark"], s.record["candidate"])
            ):
                rec = seed.record
                b, c = rec["benchmark"], rec["candidate"]
                rhash = record_hash(rec)
                thash = text_hash(rec["question"], rec.get("answer"))
                status = "pending" if rec.get("z") is not None else "needs-calibration"
                item = conn.execute(
                    "SELECT version FROM items WHERE benchmark = ? AND candidate = ?", (b, c)
                ).fetchone()
                if item is None:
                    conn.execute(
                        "INSERT INTO items (benchmark, candidate, status, version, source, "
                        "domain, license, seeded_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
                        (b, c, status, 1, rec["source"], seed.domain, seed.license, now, now),
                    )
                    self._insert_version(conn, seed, 1, "seed", rhash, thash, now, created_by)
                    report.new_items += 1
                    continue
                stored = conn.execute(
                    "SELECT version, record_hash, text_hash FROM versions "
                    "WHERE benchmark = ? AND candidate = ? ORDER BY version",
                    (b, c),
                ).fetchall()
                if any(r["record_hash"] == rhash for r in stored):
                    report.unchanged += 1
                    continue
                current = stored[-1]
                older_texts = {r["text_hash"] for r in stored[:-1]}
                if thash != current["text_hash"] and thash in older_texts:
                    report.stale += 1
                    continue
                new = current["version"] + 1
                self._insert_version(conn, seed, new, "seed", rhash, thash, now, created_by)
                conn.execute(
                    "UPDATE items SET version = ?, status = ?, source = ?, updated_at = ?, "
                    "domain = coalesce(?, domain), license = coalesce(?, license) "
                    "WHERE benchmark = ? AND candidate = ?",
                    (new, status, rec["source"], now, seed.domain, seed.license, b, c),
                )
                report.new_versions += 1
        return report

    @staticmethod
    def _insert_version(
        conn: sqlite3.Connection,
        seed: SeedRecord,
        version: int,
        origin: str,
        rhash: str,
        thash: str,
        now: str,
        created_by: str,
        decision_id: int | None = None,
    ) -> None:
        rec = seed.record
        conn.execute(
            "INSERT INTO versions (benchmark, candidate, version, origin, question, answer, "
            "record, record_hash, text_hash, source, z, target_z, judge, parent_kind, "
            "parent_question, parent_answer, created_at, created_by, decision_id) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                rec["benchmark"],
                rec["candidate"],
                version,
                origin,
                rec["question"],
                rec.get("answer"),
                json.dumps(rec, sort_keys=True, default=str),
                rhash,
                thash,
                rec["source"],
                rec.get("z"),
                rec.get("target_z"),
                judge_verdict(rec),
                seed.parent_kind,
                seed.parent_question,
                seed.parent_answer,
                now,
                created_by,
                decision_id,
            ),
        )

    # -- deciding ----------------------------------------------------------------------

    def decide(
        self,
        benchmark: str,
        candidate: str,
        *,
        decision: str,
        reviewer: str,
        version: int,
        supersedes: int | None,
        comment: str | None = None,
        question: str | None = None,
        answer: str | None = None,
    ) -> Decision:
        """Record one decision made on ``version`` when the item's latest decision was
        ``supersedes`` (None: no decision yet).

        Raises :class:`DecisionConflict` (nothing recorded, the current state attached)
        when the item moved on since the reviewer loaded it, and :class:`ReviewError`
        for a decision that cannot apply (accepting an unmeasured version, an edit that
        changes nothing, no reviewer name).
        """
        if decision not in DECISIONS:
            raise ReviewError(f"unknown decision {decision!r}; expected one of {DECISIONS}")
        reviewer = _clean_reviewer(reviewer)
        comment = (comment or "").strip() or None
        if comment is not None and len(comment) > MAX_COMMENT:
            raise ReviewError(f"comment is longer than {MAX_COMMENT} characters")
        with self._write() as conn:
            state = self._state(conn, benchmark, candidate)
            last_id = state.last_decision.id if state.last_decision else None
            if state.version != version or last_id != supersedes:
                raise DecisionConflict(
                    "not recorded: this item changed after you loaded it "
                    f"(you saw version {version}"
                    + (f" after decision #{supersedes}" if supersedes else "")
                    + f"). Now: {state.describe()}. Reload it and decide again.",
                    current=state,
                )
            row = conn.execute(
                "SELECT * FROM versions WHERE benchmark = ? AND candidate = ? AND version = ?",
                (benchmark, candidate, version),
            ).fetchone()
            current = _version(row)
            new_version = None
            new_q = new_a = None
            if decision == "accepted" and not current.measured:
                raise ReviewError(
                    f"cannot accept version {version}: it has no measured difficulty yet "
                    "(an edited item goes back to calibration; re-seed after it is "
                    "calibrated, then accept)"
                )
            if decision == "edited":
                new_q = (question or "").replace("\r\n", "\n").strip()
                new_a = answer.replace("\r\n", "\n").strip() if answer is not None else None
                if not new_q:
                    raise ReviewError("an edit needs a non-empty question")
                if len(new_q) > MAX_TEXT or len(new_a or "") > MAX_TEXT:
                    raise ReviewError(f"edited text is longer than {MAX_TEXT} characters")
                if new_a == "" and current.answer is None:
                    new_a = None
                if text_hash(new_q, new_a) == current.text_hash:
                    raise ReviewError("the edit changes nothing: change the question or answer")
                new_version = version + 1
            now = self._now()
            cur = conn.execute(
                "INSERT INTO decisions (benchmark, candidate, version, decision, reviewer, "
                "decided_at, comment, supersedes, new_version, question, answer, text_hash, "
                "source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    benchmark,
                    candidate,
                    version,
                    decision,
                    reviewer,
                    now,
                    comment,
                    supersedes,
                    new_version,
                    new_q,
                    new_a,
                    current.text_hash,
                    current.source,
                ),
            )
            decision_id = int(cur.lastrowid or 0)
            status = {"accepted": "accepted", "rejected": "rejected"}.get(
                decision, "needs-calibration"
            )
            if new_version is not None:
                assert new_q is not None
                rec = _edited_record(current.record, new_q, new_a, reviewer, decision_id)
                seed = SeedRecord(
                    record=rec,
                    parent_kind=current.parent_kind,
                    parent_question=current.parent_question,
                    parent_answer=current.parent_answer,
                )
                self._insert_version(
                    conn,
                    seed,
                    new_version,
                    "edit",
                    record_hash(rec),
                    text_hash(new_q, new_a),
                    now,
                    reviewer,
                    decision_id,
                )
            conn.execute(
                "UPDATE items SET status = ?, version = ?, last_decision = ?, updated_at = ? "
                "WHERE benchmark = ? AND candidate = ?",
                (status, new_version or version, decision_id, now, benchmark, candidate),
            )
            saved = conn.execute("SELECT * FROM decisions WHERE id = ?", (decision_id,)).fetchone()
        return _decision(saved)


_MEASUREMENT = ("b", "se", "z", "z_low", "z_high")
_JUDGE = ("judge_correct", "judge_well_posed", "judge_format_kept", "judge_reason", "judge_model")


def _edited_record(
    previous: Mapping[str, Any], question: str, answer: str | None, reviewer: str, decision: int
) -> dict[str, Any]:
    """The candidate record of an edited version: new text, no measurement, no verdict."""
    rec = dict(previous)
    rec.update({"question": question, "answer": answer})
    rec.update({k: None for k in (*_MEASUREMENT, *_JUDGE)})
    rec.update({"n_trials": 0, "n_correct": 0, "panel": "{}", "selected": False})
    rec["change"] = f"edited by reviewer {reviewer} (decision #{decision})"
    return rec
