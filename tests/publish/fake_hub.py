"""A small in-memory Hugging Face Hub on 127.0.0.1 for the real ``huggingface_hub`` client.

It serves the routes an upload uses with ``HF_HUB_DISABLE_XET=1`` (routes read from
huggingface_hub's hf_api.py, _commit_api.py and lfs.py): repo info, repos/create,
preupload, the LFS batch API with PUT upload and verify, tree listing, validate-yaml,
commit (NDJSON), tag creation and refs listing. It keeps every commit, so tests can check
what was received. Write routes require a Bearer token.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

LFS_SUFFIXES = (".parquet", ".arrow", ".png", ".bin", ".safetensors")
REPO = r"/api/(?P<kind>datasets|models|spaces)/(?P<repo>[^/]+/[^/]+)"


def git_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Blob:
    size: int
    content: bytes | None = None  # regular file
    sha256: str | None = None  # LFS file

    def entry(self, path: str) -> dict[str, Any]:
        if self.sha256 is None:
            return {"type": "file", "path": path, "size": self.size, "oid": git_sha1(self.content)}
        pointer = (
            f"version https://git-lfs.github.com/spec/v1\noid sha256:{self.sha256}\n"
            f"size {self.size}\n"
        ).encode()
        lfs = {"oid": self.sha256, "size": self.size, "pointerSize": len(pointer)}
        return {
            "type": "file",
            "path": path,
            "size": self.size,
            "oid": git_sha1(pointer),
            "lfs": lfs,
        }


@dataclass
class Commit:
    oid: str
    parent: str | None
    message: str
    files: dict[str, Blob]


@dataclass
class Repo:
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        oid = self.branches.get(rev) or self.tags.get(rev) or rev
        return self.commits.get(oid)


class FakeHub:
    """State plus a threaded HTTP server; use as a context manager."""

    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[tuple[str, str]] = []
        self.tokens: set[str] = set()
        self.validated_yaml: list[str] = []
        self.lock = threading.Lock()
        self._n = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeHub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def new_commit(self, repo: Repo, parent: str | None, message: str, files: dict) -> str:
        self._n += 1
        oid = hashlib.sha1(f"{self._n}:{parent}:{message}".encode()).hexdigest()
        repo.commits[oid] = Commit(oid, parent, message, files)
        repo.branches["main"] = oid
        return oid

    def commits(self, repo_id: str) -> list[Commit]:
        """Commits of a dataset repo after its creation commit, oldest first."""
        return list(self.repos[f"datasets/{repo_id}"].commits.values())[1:]


def _handler(hub: FakeHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            pass

        # -- plumbing -------------------------------------------------------------
        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                out = b""
                while True:
                    size = int(self.rfile.readline().strip().split(b";")[0], 16)
                    if size == 0:
                        self.rfile.readline()
                        return out
                    out += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _send(self, status: int, obj: Any = None, headers: dict | None = None) -> None:
            data = b"" if obj is None else json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, code: str, message: str) -> None:
            self._send(
                status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message}
            )

        def _authorized(self) -> bool:
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Bearer ") and len(auth) > 7:
                hub.tokens.add(auth[7:])
                return True
            self._error(401, "Unauthorized", "Invalid credentials in Authorization header")
            return False

        def _route(self, method: str) -> None:
            parts = urlsplit(self.path)
            path, query = unquote(parts.path), parse_qs(parts.query)
            with hub.lock:
                hub.requests.append((method, path))
            body = self._body() if method in ("POST", "PUT") else b""
            for pattern, func in ROUTES[method]:
                m = re.fullmatch(pattern, path)
                if m:
                    with hub.lock:
                        return func(self, m, query, body)
            self._error(404, "NotFound", f"no route {method} {path}")

        def do_GET(self) -> None:
            self._route("GET")

        def do_POST(self) -> None:
            self._route("POST")

        def do_PUT(self) -> None:
            self._route("PUT")

        # -- helpers --------------------------------------------------------------
        def _repo(self, m: re.Match) -> Repo | None:
            repo = hub.repos.get(f"{m['kind']}/{m['repo']}")
            if repo is None:
                self._error(404, "RepoNotFound", f"Repository {m['repo']} not found")
            return repo

        def _commit(self, repo: Repo, rev: str) -> Commit | None:
            commit = repo.resolve(rev)
            if commit is None:
                self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return commit

        # -- routes ---------------------------------------------------------------
        def repo_info(self, m, query, body):
            repo = self._repo(m)
            commit = repo and self._commit(repo, m["rev"] or "main")
            if commit:
                siblings = [{"rfilename": p} for p in sorted(commit.files)]
                self._send(
                    200,
                    {
                        "id": m["repo"],
                        "sha": commit.oid,
                        "private": False,
                        "siblings": siblings,
                        "tags": [],
                    },
                )

        def create_repo(self, m, query, body):
            if not self._authorized():
                return
            req = json.loads(body)
            repo_id = f"{req.get('organization') or 'user'}/{req['name']}"
            key = f"{req.get('type', 'model')}s/{repo_id}"
            url = f"{hub.url}/{'datasets/' if req.get('type') == 'dataset' else ''}{repo_id}"
            if key in hub.repos:
                return self._send(409, {"error": "You already created this repo", "url": url})
            repo = hub.repos[key] = Repo()
            attrs = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
            hub.new_commit(
                repo, None, "initial commit", {".gitattributes": Blob(len(attrs), attrs)}
            )
            self._send(200, {"url": url})

        def preupload(self, m, query, body):
            repo = self._repo(m)
            commit = repo and self._commit(repo, m["rev"])
            if not commit or not self._authorized():
                return
            files = []
            for f in json.loads(body)["files"]:
                sample = base64.b64decode(f["sample"])
                lfs = f["path"].endswith(LFS_SUFFIXES) or b"\0" in sample or f["size"] > 10 << 20
                old = commit.files.get(f["path"])
                oid = None if old is None else (old.sha256 or git_sha1(old.content))
                files.append(
                    {
                        "path": f["path"],
                        "uploadMode": "lfs" if lfs else "regular",
                        "shouldIgnore": False,
                        "oid": oid,
                    }
                )
            self._send(200, {"files": files, "commitOid": commit.oid})

        def lfs_batch(self, m, query, body):
            if not self._authorized():
                return
            req = json.loads(body)
            objects = []
            for obj in req["objects"]:
                out = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
                if obj["oid"] not in hub.lfs:
                    out["actions"] = {
                        "upload": {"href": f"{hub.url}/_lfs/{obj['oid']}", "header": {}},
                        "verify": {"href": f"{hub.url}/_lfs/verify", "header": {}},
                    }
                objects.append(out)
            self._send(200, {"transfer": "basic", "objects": objects})

        def lfs_put(self, m, query, body):
            if hashlib.sha256(body).hexdigest() != m["oid"]:
                return self._error(400, "BadDigest", "content does not match its oid")
            hub.lfs[m["oid"]] = body
            self._send(200)

        def lfs_verify(self, m, query, body):
            req = json.loads(body)
            ok = req["oid"] in hub.lfs and len(hub.lfs[req["oid"]]) == req["size"]
            self._send(200, {}) if ok else self._error(404, "NotFound", "object not uploaded")

        def tree(self, m, query, body):
            repo = self._repo(m)
            commit = repo and self._commit(repo, m["rev"])
            if not commit:
                return
            base = (m["path"] or "").strip("/")
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            prefix = f"{base}/" if base else ""
            entries, dirs = [], set()
            for p, blob in sorted(commit.files.items()):
                if not p.startswith(prefix):
                    continue
                rest = p[len(prefix) :].split("/")
                for depth in range(1, len(rest)):
                    if recursive or depth == 1:
                        dirs.add(prefix + "/".join(rest[:depth]))
                if recursive or len(rest) == 1:
                    entries.append(blob.entry(p))
            entries += [{"type": "directory", "path": d, "oid": "0" * 40} for d in sorted(dirs)]
            self._send(200, entries)

        def validate_yaml(self, m, query, body):
            content = json.loads(body)["content"]
            hub.validated_yaml.append(content)
            errors = []
            match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
            try:
                meta = yaml.safe_load(match.group(1)) if match else {}
            except yaml.YAMLError as exc:
                meta, errors = {}, [{"message": f"invalid YAML: {exc}"}]
            for cfg in (meta or {}).get("configs", []):
                if "config_name" not in cfg or "data_files" not in cfg:
                    errors.append({"message": f"config {cfg} needs config_name and data_files"})
            self._send(400 if errors else 200, {"errors": errors, "warnings": []})

        def commit(self, m, query, body):
            repo = self._repo(m)
            head = repo and self._commit(repo, m["rev"])
            if not head or not self._authorized():
                return
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            header = next(x["value"] for x in lines if x["key"] == "header")
            if header.get("parentCommit") not in (None, head.oid):
                return self._error(412, "PreconditionFailed", "parent commit is not the head")
            files = dict(head.files)
            for op in lines:
                key, val = op["key"], op["value"]
                if key == "file":
                    data = base64.b64decode(val["content"])
                    files[val["path"]] = Blob(len(data), data)
                elif key == "lfsFile":
                    if val["oid"] not in hub.lfs:
                        return self._error(
                            422, "LfsMissing", f"LFS object of {val['path']} missing"
                        )
                    files[val["path"]] = Blob(val["size"], sha256=val["oid"])
                elif key == "deletedFile":
                    files.pop(val["path"], None)
                elif key == "deletedFolder":
                    files = {p: b for p, b in files.items() if not p.startswith(val["path"] + "/")}
            oid = hub.new_commit(repo, head.oid, header["summary"], files)
            url = f"{hub.url}/{m['kind']}/{m['repo']}/commit/{oid}"
            self._send(
                200, {"success": True, "commitOid": oid, "commitUrl": url, "pullRequestUrl": None}
            )

        def create_tag(self, m, query, body):
            repo = self._repo(m)
            commit = repo and self._commit(repo, m["rev"])
            if not commit or not self._authorized():
                return
            tag = json.loads(body)["tag"]
            if tag in repo.tags:
                return self._error(409, "Conflict", f"tag {tag} already exists")
            repo.tags[tag] = commit.oid
            self._send(200, {})

        def refs(self, m, query, body):
            repo = self._repo(m)
            if repo:

                def ref(kind: str, name: str, oid: str) -> dict:
                    return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}

                self._send(
                    200,
                    {
                        "branches": [ref("heads", n, o) for n, o in repo.branches.items()],
                        "tags": [ref("tags", n, o) for n, o in repo.tags.items()],
                        "converts": [],
                        "pullRequests": [],
                    },
                )

    rev = r"(?P<rev>[^/]+)"
    ROUTES = {
        "GET": [
            (REPO + r"(?:/revision/" + rev + ")?", Handler.repo_info),
            (REPO + r"/tree/" + rev + r"(?P<path>/.*)?", Handler.tree),
            (REPO + r"/refs", Handler.refs),
        ],
        "POST": [
            (r"/api/repos/create", Handler.create_repo),
            (r"/api/validate-yaml", Handler.validate_yaml),
            (REPO + r"/preupload/" + rev, Handler.preupload),
            (REPO + r"/commit/" + rev, Handler.commit),
            (REPO + r"/tag/" + rev, Handler.create_tag),
            (
                r"/(?P<kind>datasets|spaces)?/?(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch",
                Handler.lfs_batch,
            ),
            (r"/_lfs/verify", Handler.lfs_verify),
        ],
        "PUT": [(r"/_lfs/(?P<oid>[0-9a-f]{64})", Handler.lfs_put)],
    }
    return Handler
