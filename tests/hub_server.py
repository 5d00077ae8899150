"""A real local HTTP server answering the Hugging Face Hub endpoints that huggingface_hub uses.

Serves `corpus/<file stem>` repos (one `chat_template.jinja` each) from a templates folder, plus
repos the tests add: gated, private (token required), slow, several files. Point HF_ENDPOINT at
`FakeHub.url` and huggingface_hub talks to it exactly as it talks to huggingface.co.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit


def commit_sha(repo_id: str, files: dict[str, bytes]) -> str:
    """Return a stable 40-hex commit id for a repo's content."""
    digest = hashlib.sha1(repo_id.encode())
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + files[name])
    return digest.hexdigest()


@dataclass(frozen=True)
class FakeCommit:
    sha: str
    title: str
    date: str  # ISO 8601, as the Hub writes it
    files: dict[str, bytes]


@dataclass
class FakeRepo:
    repo_id: str
    files: dict[str, bytes]  # the files at the head commit
    gated: bool = False
    token: str = ""  # when set, requests must carry `Authorization: Bearer <token>`
    delay: float = 0.0  # seconds to wait before answering (to provoke client timeouts)
    branches: dict[str, str] = field(default_factory=dict)
    # Earlier commits, oldest first: (title, files). The head commit comes after them.
    history: list[tuple[str, dict[str, bytes]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sha = commit_sha(self.repo_id, self.files)
        self.branches.setdefault("main", self.sha)
        earlier = [FakeCommit(commit_sha(f"{self.repo_id}@{i}", files), title,
                              f"2025-01-{i + 1:02d}T12:00:00.000Z", files)
                   for i, (title, files) in enumerate(self.history)]
        head = FakeCommit(self.sha, "Head commit", f"2025-02-{len(earlier) + 1:02d}T12:00:00.000Z",
                          self.files)
        self.commits = [*earlier, head]  # oldest first

    def resolve(self, revision: str) -> str | None:
        if any(commit.sha == revision for commit in self.commits):
            return revision
        return self.branches.get(revision)

    def commit(self, sha: str) -> FakeCommit:
        return next(c for c in self.commits if c.sha == sha)

    def log(self, sha: str) -> list[FakeCommit]:
        """Commits reachable from sha, newest first (history is linear)."""
        upto = [c.sha for c in self.commits].index(sha)
        return self.commits[: upto + 1][::-1]

    def last_change(self, sha: str, path: str) -> FakeCommit | None:
        """The newest commit up to sha that added or changed path."""
        log = self.log(sha)
        for newer, older in zip(log, [*log[1:], None], strict=True):
            changed = older is None or older.files.get(path) != newer.files.get(path)
            if path in newer.files and changed:
                return newer
        return None


class FakeHub:
    """The server and its repos; start() serves on a free loopback port."""

    def __init__(self, templates_dir: Path | None = None) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.requests: list[str] = []
        if templates_dir is not None:
            for path in sorted(templates_dir.glob("*.jinja")):
                self.add(
                    FakeRepo(f"corpus/{path.stem}", {"chat_template.jinja": path.read_bytes()})
                )
        self._server: ThreadingHTTPServer | None = None

    def add(self, repo: FakeRepo) -> FakeRepo:
        self.repos[repo.repo_id] = repo
        return repo

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the hub first"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> FakeHub:
        hub = self

        class Handler(_HubHandler):
            fake_hub = hub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


class _HubHandler(BaseHTTPRequestHandler):
    fake_hub: FakeHub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib's name
        pass  # keep test output quiet; requests are recorded in FakeHub.requests

    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        self._route(send_body=True)

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib's name
        self._route(send_body=False)

    def do_POST(self) -> None:  # noqa: N802 - stdlib's name
        self.fake_hub.requests.append(f"POST {self.path}")
        path = unquote(urlsplit(self.path).path)
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        repo_id, _, revision = path.removeprefix("/api/models/").partition("/paths-info/")
        if not path.startswith("/api/models/") or not revision:
            self._error(404, "", "Not found", True)
            return
        self._paths_info(repo_id, revision, form.get("paths", []))

    def _route(self, send_body: bool) -> None:
        self.fake_hub.requests.append(f"{self.command} {self.path}")
        path = unquote(urlsplit(self.path).path)
        if path.startswith("/api/models/") and "/commits/" in path:
            repo_id, _, revision = path.removeprefix("/api/models/").partition("/commits/")
            self._commits(repo_id, revision, send_body)
        elif path.startswith("/api/models/"):
            self._model_info(path.removeprefix("/api/models/"), send_body)
        elif "/resolve/" in path:
            repo_id, _, rest = path.lstrip("/").partition("/resolve/")
            revision, _, filename = rest.partition("/")
            self._file(repo_id, revision, filename, send_body)
        else:
            self._error(404, "", "Not found", send_body)

    def _repo(self, repo_id: str, send_body: bool) -> FakeRepo | None:
        repo = self.fake_hub.repos.get(repo_id)
        if repo is not None and repo.delay:
            time.sleep(repo.delay)
        if repo is None:
            self._error(404, "RepoNotFound", "Repository not found", send_body)
            return None
        if repo.token and self.headers.get("Authorization") != f"Bearer {repo.token}":
            self._error(401, "", "Invalid username or password.", send_body)
            return None
        return repo

    def _model_info(self, rest: str, send_body: bool) -> None:
        repo_id, _, revision = rest.partition("/revision/")
        repo = self._repo(repo_id, send_body)
        if repo is None:
            return
        sha = repo.resolve(revision or "main")
        if sha is None:
            self._error(404, "RevisionNotFound", "Invalid rev id", send_body)
            return
        info = {
            "_id": sha[:24],
            "id": repo_id,
            "modelId": repo_id,
            "sha": sha,
            "private": bool(repo.token),
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "tags": [],
            "downloads": 0,
            "likes": 0,
            "siblings": [{"rfilename": n} for n in sorted(repo.commit(sha).files)],
        }
        self._send(200, json.dumps(info).encode(), "application/json", {}, send_body)

    def _commits(self, repo_id: str, revision: str, send_body: bool) -> None:
        """The repo's commits reachable from revision, newest first (one page)."""
        repo = self._repo(repo_id, send_body)
        sha = repo.resolve(revision) if repo is not None else None
        if repo is None:
            return
        if sha is None:
            self._error(404, "RevisionNotFound", "Invalid rev id", send_body)
            return
        items = [{"id": c.sha, "title": c.title, "message": "", "date": c.date,
                  "authors": [{"user": "tester"}]} for c in repo.log(sha)]
        self._send(200, json.dumps(items).encode(), "application/json", {}, send_body)

    def _paths_info(self, repo_id: str, revision: str, paths: list[str]) -> None:
        """Each existing path at revision, with the last commit that changed it."""
        repo = self._repo(repo_id, True)
        sha = repo.resolve(revision) if repo is not None else None
        if repo is None:
            return
        if sha is None:
            self._error(404, "RevisionNotFound", "Invalid rev id", True)
            return
        files = repo.commit(sha).files
        items = []
        for path in (p for p in paths if p in files):
            last = repo.last_change(sha, path)
            items.append({"type": "file", "path": path, "size": len(files[path]),
                          "oid": hashlib.sha1(files[path]).hexdigest(),
                          "lastCommit": last and {"id": last.sha, "title": last.title,
                                                  "date": last.date}})
        self._send(200, json.dumps(items).encode(), "application/json", {}, True)

    def _file(self, repo_id: str, revision: str, filename: str, send_body: bool) -> None:
        repo = self._repo(repo_id, send_body)
        if repo is None:
            return
        sha = repo.resolve(revision)
        if sha is None:
            self._error(404, "RevisionNotFound", "Invalid rev id", send_body)
        elif repo.gated:
            self._error(403, "GatedRepo", "Access to this model is restricted", send_body)
        elif filename not in repo.commit(sha).files:
            self._error(404, "EntryNotFound", "Entry not found", send_body, {"X-Repo-Commit": sha})
        else:
            data = repo.commit(sha).files[filename]
            etag = f'"{hashlib.sha256(data).hexdigest()}"'
            headers = {"X-Repo-Commit": sha, "ETag": etag}
            self._send(200, data, "application/octet-stream", headers, send_body)

    def _error(
        self,
        status: int,
        code: str,
        message: str,
        send_body: bool,
        extra: dict[str, str] | None = None,
    ) -> None:
        headers = {"X-Error-Message": message, **(extra or {})}
        if code:
            headers["X-Error-Code"] = code
        body = json.dumps({"error": message}).encode()
        self._send(status, body, "application/json", headers, send_body)

    def _send(
        self, status: int, body: bytes, content_type: str, headers: dict[str, str], send_body: bool
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if send_body:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (the timeout tests want exactly that)
