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
import secrets
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from curation.errors import CurationError, InputError

SCHEMA_VERSION = "2"
STATUSES = ("pending", "accepted", "rejected", "conflict", "needs-calibration")
DECISIONS = ("accepted", "rejected", "edited")
"""Decisions a reviewer makes on an item page."""
LOGGED = (*DECISIONS, "reverted")
"""Every value the log holds: ``reverted`` undoes one earlier decision (batch undo)."""
ROLES = ("reviewer", "adjudicator")
VERDICTS = ("pass", "fail", "unjudged")
MAX_REVIEWER = 80
MAX_COMMENT = 4000
MAX_TEXT = 100_000

Status = Literal["pending", "accepted", "rejected", "conflict", "needs-calibration"]
DecisionValue = Literal["accepted", "rejected", "edited", "reverted"]
Role = Literal["reviewer", "adjudicator"]

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

CREATE TABLE IF NOT EXISTS items (
  benchmark     TEXT NOT NULL,
  candidate     TEXT NOT NULL,
  status        TEXT NOT NULL
                CHECK (status IN ('pending', 'accepted', 'rejected', 'conflict',
                                  'needs-calibration')),
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
  decision    TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected', 'edited', 'reverted')),
  reviewer    TEXT NOT NULL CHECK (length(reviewer) > 0),
  decided_at  TEXT NOT NULL,
  comment     TEXT,
  supersedes  INTEGER REFERENCES decisions (id),
  new_version INTEGER,
  question    TEXT,
  answer      TEXT,
  text_hash   TEXT NOT NULL,
  source      TEXT NOT NULL CHECK (source IN ('collected', 'simulated')),
  role        TEXT NOT NULL DEFAULT 'reviewer' CHECK (role IN ('reviewer', 'adjudicator')),
  overrules_judge INTEGER NOT NULL DEFAULT 0 CHECK (overrules_judge IN (0, 1)),
  batch       TEXT,
  reverts     INTEGER REFERENCES decisions (id),
  FOREIGN KEY (benchmark, candidate) REFERENCES items (benchmark, candidate)
);

CREATE INDEX IF NOT EXISTS decisions_batch ON decisions (batch);
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
    role: Role = "reviewer"
    """reviewer (one vote of ``review.required_reviews``) or adjudicator (final say)."""
    overrules_judge: bool = False
    """An accept of a version the LLM judge failed (the comment holds the reason)."""
    batch: str | None = None
    """Bulk actions: the id shared by every decision of one bulk accept/reject or undo."""
    reverts: int | None = None
    """For ``reverted``: the decision id this one undoes (it no longer counts)."""

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
            "role": self.role,
            "overrules_judge": self.overrules_judge,
            "batch": self.batch,
            "reverts": self.reverts,
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
    method: str | None = None
    round: int | None = None
    selected: bool = False

    @property
    def distance(self) -> float | None:
        """|z − target z|, when both are known."""
        return None if self.z is None or self.target_z is None else abs(self.z - self.target_z)


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
        role=row["role"],
        overrules_judge=bool(row["overrules_judge"]),
        batch=row["batch"],
        reverts=row["reverts"],
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


PRIORITY = (
    "CASE WHEN json_extract(v.record, '$.selected') THEN "
    "(CASE WHEN json_extract(v.record, '$.method') = 'benchfill' THEN 0 ELSE 1 END) "
    "ELSE 2 END"
)
"""The queue's default order: the items BenchFill selected for insertion (what a published
dataset adds), then the other methods' selections (the baseline's), then the rest."""

SORTS = {
    "priority": PRIORITY,
    "candidate": "i.candidate",
    "benchmark": "i.benchmark",
    "distance": "abs(v.z - v.target_z)",
    "z": "v.z",
    "target": "v.target_z",
    "judge": "v.judge",
    "round": "json_extract(v.record, '$.round')",
    "method": "json_extract(v.record, '$.method')",
    "status": "i.status",
    "version": "i.version",
    "decided": "d.decided_at",
}
"""Queue sort keys -> SQL (whitelisted: user input never reaches SQL text)."""


def _queue_where(
    *,
    benchmark: str | None = None,
    status: str | None = None,
    verdict: str | None = None,
    source: str | None = None,
    search: str | None = None,
    method: str | None = None,
    round: int | None = None,
    selected: bool | None = None,
    reviewer: str | None = None,
    needs: str | None = None,
    max_distance: float | None = None,
) -> tuple[list[str], list[Any]]:
    where: list[str] = []
    args: list[Any] = []
    for col, value in (
        ("i.benchmark", benchmark),
        ("i.status", status),
        ("v.judge", verdict),
        ("i.source", source),
        ("json_extract(v.record, '$.method')", method),
    ):
        if value:
            where.append(f"{col} = ?")
            args.append(value)
    if round is not None:
        where.append("json_extract(v.record, '$.round') = ?")
        args.append(round)
    if selected is not None:
        where.append("coalesce(json_extract(v.record, '$.selected'), 0) = ?")
        args.append(1 if selected else 0)
    for word in (search or "").split():
        pattern = "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        where.append("(v.question LIKE ? ESCAPE '\\' OR coalesce(v.answer, '') LIKE ? ESCAPE '\\')")
        args += [pattern, pattern]
    if reviewer:
        where.append(
            "EXISTS (SELECT 1 FROM decisions r WHERE r.benchmark = i.benchmark "
            "AND r.candidate = i.candidate AND r.reviewer = ?)"
        )
        args.append(reviewer)
    if needs:
        where.append(
            "i.status = 'pending' AND NOT EXISTS (SELECT 1 FROM decisions r WHERE "
            "r.benchmark = i.benchmark AND r.candidate = i.candidate AND r.version = i.version "
            "AND r.reviewer = ? AND r.decision IN ('accepted', 'rejected'))"
        )
        args.append(needs)
    if max_distance is not None:
        where.append("abs(v.z - v.target_z) <= ?")
        args.append(max_distance)
    return where, args


def _clean_comment(comment: str | None) -> str | None:
    text = (comment or "").strip() or None
    if text is not None and len(text) > MAX_COMMENT:
        raise ReviewError(f"comment is longer than {MAX_COMMENT} characters")
    return text


@dataclass
class BatchReport:
    """What a bulk action or an undo recorded."""

    batch: str
    decision: str
    recorded: int = 0
    skipped: list[tuple[str, str, str]] = field(default_factory=list)
    """(benchmark, candidate, why) of items left as they were."""
    undoes: str | None = None

    def __str__(self) -> str:
        what = f"undo of batch {self.undoes}" if self.undoes else f"bulk {self.decision}"
        text = f"{what}: batch {self.batch}, {self.recorded} decision(s) recorded"
        if self.skipped:
            text += f", {len(self.skipped)} item(s) skipped"
        return text


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

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], datetime] = utc_now,
        required_reviews: int | Mapping[str, int] = 1,
    ) -> None:
        """``required_reviews``: distinct reviewers who must agree before an item is
        accepted or rejected (an int for every benchmark, or benchmark -> N with an
        optional ``"*"`` default). With 1, the latest decision decides (as a single
        reviewer expects); with N >= 2, reviewers' votes are counted per item version."""
        self.path = Path(path)
        self._clock = clock
        self.required_reviews = required_reviews

    def required(self, benchmark: str) -> int:
        """N for ``benchmark`` (see ``required_reviews``)."""
        n = self.required_reviews
        if isinstance(n, int):
            return max(1, n)
        return max(1, int(n.get(benchmark, n.get("*", 1))))

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
        if row is not None and row[0] == "1":
            raise InputError(
                "review queue schema 1 (before reviewer roles, batches and conflicts): run "
                "`curate review export` with the previous benchcurate, then "
                "`curate review rebuild --force` to recreate it from decisions.jsonl",
                file=str(self.path),
            )
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
        search: str | None = None,
        method: str | None = None,
        round: int | None = None,
        selected: bool | None = None,
        reviewer: str | None = None,
        needs: str | None = None,
        max_distance: float | None = None,
        sort: str = "priority",
        descending: bool = False,
        limit: int = 500,
        offset: int = 0,
    ) -> tuple[list[QueueRow], int]:
        """Queue rows matching the filters, sorted (see :data:`SORTS`), and their total.

        ``search``: words that must all occur in the question or answer (case-blind).
        ``reviewer``: items this reviewer decided on; ``needs``: items waiting for this
        reviewer's vote (pending, none of theirs on the current version).
        ``max_distance``: |z − target| at most this.
        """
        where, args = _queue_where(
            benchmark=benchmark,
            status=status,
            verdict=verdict,
            source=source,
            search=search,
            method=method,
            round=round,
            selected=selected,
            reviewer=reviewer,
            needs=needs,
            max_distance=max_distance,
        )
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        base = (
            "FROM items i JOIN versions v ON v.benchmark = i.benchmark "
            "AND v.candidate = i.candidate AND v.version = i.version "
            f"LEFT JOIN decisions d ON d.id = i.last_decision {clause}"
        )
        order = SORTS.get(sort, SORTS["priority"])
        direction = "DESC" if descending else "ASC"
        with self._read() as conn:
            total = conn.execute(f"SELECT count(*) {base}", args).fetchone()[0]
            rows = conn.execute(
                "SELECT i.benchmark, i.candidate, i.status, i.version, i.source, v.judge, v.z, "
                "v.target_z, v.question, d.decision, d.reviewer, d.decided_at, "
                "json_extract(v.record, '$.method'), json_extract(v.record, '$.round'), "
                "json_extract(v.record, '$.selected') "
                f"{base} ORDER BY {order} {direction} NULLS LAST, i.benchmark, i.candidate "
                "LIMIT ? OFFSET ?",
                [*args, limit, offset],
            ).fetchall()
        return [
            QueueRow(
                benchmark=r[0],
                candidate=r[1],
                status=r[2],
                version=r[3],
                source=r[4],
                judge=r[5],
                z=r[6],
                target_z=r[7],
                question=r[8],
                last_decision=r[9],
                last_reviewer=r[10],
                last_decided_at=r[11],
                method=r[12],
                round=r[13],
                selected=bool(r[14]),
            )
            for r in rows
        ], total

    def queue_keys(self, **filters: Any) -> list[tuple[str, str]]:
        """(benchmark, candidate) of every item matching the :meth:`queue` filters."""
        where, args = _queue_where(**filters)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        with self._read() as conn:
            return [
                (r[0], r[1])
                for r in conn.execute(
                    "SELECT i.benchmark, i.candidate FROM items i JOIN versions v "
                    "ON v.benchmark = i.benchmark AND v.candidate = i.candidate "
                    f"AND v.version = i.version {clause} ORDER BY 1, 2",
                    args,
                )
            ]

    def methods_rounds(self) -> tuple[list[str], list[int]]:
        """The methods and rounds of the current versions (for the filter menus)."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT DISTINCT json_extract(v.record, '$.method'), "
                "json_extract(v.record, '$.round') FROM items i JOIN versions v "
                "ON v.benchmark = i.benchmark AND v.candidate = i.candidate "
                "AND v.version = i.version"
            ).fetchall()
        methods = sorted({r[0] for r in rows if r[0] is not None})
        rounds = sorted({int(r[1]) for r in rows if r[1] is not None})
        return methods, rounds

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
        """The next item with ``status`` after this one in the queue's default order
        (selected for insertion first, then benchmark and id), wrapping around."""
        with self._read() as conn:
            rows = conn.execute(
                f"SELECT {PRIORITY}, i.benchmark, i.candidate, i.status FROM items i "
                "JOIN versions v ON v.benchmark = i.benchmark AND v.candidate = i.candidate "
                "AND v.version = i.version WHERE i.status = ? OR (i.benchmark = ? AND "
                "i.candidate = ?) ORDER BY 1, 2, 3",
                (status, benchmark, candidate),
            ).fetchall()
        keys = [(r[0], r[1], r[2]) for r in rows if r[3] == status]
        here = next(
            ((r[0], r[1], r[2]) for r in rows if (r[1], r[2]) == (benchmark, candidate)), None
        )
        after = [k for k in keys if here is None or k > here]
        before = [k for k in keys if here is not None and k < here]
        nxt = after or before
        return (nxt[0][1], nxt[0][2]) if nxt else None

    def progress(self, reviewer: str) -> tuple[int, int]:
        """(items this reviewer has a standing vote on, items open to review): what the
        page shows as "12 of 40 decided by you". An undone vote does not count; items
        waiting for calibration are not open to review."""
        with self._read() as conn:
            total = conn.execute(
                "SELECT count(*) FROM items WHERE status != 'needs-calibration'"
            ).fetchone()[0]
            rows = conn.execute(
                "SELECT d.benchmark, d.candidate, d.decision, d.id, "
                "(SELECT count(*) FROM decisions r WHERE r.decision = 'reverted' "
                "AND r.reverts = d.id) FROM decisions d JOIN items i ON i.benchmark = "
                "d.benchmark AND i.candidate = d.candidate AND i.status != "
                "'needs-calibration' WHERE d.reviewer = ? AND d.decision IN "
                "('accepted', 'rejected')",
                (reviewer,),
            ).fetchall()
        decided = {(r[0], r[1]) for r in rows if not r[4]}
        return len(decided), total

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
        role: str = "reviewer",
    ) -> Decision:
        """Record one decision made on ``version`` when the item's latest decision was
        ``supersedes`` (None: no decision yet).

        Raises :class:`DecisionConflict` (nothing recorded, the current state attached)
        when the item moved on since the reviewer loaded it, and :class:`ReviewError`
        for a decision that cannot apply (accepting an unmeasured version, accepting a
        judge-failed version without a reason, a reviewer vote on an item in conflict,
        an edit that changes nothing, no reviewer name).
        """
        if decision not in DECISIONS:
            raise ReviewError(f"unknown decision {decision!r}; expected one of {DECISIONS}")
        reviewer = _clean_reviewer(reviewer)
        comment = _clean_comment(comment)
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
            return self._record(
                conn,
                state,
                decision=decision,
                reviewer=reviewer,
                comment=comment,
                question=question,
                answer=answer,
                role=role,
            )

    def _record(
        self,
        conn: sqlite3.Connection,
        state: ItemState,
        *,
        decision: str,
        reviewer: str,
        comment: str | None,
        role: str,
        question: str | None = None,
        answer: str | None = None,
        batch: str | None = None,
    ) -> Decision:
        """Check and write one decision on the item's current version (inside a write)."""
        if role not in ROLES:
            raise ReviewError(f"unknown role {role!r}; expected one of {ROLES}")
        benchmark, candidate, version = state.benchmark, state.candidate, state.version
        if state.status == "conflict" and role != "adjudicator" and decision != "edited":
            raise ReviewError(
                "this item is in conflict (its reviewers disagree): only an adjudicator "
                "can resolve it"
            )
        row = conn.execute(
            "SELECT * FROM versions WHERE benchmark = ? AND candidate = ? AND version = ?",
            (benchmark, candidate, version),
        ).fetchone()
        current = _version(row)
        new_version = None
        new_q = new_a = None
        overrules = False
        if decision == "accepted" and not current.measured:
            raise ReviewError(
                f"cannot accept version {version}: it has no measured difficulty yet "
                "(send it to calibration: an edit, or the unchanged text of a candidate the "
                "judge rejected before it was measured; then `curate review export`, "
                "`curate review recalibrate`, `curate review seed`, and accept)"
            )
        if decision == "accepted" and current.judge == "fail":
            if not comment:
                raise ReviewError(
                    "the LLM judge rejected this candidate: accepting it overrules the "
                    "judge and needs your reason in the comment"
                )
            overrules = True
        if decision == "edited":
            new_q = (question or "").replace("\r\n", "\n").strip()
            new_a = answer.replace("\r\n", "\n").strip() if answer is not None else None
            if not new_q:
                raise ReviewError("an edit needs a non-empty question")
            if len(new_q) > MAX_TEXT or len(new_a or "") > MAX_TEXT:
                raise ReviewError(f"edited text is longer than {MAX_TEXT} characters")
            if new_a == "" and current.answer is None:
                new_a = None
            # An unchanged "edit" of a version that was never measured (BenchFill's judge
            # rejected it before calibration) is a request to measure it: the only way to
            # give such a candidate a difficulty, and so to accept it overruling the judge.
            if text_hash(new_q, new_a) == current.text_hash and (
                current.measured or current.origin == "edit"
            ):
                raise ReviewError("the edit changes nothing: change the question or answer")
            new_version = version + 1
        rec = {
            "benchmark": benchmark,
            "candidate": candidate,
            "version": version,
            "decision": decision,
            "reviewer": reviewer,
            "decided_at": self._now(),
            "comment": comment,
            "supersedes": state.last_decision.id if state.last_decision else None,
            "new_version": new_version,
            "question": new_q,
            "answer": new_a,
            "text_hash": current.text_hash,
            "source": current.source,
            "role": role,
            "overrules_judge": overrules,
            "batch": batch,
            "reverts": None,
        }
        return self._apply(conn, rec, current)

    def _apply(
        self,
        conn: sqlite3.Connection,
        rec: Mapping[str, Any],
        current: Version,
        *,
        decision_id: int | None = None,
    ) -> Decision:
        """Insert a checked decision record (with ``decision_id`` when replaying a log),
        add the version an edit creates and update the item's projection."""
        cols = [
            "benchmark",
            "candidate",
            "version",
            "decision",
            "reviewer",
            "decided_at",
            "comment",
            "supersedes",
            "new_version",
            "question",
            "answer",
            "text_hash",
            "source",
            "role",
            "overrules_judge",
            "batch",
            "reverts",
        ]
        values = [rec.get(c) for c in cols]
        values[cols.index("role")] = rec.get("role") or "reviewer"
        values[cols.index("overrules_judge")] = int(bool(rec.get("overrules_judge")))
        if decision_id is not None:
            cols, values = ["id", *cols], [decision_id, *values]
        cur = conn.execute(
            f"INSERT INTO decisions ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
            values,
        )
        decision_id = int(cur.lastrowid or 0) if decision_id is None else decision_id
        b, c, now = rec["benchmark"], rec["candidate"], rec["decided_at"]
        new_version = rec.get("new_version")
        version = current.version
        if new_version is not None:
            new_q, new_a, reviewer = rec["question"], rec.get("answer"), rec["reviewer"]
            edited = _edited_record(current.record, new_q, new_a, reviewer, decision_id)
            seed = SeedRecord(
                record=edited,
                parent_kind=current.parent_kind,
                parent_question=current.parent_question,
                parent_answer=current.parent_answer,
            )
            self._insert_version(
                conn,
                seed,
                new_version,
                "edit",
                record_hash(edited),
                text_hash(new_q, new_a),
                now,
                reviewer,
                decision_id,
            )
            version = new_version
        status = self._project(
            conn, b, c, version, measured=new_version is None and current.measured
        )
        conn.execute(
            "UPDATE items SET status = ?, version = ?, last_decision = ?, updated_at = ? "
            "WHERE benchmark = ? AND candidate = ?",
            (status, version, decision_id, now, b, c),
        )
        saved = conn.execute("SELECT * FROM decisions WHERE id = ?", (decision_id,)).fetchone()
        return _decision(saved)

    def _project(
        self,
        conn: sqlite3.Connection,
        benchmark: str,
        candidate: str,
        version: int,
        *,
        measured: bool,
    ) -> Status:
        """The status the log gives ``version`` of an item.

        Votes are the accept/reject decisions on that version that no ``reverted``
        decision undid. An adjudicator's latest vote decides. Otherwise, with
        ``required_reviews`` 1 the latest vote decides; with N >= 2 each reviewer's latest
        vote counts, fewer than N reviewers leave the item pending, and N or more that
        do not all agree put it in conflict.
        """
        rows = conn.execute(
            "SELECT id, version, decision, reviewer, role, reverts FROM decisions "
            "WHERE benchmark = ? AND candidate = ? ORDER BY id",
            (benchmark, candidate),
        ).fetchall()
        undone = {r["reverts"] for r in rows if r["decision"] == "reverted"}
        votes = [
            r
            for r in rows
            if r["version"] == version
            and r["decision"] in ("accepted", "rejected")
            and r["id"] not in undone
        ]
        base: Status = "pending" if measured else "needs-calibration"
        if not votes:
            return base
        adjudicated = [r for r in votes if r["role"] == "adjudicator"]
        if adjudicated:
            return adjudicated[-1]["decision"]
        if self.required(benchmark) <= 1:
            return votes[-1]["decision"]
        latest = {r["reviewer"]: r["decision"] for r in votes}
        if len(latest) < self.required(benchmark):
            return base
        values = set(latest.values())
        return values.pop() if len(values) == 1 else "conflict"

    # -- bulk work and undo ------------------------------------------------------------

    def decide_many(
        self,
        keys: Sequence[tuple[str, str]],
        *,
        decision: str,
        reviewer: str,
        comment: str | None = None,
        role: str = "reviewer",
    ) -> BatchReport:
        """Accept or reject every item of ``keys`` on its current version, in one
        transaction, as individual decisions sharing a new batch id. Items the decision
        cannot apply to (unmeasured, judge-failed without a reason, in conflict) are
        skipped and listed with the reason."""
        if decision not in ("accepted", "rejected"):
            raise ReviewError("a bulk action accepts or rejects")
        reviewer = _clean_reviewer(reviewer)
        comment = _clean_comment(comment)
        batch = "b-" + secrets.token_hex(6)
        report = BatchReport(batch=batch, decision=decision)
        with self._write() as conn:
            for b, c in keys:
                state = self._state(conn, b, c)
                try:
                    self._record(
                        conn,
                        state,
                        decision=decision,
                        reviewer=reviewer,
                        comment=comment,
                        role=role,
                        batch=batch,
                    )
                except ReviewError as exc:
                    report.skipped.append((b, c, str(exc)))
                    continue
                report.recorded += 1
        return report

    def undo_batch(self, batch: str, *, reviewer: str, role: str = "reviewer") -> BatchReport:
        """Undo a bulk action: one new ``reverted`` decision per decision of ``batch``
        (never deleting any), so each item's status is what it was before. A decision
        whose item moved on since (an edit, a newer version) is left as it is."""
        reviewer = _clean_reviewer(reviewer)
        if role not in ROLES:
            raise ReviewError(f"unknown role {role!r}; expected one of {ROLES}")
        undo = "u-" + secrets.token_hex(6)
        report = BatchReport(batch=undo, decision="reverted", undoes=batch)
        with self._write() as conn:
            rows = conn.execute(
                "SELECT * FROM decisions WHERE batch = ? ORDER BY id", (batch,)
            ).fetchall()
            if not rows:
                raise ReviewError(f"no batch {batch!r} in the decision log")
            if rows[0]["decision"] == "reverted":
                raise ReviewError(f"batch {batch!r} is an undo; undo is not undone")
            authors = sorted({str(r["reviewer"]) for r in rows})
            if role != "adjudicator" and authors != [reviewer]:
                raise ReviewError(
                    f"batch {batch!r} was made by {', '.join(authors)}: a reviewer undoes only "
                    "their own batches (an adjudicator any)"
                )
            done = {
                r[0]
                for r in conn.execute(
                    "SELECT reverts FROM decisions WHERE decision = 'reverted' AND reverts IN "
                    f"({', '.join('?' * len(rows))})",
                    [r["id"] for r in rows],
                )
            }
            for r in rows:
                state = self._state(conn, r["benchmark"], r["candidate"])
                if r["id"] in done:
                    report.skipped.append((r["benchmark"], r["candidate"], "already undone"))
                    continue
                if state.version != r["version"]:
                    report.skipped.append(
                        (r["benchmark"], r["candidate"], "the item has a newer version")
                    )
                    continue
                current = _version(
                    conn.execute(
                        "SELECT * FROM versions WHERE benchmark = ? AND candidate = ? "
                        "AND version = ?",
                        (state.benchmark, state.candidate, state.version),
                    ).fetchone()
                )
                rec = {
                    "benchmark": state.benchmark,
                    "candidate": state.candidate,
                    "version": state.version,
                    "decision": "reverted",
                    "reviewer": reviewer,
                    "decided_at": self._now(),
                    "comment": f"undo of batch {batch} (decision #{r['id']})",
                    "supersedes": state.last_decision.id if state.last_decision else None,
                    "new_version": None,
                    "question": None,
                    "answer": None,
                    "text_hash": current.text_hash,
                    "source": current.source,
                    "role": role,
                    "overrules_judge": False,
                    "batch": undo,
                    "reverts": r["id"],
                }
                self._apply(conn, rec, current)
                report.recorded += 1
        return report

    def batches(self) -> list[dict[str, Any]]:
        """Every bulk batch, newest first: id, decision, reviewer, size, time, undone by."""
        with self._read() as conn:
            rows = conn.execute(
                "SELECT batch, min(decision) AS decision, min(reviewer) AS reviewer, "
                "count(*) AS n, min(decided_at) AS at, max(id) AS last FROM decisions "
                "WHERE batch IS NOT NULL GROUP BY batch ORDER BY last DESC"
            ).fetchall()
            undone = {
                r[0]: r[1]
                for r in conn.execute(
                    "SELECT o.batch, u.batch FROM decisions u JOIN decisions o ON o.id = u.reverts "
                    "WHERE u.decision = 'reverted' GROUP BY o.batch"
                )
            }
        return [
            {
                "batch": r["batch"],
                "decision": r["decision"],
                "reviewer": r["reviewer"],
                "n": r["n"],
                "at": r["at"],
                "undone_by": undone.get(r["batch"]),
            }
            for r in rows
        ]

    # -- replaying an exported log (rebuild) -------------------------------------------

    def replay(self, rec: Mapping[str, Any]) -> Decision:
        """Write one exported decision record as it was (same id, time, reviewer), on
        the item's current version, which must be the version and text it names."""
        with self._write() as conn:
            state = self._state(conn, rec["benchmark"], rec["candidate"])
            where = f"decision #{rec['decision_id']} on {rec['benchmark']}/{rec['candidate']}"
            if state.version != rec["version"]:
                raise ReviewError(
                    f"{where} was made on version {rec['version']}, but the candidate tables "
                    f"give version {state.version} at that point: they no longer hold the "
                    "text that was reviewed"
                )
            current = _version(
                conn.execute(
                    "SELECT * FROM versions WHERE benchmark = ? AND candidate = ? AND version = ?",
                    (state.benchmark, state.candidate, state.version),
                ).fetchone()
            )
            if current.text_hash != rec["text_hash"]:
                raise ReviewError(
                    f"{where}: version {state.version} in the candidate tables has other "
                    "text than the reviewer saw (text_hash differs)"
                )
            return self._apply(conn, rec, current, decision_id=int(rec["decision_id"]))


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
