"""The review web page: FastAPI + Jinja2, server-rendered, htmx and KaTeX vendored.

Security, in order of the checks every request passes:

1. Host header: when bound to a loopback address only loopback names are accepted
   (a DNS-rebinding page cannot reach the server under its own name).
2. Access token (required when bound to a non-local address): ``?token=`` once (it is
   then kept in an HttpOnly, SameSite=Strict cookie and dropped from the URL), or the
   ``Authorization: Bearer`` / ``X-Review-Token`` header.
3. Session cookie with a per-session CSRF token, checked on every POST (form field
   ``csrf`` or header ``X-CSRF-Token``).
4. Item text is only ever rendered through Jinja autoescape (no ``|safe`` on item
   text), and a Content-Security-Policy allows scripts from this server only.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.staticfiles import StaticFiles

from curation.review._store import (
    DECISIONS,
    MAX_REVIEWER,
    STATUSES,
    VERDICTS,
    DecisionConflict,
    ItemNotFound,
    ReviewError,
    ReviewStore,
    Version,
)
from curation.review._text import (
    DifficultyBar,
    diff_stats,
    panel_rows,
    pretty_json,
    segments,
    word_diff,
)

HERE = Path(__file__).resolve().parent
SESSION_COOKIE = "review_session"
TOKEN_COOKIE = "review_token"
MAX_SESSIONS = 5000
PAGE_SIZE = 200
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "font-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "
    "base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}


@dataclass
class Session:
    """One browser: its CSRF token, reviewer name and one pending message."""

    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    reviewer: str | None = None
    flash: tuple[str, str] | None = None
    seen: float = field(default_factory=time.monotonic)

    def pop_flash(self) -> tuple[str, str] | None:
        flash, self.flash = self.flash, None
        return flash


class Sessions:
    """In-memory sessions (a restart asks reviewers to reload; decisions are in the DB)."""

    def __init__(self, default_reviewer: str | None = None) -> None:
        self._data: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()
        self._default = default_reviewer

    def get(self, sid: str | None) -> Session | None:
        if not sid:
            return None
        with self._lock:
            sess = self._data.get(sid)
            if sess is not None:
                self._data.move_to_end(sid)
                sess.seen = time.monotonic()
            return sess

    def new(self) -> tuple[str, Session]:
        sid = secrets.token_urlsafe(32)
        sess = Session(reviewer=self._default)
        with self._lock:
            self._data[sid] = sess
            while len(self._data) > MAX_SESSIONS:
                self._data.popitem(last=False)
        return sid, sess


def _host_name(host_header: str) -> str:
    host = host_header.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _same(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode("utf-8"), b.encode("utf-8"))


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda v, d=3: "–" if v is None else f"{float(v):.{d}f}"
    env.globals["item_url"] = lambda b, c: (
        f"/item/{quote(str(b), safe='')}/{quote(str(c), safe='')}"
    )
    return env


def _opt_int(value: Any) -> int | None:
    text = str(value or "").strip()
    return int(text) if text else None


def create_app(
    store: ReviewStore,
    *,
    token: str | None = None,
    allowed_hosts: Sequence[str] | None = LOOPBACK_NAMES,
    default_reviewer: str | None = None,
) -> FastAPI:
    """The review app over ``store``.

    ``token``: when set, every request must present it. ``allowed_hosts``: Host header
    names accepted (None = any; use with a token when bound to a non-local address).
    ``default_reviewer`` names the reviewer of new sessions (single-user servers).
    """
    env = _environment()
    sessions = Sessions(default_reviewer)
    app = FastAPI(title="benchcurate review", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.store = store
    app.state.sessions = sessions
    allowed = {h.lower() for h in allowed_hosts} if allowed_hosts is not None else None

    def _plain(status: int, text: str) -> Response:
        resp = PlainTextResponse(text, status_code=status)
        resp.headers.update(_HEADERS)
        return resp

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Response:
        if allowed is not None and _host_name(request.headers.get("host", "")) not in allowed:
            return _plain(400, "unexpected Host header: open the review page at 127.0.0.1")
        set_token = False
        if token is not None:
            auth = request.headers.get("authorization", "")
            presented = [
                auth[7:].strip() if auth.lower().startswith("bearer ") else None,
                request.headers.get("x-review-token"),
                request.cookies.get(TOKEN_COOKIE),
            ]
            query_token = request.query_params.get("token")
            if not any(_same(p, token) for p in presented):
                if request.method == "GET" and _same(query_token, token):
                    set_token = True
                else:
                    return _plain(
                        401,
                        "this review server needs its access token: open the link printed "
                        "by `curate review serve` (…/?token=…) or send the header "
                        "'Authorization: Bearer <token>'",
                    )
            if set_token or query_token is not None:
                # keep the token out of the address bar, history and logs
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
                resp = RedirectResponse(target, status_code=303)
                resp.headers.update(_HEADERS)
                if set_token:
                    resp.set_cookie(TOKEN_COOKIE, token, httponly=True, samesite="strict")
                return resp
        sid = request.cookies.get(SESSION_COOKIE)
        sess = sessions.get(sid)
        new_sid = None
        if sess is None:
            if request.method not in ("GET", "HEAD"):
                return _plain(403, "no session (or it expired): reload the page and try again")
            new_sid, sess = sessions.new()
        request.state.session = sess
        response = await call_next(request)
        response.headers.update(_HEADERS)
        if not request.url.path.startswith("/static/"):
            response.headers["Cache-Control"] = "no-store"
        if new_sid is not None:
            response.set_cookie(SESSION_COOKIE, new_sid, httponly=True, samesite="strict")
        return response

    def render(request: Request, name: str, *, status: int = 200, **ctx: Any) -> HTMLResponse:
        sess: Session = request.state.session
        ctx.setdefault("error", None)
        html = env.get_template(name).render(
            csrf=sess.csrf,
            reviewer=sess.reviewer,
            flash=sess.pop_flash(),
            path=request.url.path,
            **ctx,
        )
        return HTMLResponse(html, status_code=status)

    async def form_with_csrf(request: Request) -> Any:
        form = await request.form()
        sess: Session = request.state.session
        presented = form.get("csrf") or request.headers.get("x-csrf-token")
        if not _same(str(presented) if presented is not None else None, sess.csrf):
            return None
        return form

    @app.get("/healthz")
    def healthz() -> PlainTextResponse:
        return PlainTextResponse("ok")

    @app.get("/", response_class=HTMLResponse)
    def queue(
        request: Request,
        benchmark: str = "",
        status: str = "",
        verdict: str = "",
        source: str = "",
        page: int = 1,
    ) -> HTMLResponse:
        benchmarks = store.benchmarks()
        filters = {
            "benchmark": benchmark if benchmark in benchmarks else "",
            "status": status if status in STATUSES else "",
            "verdict": verdict if verdict in VERDICTS else "",
            "source": source if source in ("collected", "simulated") else "",
        }
        page = max(1, page)
        rows, total = store.queue(
            **{k: v or None for k, v in filters.items()},
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
        )
        query = {k: v for k, v in filters.items() if v}
        return render(
            request,
            "queue.html",
            rows=rows,
            total=total,
            page=page,
            pages=max(1, -(-total // PAGE_SIZE)),
            filters=filters,
            query=urlencode(query),
            benchmarks=benchmarks,
            statuses=STATUSES,
            verdicts=VERDICTS,
            counts=store.counts(),
        )

    def item_page(
        request: Request,
        benchmark: str,
        candidate: str,
        *,
        status: int = 200,
        error: str | None = None,
        draft: dict[str, Any] | None = None,
    ) -> HTMLResponse:
        view = store.item(benchmark, candidate)
        cur = view.current
        parent_q, cand_q = word_diff(cur.parent_question, cur.question)
        parent_a, cand_a = word_diff(cur.parent_answer, cur.answer)
        has_parent = cur.parent_question is not None
        judged = _judged_version(view.versions, cur)
        rec = cur.record
        measured = cur if cur.measured else _measured_version(view.versions, cur)
        panel, panel_problem = panel_rows((measured or cur).record.get("panel"))
        mrec = measured.record if measured else {}
        nxt = store.next_item(benchmark, candidate)
        return render(
            request,
            "item.html",
            status=status,
            error=error,
            draft=draft or {},
            view=view,
            state=view.state,
            cur=cur,
            rec=rec,
            has_parent=has_parent,
            parent_q=parent_q if has_parent else [],
            cand_q=cand_q if has_parent else segments(cur.question),
            parent_a=parent_a if has_parent else [],
            cand_a=cand_a if has_parent else segments(cur.answer),
            diff_counts=diff_stats(parent_q + parent_a, cand_q + cand_a) if has_parent else None,
            judged=judged,
            reason=segments((judged.record.get("judge_reason") if judged else None) or ""),
            panel=panel,
            panel_problem=panel_problem,
            measured=measured,
            bar=DifficultyBar(
                target=rec.get("target_z"),
                z=mrec.get("z"),
                low=mrec.get("z_low"),
                high=mrec.get("z_high"),
            ),
            lineage=pretty_json(rec.get("lineage")),
            next_item=nxt,
            decisions=DECISIONS,
        )

    @app.get("/item/{benchmark}/{candidate:path}", response_class=HTMLResponse)
    def item(request: Request, benchmark: str, candidate: str) -> HTMLResponse:
        try:
            return item_page(request, benchmark, candidate)
        except ItemNotFound as exc:
            return render(request, "message.html", status=404, title="Not found", message=str(exc))

    @app.post("/reviewer")
    async def set_reviewer(request: Request) -> Response:
        form = await form_with_csrf(request)
        if form is None:
            return _plain(403, "CSRF check failed: reload the page and try again")
        name = " ".join(str(form.get("reviewer") or "").split())
        sess: Session = request.state.session
        if not name or len(name) > MAX_REVIEWER:
            sess.flash = ("error", f"a reviewer name has 1 to {MAX_REVIEWER} characters")
        else:
            sess.reviewer = name
            sess.flash = ("ok", f"reviewing as {name}")
        nxt = str(form.get("next") or "/")
        if not nxt.startswith("/") or nxt.startswith("//"):
            nxt = "/"
        return RedirectResponse(nxt, status_code=303)

    @app.post("/decide")
    async def decide(request: Request) -> Response:
        form = await form_with_csrf(request)
        if form is None:
            return _plain(403, "CSRF check failed: reload the page and try again")
        sess: Session = request.state.session
        benchmark = str(form.get("benchmark") or "")
        candidate = str(form.get("candidate") or "")
        decision = str(form.get("decision") or "")
        draft = {
            "decision": decision,
            "comment": str(form.get("comment") or ""),
            "question": form.get("question"),
            "answer": form.get("answer"),
        }
        try:
            version = int(str(form.get("version") or ""))
            supersedes = _opt_int(form.get("supersedes"))
        except ValueError:
            return _plain(400, "version and supersedes must be integers")
        try:
            saved = await run_in_threadpool(
                store.decide,
                benchmark,
                candidate,
                decision=decision,
                reviewer=sess.reviewer or "",
                version=version,
                supersedes=supersedes,
                comment=draft["comment"],
                question=str(draft["question"]) if draft["question"] is not None else None,
                answer=str(draft["answer"]) if draft["answer"] is not None else None,
            )
        except ItemNotFound as exc:
            return render(request, "message.html", status=404, title="Not found", message=str(exc))
        except (DecisionConflict, ReviewError) as exc:
            prefix = "Conflict — " if isinstance(exc, DecisionConflict) else "Not recorded — "
            return await run_in_threadpool(
                item_page,
                request,
                benchmark,
                candidate,
                status=exc.http_status,
                error=prefix + str(exc),
                draft=draft,
            )
        text = f"Recorded decision #{saved.id}: {saved.decision} on version {saved.version}"
        if saved.new_version:
            text += f"; version {saved.new_version} goes back to calibration"
        sess.flash = ("ok", text + ".")
        url = f"/item/{quote(benchmark, safe='')}/{quote(candidate, safe='')}"
        return RedirectResponse(url, status_code=303)

    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    return app


def _judged_version(versions: list[Version], cur: Version) -> Version | None:
    """The latest version up to ``cur`` that carries a judge verdict."""
    for v in reversed([v for v in versions if v.version <= cur.version]):
        if v.judge != "unjudged" or v.record.get("judge_reason"):
            return v
    return None


def _measured_version(versions: list[Version], cur: Version) -> Version | None:
    """The latest version up to ``cur`` with a measured z (shown for an edited version)."""
    for v in reversed([v for v in versions if v.version <= cur.version]):
        if v.measured:
            return v
    return None
