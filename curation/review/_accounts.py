"""Reviewer accounts: a small YAML file of names, roles and sha256 token hashes.

    reviewers:
      - {name: alice, role: reviewer, token_sha256: 3f5a...}
      - {name: carol, role: adjudicator, token_sha256: 9bc1...}

Only hashes are stored: ``curate review add-reviewer NAME`` prints the new token once.
Tokens are 32 random bytes, so a plain sha256 is enough (nothing to brute-force).
On a non-local server each request is authenticated by its reviewer's token, and the
name and role come from the account; on 127.0.0.1 the name cookie names the reviewer,
and a name listed here takes its role.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml

from curation.errors import ConfigError
from curation.io.atomic import write_text
from curation.review._store import MAX_REVIEWER, ROLES


@dataclass(frozen=True)
class Account:
    name: str
    role: str = "reviewer"
    token_sha256: str = ""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Accounts:
    """The accounts of one users file (empty when there is none).

    Read from a file (:func:`load_accounts`), the accounts follow it: every question
    first checks the file's size and modification time and reads it again when it
    changed, so ``curate review add-reviewer --rotate`` and ``remove-reviewer`` take
    effect on a running server at its next request (a file that no longer parses keeps
    the last good accounts: add-reviewer writes it atomically, so only a hand edit can).
    """

    def __init__(self, accounts: list[Account] | None = None, *, path: Path | None = None):
        self._accounts = list(accounts or [])
        self._path = path
        self._stamp = _stamp(path) if path is not None else None

    def _current(self) -> list[Account]:
        if self._path is not None:
            stamp = _stamp(self._path)
            if stamp != self._stamp:
                try:
                    self._accounts = _read_accounts(self._path)
                except ConfigError:
                    pass  # keep the last good accounts; the file is mid-edit by hand
                else:
                    self._stamp = stamp
        return self._accounts

    @property
    def accounts(self) -> list[Account]:
        return list(self._current())

    def __bool__(self) -> bool:
        return bool(self._current())

    def by_token(self, token: str | None) -> Account | None:
        if not token:
            return None
        digest = token_hash(token)
        found = None
        for a in self._current():  # compare with every account: no timing hint
            if a.token_sha256 and hmac.compare_digest(a.token_sha256, digest):
                found = a
        return found

    def role_of(self, name: str | None) -> str:
        for a in self._current():
            if a.name == name:
                return a.role
        return "reviewer"

    def named(self, name: str | None) -> Account | None:
        """The account called ``name`` (None: no such account)."""
        return next((a for a in self._current() if a.name == name), None)


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def load_accounts(path: str | Path | None) -> Accounts:
    """The accounts of a users file, kept in step with it (a missing file: none yet)."""
    if path is None:
        return Accounts()
    path = Path(path)
    return Accounts(_read_accounts(path), path=path)


def _read_accounts(path: Path) -> list[Account]:
    if not path.is_file():
        return []
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    rows = data.get("reviewers") if isinstance(data, dict) else None
    if not isinstance(rows, list):
        raise ConfigError(f"{path}: expected `reviewers:` with a list of accounts")
    out, names = [], set()
    for n, row in enumerate(rows, start=1):
        where = f"{path}: reviewers[{n}]"
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise ConfigError(f"{where}: expected a mapping with name, role, token_sha256")
        name = " ".join(row["name"].split())
        role = row.get("role", "reviewer")
        digest = str(row.get("token_sha256") or "")
        if not name or len(name) > MAX_REVIEWER or name in names:
            raise ConfigError(f"{where}.name: empty, too long or repeated")
        if role not in ROLES:
            raise ConfigError(f"{where}.role: expected one of {', '.join(ROLES)}")
        if len(digest) != 64 or any(ch not in "0123456789abcdef" for ch in digest):
            raise ConfigError(f"{where}.token_sha256: expected 64 lowercase hex digits")
        names.add(name)
        out.append(Account(name=name, role=role, token_sha256=digest))
    return out


def _write_accounts(path: Path, accounts: list[Account]) -> None:
    data = {"reviewers": [a.__dict__ for a in accounts]}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, yaml.safe_dump(data, sort_keys=False))


def add_account(
    path: str | Path, name: str, *, role: str | None = None, rotate: bool = False
) -> str:
    """Add ``name`` to the users file, or (``rotate``) give its account a new token, which
    revokes the old one; return the new token. ``role`` None keeps an account's role
    (a new account: reviewer)."""
    if role is not None and role not in ROLES:
        raise ConfigError(f"role: expected one of {', '.join(ROLES)}")
    name = " ".join(name.split())
    if not name or len(name) > MAX_REVIEWER:
        raise ConfigError(f"a reviewer name has 1 to {MAX_REVIEWER} characters")
    path = Path(path)
    accounts = _read_accounts(path)
    old = next((a for a in accounts if a.name == name), None)
    if old is not None and not rotate:
        raise ConfigError(
            f"{path}: {name} already has an account; pass --rotate to issue a new token "
            "(the old one stops working at once)"
        )
    if old is None and rotate:
        raise ConfigError(f"{path}: no account {name!r} to rotate; add it without --rotate")
    token = secrets.token_urlsafe(32)
    role = role or (old.role if old is not None else "reviewer")
    new = Account(name=name, role=role, token_sha256=token_hash(token))
    _write_accounts(path, [new if a.name == name else a for a in accounts] + ([] if old else [new]))
    return token


def remove_account(path: str | Path, name: str) -> Account:
    """Remove ``name``'s account (its token stops working at once); returns it."""
    path = Path(path)
    accounts = _read_accounts(path)
    gone = next((a for a in accounts if a.name == " ".join(name.split())), None)
    if gone is None:
        known = ", ".join(a.name for a in accounts) or "none"
        raise ConfigError(f"{path}: no account {name!r} (accounts: {known})")
    _write_accounts(path, [a for a in accounts if a is not gone])
    return gone
