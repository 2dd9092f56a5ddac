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
from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.staticfiles import StaticFiles

from curation.review._accounts import Accounts
from curation.review._agreement import agreement
from curation.review._store import (
    DECISIONS,
    MAX_REVIEWER,
    SORTS,
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
PANEL_OPEN = 12
"""Panels with more models than this start collapsed to a summary line."""
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
    account: str | None = None
    """Set when a reviewer token authenticated this browser: the name is locked."""
    flash: tuple[str, str] | None = None
    seen: float = field(default_factory=time.monotonic)
    trail: list[tuple[str, str]] = field(default_factory=list)
    """Item pages this browser opened, oldest first (the last 50): `p` goes back."""

    def visit(self, benchmark: str, candidate: str) -> tuple[str, str] | None:
        """Record an item page visit; the item opened before it (for `p`), if any."""
        key = (benchmark, candidate)
        if not self.trail or self.trail[-1] != key:
            self.trail = [*self.trail[-49:], key]
        return next((k for k in reversed(self.trail[:-1]) if k != key), None)

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
    accounts: Accounts | None = None,
    guidelines: Path | None = None,
) -> FastAPI:
    """The review app over ``store``.

    ``token``: when set, every request must present it. ``allowed_hosts``: Host header
    names accepted (None = any; use with a token when bound to a non-local address).
    ``default_reviewer`` names the reviewer of new sessions (single-user servers).
    """
    env = _environment()
    accounts = accounts or Accounts()
    guidelines_html = _guidelines(guidelines)
    need_auth = token is not None or (bool(accounts) and allowed_hosts is None)
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
        account = None
        if need_auth:
            auth = request.headers.get("authorization", "")
            presented = [
                auth[7:].strip() if auth.lower().startswith("bearer ") else None,
                request.headers.get("x-review-token"),
                request.cookies.get(TOKEN_COOKIE),
            ]
            query_token = request.query_params.get("token")

            def valid(p: str | None) -> bool:
                # the shared --token and every account's own token (the users file is
                # read again when it changes: a rotated or removed token fails at once)
                return (token is not None and _same(p, token)) or (accounts.by_token(p) is not None)

            good = next((p for p in presented if valid(p)), None)
            if good is not None:
                account = accounts.by_token(good)
            else:
                if request.method == "GET" and valid(query_token):
                    set_token = True
                else:
                    return _plain(
                        401,
                        "this review server needs your access token: open the link printed "
                        "by `curate review serve` (…/?token=…) with your reviewer token, or "
                        "send the header 'Authorization: Bearer <token>'",
                    )
            if set_token or query_token is not None:
                # keep the token out of the address bar, history and logs
                rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
                target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
                resp = RedirectResponse(target, status_code=303)
                resp.headers.update(_HEADERS)
                if set_token and query_token is not None:
                    resp.set_cookie(TOKEN_COOKIE, query_token, httponly=True, samesite="strict")
                return resp
        sid = request.cookies.get(SESSION_COOKIE)
        sess = sessions.get(sid)
        new_sid = None
        if sess is None:
            if request.method not in ("GET", "HEAD"):
                return _plain(403, "no session (or it expired): reload the page and try again")
            new_sid, sess = sessions.new()
        if account is not None:  # the token names the reviewer, whatever the session says
            sess.reviewer = sess.account = account.name
        elif need_auth and sess.account is not None:  # signed in by a token no longer shown
            sess.reviewer = sess.account = None
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
            locked=sess.account is not None,
            role=role_of(sess),
            has_guidelines=guidelines_html is not None,
            flash=sess.pop_flash(),
            path=request.url.path,
            progress=store.progress(sess.reviewer) if sess.reviewer else None,
            **ctx,
        )
        return HTMLResponse(html, status_code=status)

    def role_of(sess: Session) -> str:
        if sess.account is not None:
            return accounts.role_of(sess.account)
        # a shared token names nobody: its sessions review, whatever name they type; on
        # 127.0.0.1 without tokens the name typed takes its account's role (local trust)
        return "reviewer" if need_auth else accounts.role_of(sess.reviewer)

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

    def _filters(query: Any, sess: Session) -> tuple[dict[str, str], dict[str, Any]]:
        """The queue's filter values (as shown) and the store's keyword arguments, from the
        request's query string or form."""
        benchmarks = store.benchmarks()
        methods, rounds = store.methods_rounds()

        def get(k: str) -> str:
            return str(query.get(k) or "").strip()

        shown = {
            "benchmark": get("benchmark") if get("benchmark") in benchmarks else "",
            "status": get("status") if get("status") in STATUSES else "",
            "verdict": get("verdict") if get("verdict") in VERDICTS else "",
            "source": get("source") if get("source") in ("collected", "simulated") else "",
            "q": get("q")[:200],
            "method": get("method") if get("method") in methods else "",
            "round": get("round") if get("round") in {str(r) for r in rounds} else "",
            "selected": get("selected") if get("selected") in ("yes", "no") else "",
            "reviewer": get("reviewer")[:MAX_REVIEWER],
            "mine": "1" if get("mine") == "1" else "",
            "maxdist": get("maxdist") if _float(get("maxdist")) is not None else "",
            "sort": get("sort") if get("sort") in SORTS else "",
            "desc": "1" if get("desc") == "1" else "",
        }
        kw: dict[str, Any] = {
            "benchmark": shown["benchmark"] or None,
            "status": shown["status"] or None,
            "verdict": shown["verdict"] or None,
            "source": shown["source"] or None,
            "search": shown["q"] or None,
            "method": shown["method"] or None,
            "round": int(shown["round"]) if shown["round"] else None,
            "selected": {"yes": True, "no": False}.get(shown["selected"]),
            "reviewer": shown["reviewer"] or None,
            "needs": (sess.reviewer or "") if shown["mine"] else None,
            "max_distance": _float(shown["maxdist"]),
        }
        return shown, kw

    @app.get("/", response_class=HTMLResponse)
    def queue(request: Request, page: int = 1) -> HTMLResponse:
        sess: Session = request.state.session
        filters, kw = _filters(request.query_params, sess)
        page = max(1, page)
        rows, total = store.queue(
            **kw,
            sort=filters["sort"] or "priority",
            descending=bool(filters["desc"]),
            limit=PAGE_SIZE,
            offset=(page - 1) * PAGE_SIZE,
        )
        query = {k: v for k, v in filters.items() if v}
        methods, rounds = store.methods_rounds()
        pairs, groups = agreement(store.decisions())

        def sort_url(col: str) -> str:
            q = {k: v for k, v in query.items() if k not in ("sort", "desc")}
            q["sort"] = col
            if filters["sort"] == col and not filters["desc"]:
                q["desc"] = "1"
            return "/?" + urlencode(q)

        return render(
            request,
            "queue.html",
            rows=rows,
            total=total,
            page=page,
            pages=max(1, -(-total // PAGE_SIZE)),
            filters=filters,
            query=urlencode(query),
            sort_url=sort_url,
            benchmarks=store.benchmarks(),
            methods=methods,
            rounds=rounds,
            statuses=STATUSES,
            verdicts=VERDICTS,
            counts=store.counts(),
            batches=store.batches()[:10],
            pairs=pairs,
            groups=groups,
        )

    @app.get("/guidelines", response_class=HTMLResponse)
    def guidelines_page(request: Request) -> HTMLResponse:
        return render(request, "guidelines.html", guidelines=guidelines_html)

    @app.post("/bulk")
    async def bulk(request: Request) -> Response:
        form = await form_with_csrf(request)
        if form is None:
            return _plain(403, "CSRF check failed: reload the page and try again")
        sess: Session = request.state.session
        decision = str(form.get("decision") or "")
        filters, kw = _filters(form, sess)
        keys = await run_in_threadpool(store.queue_keys, **kw)
        query = urlencode({k: v for k, v in filters.items() if v})
        if decision not in ("accepted", "rejected"):
            return _plain(400, "bulk decision must be accepted or rejected")
        if not sess.reviewer:
            sess.flash = ("error", "set your reviewer name before a bulk action")
            return RedirectResponse("/?" + query, status_code=303)
        expected = _opt_int(form.get("count"))
        if str(form.get("confirm") or "") != "yes" or expected != len(keys):
            return render(
                request,
                "confirm.html",
                decision=decision,
                n=len(keys),
                filters=filters,
                query=query,
                comment=str(form.get("comment") or ""),
                changed=expected is not None and expected != len(keys),
            )
        try:
            report = await run_in_threadpool(
                store.decide_many,
                keys,
                decision=decision,
                reviewer=sess.reviewer,
                comment=str(form.get("comment") or ""),
                role=role_of(sess),
            )
        except ReviewError as exc:
            sess.flash = ("error", f"Not recorded — {exc}")
            return RedirectResponse("/?" + query, status_code=303)
        text = str(report) + "."
        if report.skipped:
            why = sorted({w for _b, _c, w in report.skipped})
            text += " Skipped: " + "; ".join(why[:3])
        sess.flash = ("ok", text)
        return RedirectResponse("/?" + query, status_code=303)

    @app.post("/undo")
    async def undo(request: Request) -> Response:
        form = await form_with_csrf(request)
        if form is None:
            return _plain(403, "CSRF check failed: reload the page and try again")
        sess: Session = request.state.session
        if not sess.reviewer:
            sess.flash = ("error", "set your reviewer name before undoing a batch")
            return RedirectResponse("/", status_code=303)
        try:
            report = await run_in_threadpool(
                store.undo_batch,
                str(form.get("batch") or ""),
                reviewer=sess.reviewer,
                role=role_of(sess),
            )
        except ReviewError as exc:
            sess.flash = ("error", f"Not undone — {exc}")
        else:
            sess.flash = ("ok", str(report) + ".")
        return RedirectResponse("/", status_code=303)

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
        rates = [p.rate for p in panel if p.rate is not None]
        mrec = measured.record if measured else {}
        nxt = store.next_item(benchmark, candidate)
        prev = request.state.session.visit(benchmark, candidate)
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
            prev_item=prev,
            decisions=DECISIONS,
            guidelines=guidelines_html,
            panel_collapsed=len(panel) > PANEL_OPEN,
            panel_summary={
                "n": len(panel),
                "mean": sum(rates) / len(rates) if rates else None,
                "low": min(rates) if rates else None,
                "high": max(rates) if rates else None,
            },
            required=store.required(benchmark),
            votes=_current_votes(view),
        )

    @app.get("/item/{benchmark}/{candidate:path}", response_class=HTMLResponse)
    def item(request: Request, benchmark: str, candidate: str) -> HTMLResponse:
        try:
            page = item_page(request, benchmark, candidate)
            if request.headers.get("HX-Request"):  # reached by a decision's redirect
                page.headers["HX-Push-Url"] = request.url.path
            return page
        except ItemNotFound as exc:
            return render(request, "message.html", status=404, title="Not found", message=str(exc))

    @app.post("/reviewer")
    async def set_reviewer(request: Request) -> Response:
        form = await form_with_csrf(request)
        if form is None:
            return _plain(403, "CSRF check failed: reload the page and try again")
        name = " ".join(str(form.get("reviewer") or "").split())
        sess: Session = request.state.session
        if sess.account is not None:
            sess.flash = ("error", f"signed in by token as {sess.account}: the name is fixed")
        elif not name or len(name) > MAX_REVIEWER:
            sess.flash = ("error", f"a reviewer name has 1 to {MAX_REVIEWER} characters")
        elif need_auth and accounts.named(name) is not None:
            sess.flash = ("error", f"{name} has an account: sign in with {name}'s own token")
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
                role=role_of(sess),
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
        if saved.overrules_judge:
            text += " (overruling the judge)"
        if saved.new_version:
            text += f"; version {saved.new_version} goes back to calibration"
        # accepted or rejected: on to the next pending item (`p` comes back); an edit
        # stays, to show the new version
        nxt = None if saved.new_version else store.next_item(benchmark, candidate)
        if nxt is not None:
            text += f" on {benchmark}/{candidate}; next pending item (p: back)"
            benchmark, candidate = nxt
        sess.flash = ("ok", text + ".")
        url = f"/item/{quote(benchmark, safe='')}/{quote(candidate, safe='')}"
        return RedirectResponse(url, status_code=303)

    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    return app


def _float(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) < 1e6 else None


def _guidelines(path: Path | None) -> Markup | None:
    """The guidelines markdown as HTML: raw HTML in it is escaped, links are checked."""
    if path is None or not Path(path).is_file():
        return None
    md = MarkdownIt("commonmark", {"html": False})
    return Markup(md.render(Path(path).read_text(encoding="utf-8")))  # noqa: S704 (html off)


def _current_votes(view: Any) -> list[Any]:
    """Decisions that count on the current version (accept/reject, not undone)."""
    undone = {d.reverts for d in view.history if d.decision == "reverted"}
    return [
        d
        for d in view.history
        if d.version == view.current.version
        and d.decision in ("accepted", "rejected")
        and d.id not in undone
    ]


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
