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
    """The accounts of one users file (empty when there is none)."""

    def __init__(self, accounts: list[Account] | None = None) -> None:
        self.accounts = list(accounts or [])

    def __bool__(self) -> bool:
        return bool(self.accounts)

    def by_token(self, token: str | None) -> Account | None:
        if not token:
            return None
        digest = token_hash(token)
        found = None
        for a in self.accounts:  # compare with every account: no timing hint
            if a.token_sha256 and hmac.compare_digest(a.token_sha256, digest):
                found = a
        return found

    def role_of(self, name: str | None) -> str:
        for a in self.accounts:
            if a.name == name:
                return a.role
        return "reviewer"


def load_accounts(path: str | Path | None) -> Accounts:
    """Read a users file; a missing path or file is no accounts."""
    if path is None or not Path(path).is_file():
        return Accounts()
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
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
    return Accounts(out)


def add_account(path: str | Path, name: str, *, role: str = "reviewer") -> str:
    """Add (or give a new token to) ``name`` in the users file; return the new token."""
    if role not in ROLES:
        raise ConfigError(f"role: expected one of {', '.join(ROLES)}")
    name = " ".join(name.split())
    if not name or len(name) > MAX_REVIEWER:
        raise ConfigError(f"a reviewer name has 1 to {MAX_REVIEWER} characters")
    accounts = [a for a in load_accounts(path).accounts if a.name != name]
    token = secrets.token_urlsafe(32)
    accounts.append(Account(name=name, role=role, token_sha256=token_hash(token)))
    data = {"reviewers": [a.__dict__ for a in accounts]}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_text(Path(path), yaml.safe_dump(data, sort_keys=False))
    return token
