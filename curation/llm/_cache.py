"""The completion cache: SQLite in WAL mode, content-addressed by request hash.

Why SQLite/WAL: a row is one committed transaction, so a ``kill -9`` at any moment
leaves either the whole answer or nothing (no torn files), and committed rows
survive the process (WAL makes the commit durable against a crash of the process;
``synchronous=NORMAL`` trades only power-loss durability for speed). Several
processes may share the file: SQLite serialises writers and ``busy_timeout`` makes
them wait instead of failing.

Within a process one connection is shared by all threads behind a lock ("one
writer connection"), which keeps SQLite's locking simple and fast.

``put_many`` stores a batch in one transaction: the collection client commits
the answers that arrived in the same event-loop turn together (at 64 concurrent
calls they arrive in waves), which costs less than half the CPU and disk time
of one commit per answer, and an answer counts as stored only once its batch
has committed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from curation.llm._types import ChatRequest, Completion

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    namespace TEXT NOT NULL,
    model_id TEXT NOT NULL,
    request TEXT NOT NULL,
    completion TEXT NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID
"""
_CHUNK = 500
_INSERT = "INSERT OR IGNORE INTO completions VALUES (?, ?, ?, ?, ?, ?)"


def _request_json(request: ChatRequest) -> str:
    """What was asked, stored beside the answer (for audits; not used for lookup)."""
    return json.dumps(
        {
            "model_id": request.model_id,
            "messages": [[m.role, m.content] for m in request.messages],
            "sampling": request.sampling.as_dict(),
            "sample": request.sample,
        },
        ensure_ascii=False,
        sort_keys=True,
    )


class CompletionCache:
    """Content-addressed store of completions; ``put`` commits immediately."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(
            self.path,
            timeout=busy_timeout_s,
            isolation_level=None,  # autocommit: every put is its own committed transaction
            check_same_thread=False,
        )
        with self._lock:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute(_SCHEMA)

    # ---- reads -----------------------------------------------------------------------------

    def get(self, key: str) -> Completion | None:
        with self._lock:
            row = self._conn.execute(
                "SELECT completion FROM completions WHERE key = ?", (key,)
            ).fetchone()
        return Completion.from_json(row[0]) if row else None

    def get_many(self, keys: Iterable[str]) -> dict[str, Completion]:
        """The cached completions among ``keys`` (one query per 500 keys)."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, Completion] = {}
        with self._lock:
            for i in range(0, len(keys), _CHUNK):
                chunk = keys[i : i + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._conn.execute(
                    f"SELECT key, completion FROM completions WHERE key IN ({marks})", chunk
                ).fetchall()
                for key, text in rows:
                    found[key] = Completion.from_json(text)
        return found

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM completions WHERE key = ?", (key,)).fetchone()
        return row is not None

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def keys(self) -> Iterator[str]:
        with self._lock:
            rows = self._conn.execute("SELECT key FROM completions").fetchall()
        return iter(r[0] for r in rows)

    # ---- writes ----------------------------------------------------------------------------

    def put(
        self, key: str, request: ChatRequest, completion: Completion, *, namespace: str
    ) -> None:
        """Store one completion (committed on return). An existing row is kept as is."""
        self.put_many([(key, request, completion)], namespace=namespace)

    def put_many(
        self, rows: Sequence[tuple[str, ChatRequest, Completion]], *, namespace: str
    ) -> None:
        """Store completions in one transaction (all committed on return, or none).

        Existing rows are kept as they are.
        """
        if not rows:
            return
        now = time.time()
        values = [
            (key, namespace, request.model_id, _request_json(request), completion.to_json(), now)
            for key, request, completion in rows
        ]
        with self._lock:
            if len(values) == 1:
                self._conn.execute(_INSERT, values[0])  # autocommit: its own transaction
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                self._conn.executemany(_INSERT, values)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> CompletionCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
