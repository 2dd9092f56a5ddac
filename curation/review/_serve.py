"""Running the review app: the bind rule (a non-local address needs a token) and a
uvicorn server on a socket we bind ourselves (port 0 = any free port)."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from pathlib import Path
from urllib.parse import quote

import uvicorn

from curation.errors import ConfigError
from curation.review._accounts import Accounts
from curation.review._settings import TOKEN_ENV
from curation.review._store import ReviewStore
from curation.review._web import LOOPBACK_NAMES, create_app

MIN_TOKEN = 16
TOKEN_PLACEHOLDER = "YOUR-REVIEWER-TOKEN"
"""What the printed link holds where each reviewer's own token goes (one word: it stays a link)."""


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and ``localhost``; everything else (0.0.0.0 too) is non-local."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, *, accounts: bool = False) -> None:
    """Refuse a non-local bind without an access token (or reviewer accounts), and a
    token too short to guess."""
    if token is not None and len(token) < MIN_TOKEN:
        raise ConfigError(
            f"review token: use at least {MIN_TOKEN} characters, e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(24))'`"
        )
    if not is_loopback(host) and not token and not accounts:
        raise ConfigError(
            f"refusing to serve the review queue on {host}: a non-local address needs an "
            f"access token. Pass --token TOKEN (or set {TOKEN_ENV}); make one with "
            "`python -c 'import secrets; print(secrets.token_urlsafe(24))'`, or serve on "
            "127.0.0.1"
        )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    try:
        sock = socket.create_server((host.strip("[]"), port), family=family, reuse_port=False)
    except OSError as exc:
        raise ConfigError(f"cannot listen on {host}:{port}: {exc}") from None
    return sock


class ReviewServer:
    """The review app served by uvicorn in a background thread (tests, notebooks).

    >>> with ReviewServer(store) as server:  # doctest: +SKIP
    ...     print(server.url)
    """

    def __init__(
        self,
        store: ReviewStore,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        default_reviewer: str | None = None,
        public: bool | None = None,
        accounts: Accounts | None = None,
        guidelines: Path | None = None,
    ) -> None:
        """``public`` treats the server as reachable from other machines (token required,
        any Host header) even on 127.0.0.1; default: ``not is_loopback(host)``."""
        public = (not is_loopback(host)) if public is None else public
        check_bind("0.0.0.0" if public else host, token, accounts=bool(accounts))
        self.host, self.token = host, token
        self.app = create_app(
            store,
            token=token,
            allowed_hosts=None if public else LOOPBACK_NAMES,
            default_reviewer=default_reviewer,
            accounts=accounts,
            guidelines=guidelines,
        )
        self._sock = _bind(host, port)
        self.port = self._sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 20.0) -> ReviewServer:
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the review server did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._sock.close()

    def __enter__(self) -> ReviewServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


ANY_ADDRESS = ("0.0.0.0", "::", "")
"""Bind addresses that mean "every interface": nobody can open a URL with them."""


def open_url(host: str, port: int, *, token: str | None = None, ask_token: bool = False) -> str:
    """The address to share: bound to every interface, this machine's name (what the
    other reviewers can reach), not 0.0.0.0."""
    if host in ANY_ADDRESS:
        host = socket.gethostname() or "127.0.0.1"
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    if token:
        url += f"?token={quote(token, safe='')}"
    elif ask_token:
        url += f"?token={TOKEN_PLACEHOLDER}"
    return url


def serve(
    store: ReviewStore,
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    token: str | None = None,
    default_reviewer: str | None = None,
    accounts: Accounts | None = None,
    guidelines: Path | None = None,
) -> None:
    """Serve the review page until Ctrl+C (blocking). Prints the address to open."""
    check_bind(host, token, accounts=bool(accounts))
    public = not is_loopback(host)
    app = create_app(
        store,
        token=token,
        allowed_hosts=None if public else LOOPBACK_NAMES,
        default_reviewer=default_reviewer,
        accounts=accounts,
        guidelines=guidelines,
    )
    sock = _bind(host, port)
    url = open_url(host, sock.getsockname()[1], token=token, ask_token=bool(accounts and public))
    print(f"review queue: {store.path}\nopen {url}", flush=True)
    if TOKEN_PLACEHOLDER in url:
        print(
            f"(each reviewer puts their own token, from `curate review add-reviewer`, in "
            f"place of {TOKEN_PLACEHOLDER})",
            flush=True,
        )
    print("(Ctrl+C to stop)", flush=True)
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    try:
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
