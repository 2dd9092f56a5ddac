"""A tiny review project: params, parent items, candidates; and a small HTTP client."""

from __future__ import annotations

import http.client
import json
import re
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import polars as pl

from curation.schemas import conform, field_names

XSS_QUESTION = '<script>window.__pwned=1</script> How many? <img src=x onerror="window.__pwned=1">'
XSS_ANSWER = '<img src=x onerror="window.__pwned=1">'

PARAMS = """\
benchmarks:
  toy:
    domain: math
    license: MIT
    source: tests
    items:
      path: raw/items.jsonl
      fields: {item: id, question: prompt, answer: target}
      answer_type: numeric
review:
  db: data/review/queue.sqlite
  candidates: data/candidates.parquet
"""

PARENTS = {
    "q1": ("Tom has 3 apples and buys 4 more. How many apples does he have?", "7"),
    "q2": ("Solve $x + 2 = 5$ for $x$.", "3"),
    "q3": ("A train travels 60 km in 1 hour. How far in 3 hours?", "180"),
}


def item_row(item: str, question: str, answer: str) -> dict[str, Any]:
    return {
        "benchmark": "toy",
        "item": item,
        "domain": "math",
        "question": question,
        "answer": answer,
        "answer_type": "numeric",
        "choices": None,
        "source": "tests",
        "license": "MIT",
        "origin": "original",
        "metadata": "{}",
    }


def candidate(cid: str, **over: Any) -> dict[str, Any]:
    """A valid candidate record (calibrated, judged pass), with overrides."""
    row = {k: None for k in field_names("candidate")}
    row.update(
        benchmark="toy",
        candidate=cid,
        method="benchfill",
        parent="q1",
        round=1,
        target_z=0.6,
        question=f"Tom has 3 apples and buys 5 more. How many apples now? ({cid})",
        answer="8",
        answer_type="numeric",
        change="changed the numbers",
        status="inserted",
        status_reason=None,
        source="collected",
        rewriter_model="rw-1",
        prompt_hash="ab" * 32,
        b=0.4,
        se=0.3,
        z=0.58,
        z_low=0.5,
        z_high=0.66,
        n_trials=12,
        n_correct=5,
        panel=json.dumps({"strong": [4, 4], "mid": [1, 4], "weak": [0, 4]}),
        calibration="toy:0123456789ab",
        judge_correct=True,
        judge_well_posed=True,
        judge_format_kept=True,
        judge_reason="The answer 8 is correct; the question is clear.",
        judge_model="judge-1",
        selected=True,
        lineage=json.dumps({"parents": ["q1"], "cost": {"calls": 3}}),
    )
    row.update(over)
    return row


def standard_candidates() -> list[dict[str, Any]]:
    return [
        candidate(
            "c-acc",
            parent="q2",
            question="Solve $x^2 + 2 = 11$ for $x > 0$, then give \\(x + 1\\).",
            answer="4",
            change="squared the unknown",
        ),
        candidate(
            "c-rej",
            parent="q3",
            question="A train travels 60 km in 1 hour. How far in 7 hours?",
            answer="420",
            judge_correct=False,
            judge_reason="Ambiguous units.",
        ),
        candidate(
            "c-edit", question="Tom has 3 apples and buys 9 more. How many apples?", answer="12"
        ),
        candidate(
            "c-sim",
            source="simulated",
            question="Simulated: Tom has 2 apples.",
            answer="2",
            judge_model="simulated",
        ),
        candidate("c-xss", question=XSS_QUESTION, answer=XSS_ANSWER),
        candidate(
            "c-nocal",
            status="judge-rejected",
            z=None,
            z_low=None,
            z_high=None,
            b=None,
            se=None,
            judge_well_posed=False,
        ),
        candidate("c-invalid", status="invalid"),
        candidate("c-oracle", method="oracle", parent=None),
    ]


def write_candidates(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conform(pl.DataFrame(rows, infer_schema_length=None), "candidate").write_parquet(path)
    return path


def make_project(root: Path, rows: list[dict[str, Any]] | None = None) -> Path:
    (root / "params.yaml").write_text(PARAMS)
    items = [item_row(k, q, a) for k, (q, a) in PARENTS.items()]
    (root / "data" / "items").mkdir(parents=True, exist_ok=True)
    conform(pl.DataFrame(items), "item").write_parquet(root / "data" / "items" / "toy.parquet")
    write_candidates(root / "data" / "candidates.parquet", rows or standard_candidates())
    return root


class Client:
    """One browser-like HTTP client: keeps its cookies, never follows redirects."""

    def __init__(self, base: str, headers: dict[str, str] | None = None) -> None:
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.cookies: dict[str, str] = {}
        self.headers = headers or {}

    def request(
        self,
        method: str,
        path: str,
        *,
        form: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        hdrs = {**self.headers, **(headers or {})}
        if self.cookies:
            hdrs["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form)
            hdrs["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        text = resp.read().decode("utf-8", "replace")
        for value in resp.headers.get_all("set-cookie") or []:
            jar = SimpleCookie()
            jar.load(value)
            for k, morsel in jar.items():
                self.cookies[k] = morsel.value
        conn.close()
        return resp.status, {k.lower(): v for k, v in resp.headers.items()}, text

    def get(self, path: str, **kw: Any) -> tuple[int, dict[str, str], str]:
        return self.request("GET", path, **kw)

    def post(self, path: str, form: dict[str, Any], **kw: Any) -> tuple[int, dict[str, str], str]:
        return self.request("POST", path, form=form, **kw)


def form_fields(html: str, form_id: str) -> dict[str, str]:
    """Hidden inputs of the form with ``form_id`` (values unescaped)."""
    import html as htmllib

    start = html.index(f'id="{form_id}"')
    end = html.index("</form>", start)
    fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', html[start:end])
    return {k: htmllib.unescape(v) for k, v in fields}


def csrf_of(html: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)
