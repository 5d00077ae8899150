"""Fetch a repo's chat template from the Hugging Face Hub (HF_ENDPOINT and HF_TOKEN respected)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
from django.conf import settings
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import (
    GatedRepoError,
    HfHubHTTPError,
    HFValidationError,
    LocalEntryNotFoundError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

# Where transformers looks, in its order of preference.
TEMPLATE_FILES = ("chat_template.jinja", "chat_template.json", "tokenizer_config.json")
ADDITIONAL_DIR = "additional_chat_templates"


@dataclass(frozen=True)
class HubFile:
    """A chat template file downloaded from a repo at a resolved commit."""

    repo_id: str
    revision: str  # as asked; empty for the default branch
    commit_sha: str
    filename: str
    data: bytes
    tokenizer_config: bytes  # for bos/eos when the template sits in its own file; may be empty
    # Named templates stored as files (chat_template.jinja is "default", the others live in
    # additional_chat_templates/NAME.jinja); empty when names live inside a JSON config.
    file_names: tuple[str, ...] = ()
    template_name: str = ""


class HubFetchError(Exception):
    """A Hub fetch failed; `kind` says why, the message says it to a person."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind  # repo_not_found, file_missing, gated, unauthorized, revision_not_found,
        #                   invalid_repo_id, network, timeout, hub_error


def endpoint() -> str:
    """Return the Hub endpoint, read at call time so tests and deployments can point it anywhere."""
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def fetch_chat_template(repo_id: str, revision: str = "", template_name: str = "") -> HubFile:
    """Resolve the revision, pick the repo's chat template file and download it."""
    api = HfApi(endpoint=endpoint())
    with _hub_errors(repo_id, revision, filename=""):
        info = api.model_info(repo_id, revision=revision or None, timeout=settings.LAB_HUB_TIMEOUT)
    siblings = {s.rfilename for s in info.siblings or []}
    commit = info.sha or ""
    filename = next((name for name in TEMPLATE_FILES if name in siblings), "")
    if not filename:
        raise HubFetchError("file_missing", _missing_message(repo_id, commit, siblings))
    file_names = _file_names(siblings) if filename == "chat_template.jinja" else ()
    if template_name and template_name != "default" and template_name in file_names:
        filename = f"{ADDITIONAL_DIR}/{template_name}.jinja"
    data = _download(repo_id, commit, filename)
    config = b""
    if filename != "tokenizer_config.json" and "tokenizer_config.json" in siblings:
        config = _download(repo_id, commit, "tokenizer_config.json")
    chosen = template_name if template_name in file_names else ""
    return HubFile(repo_id, revision, commit, filename, data, config, file_names, chosen)


@dataclass(frozen=True)
class TemplateCommit:
    """A commit that added or changed a repo's chat template file."""

    commit_sha: str
    title: str
    created_at: datetime
    filename: str


def template_commits(repo_id: str, revision: str = "", limit: int = 20) -> list[TemplateCommit]:
    """List the commits (newest first, at most `limit`) that touched the repo's template file.

    The file is the one `fetch_chat_template` would pick at `revision`. Each step asks the Hub
    for the file's last commit at the commit before the previous answer, so the cost is one
    request per change, not one per commit.
    """
    api = HfApi(endpoint=endpoint())
    with _hub_errors(repo_id, revision, filename=""):
        info = api.model_info(repo_id, revision=revision or None, timeout=settings.LAB_HUB_TIMEOUT)
        commits = api.list_repo_commits(repo_id, revision=info.sha or revision or None)
    siblings = {s.rfilename for s in info.siblings or []}
    filename = next((name for name in TEMPLATE_FILES if name in siblings), "")
    if not filename:
        raise HubFetchError("file_missing", _missing_message(repo_id, info.sha or "", siblings))
    position = {commit.commit_id: index for index, commit in enumerate(commits)}
    found: list[TemplateCommit] = []
    at = 0
    while at < len(commits) and len(found) < limit:
        index = _last_change(api, repo_id, commits[at].commit_id, filename, position)
        if index is None:
            break
        commit = commits[index]
        found.append(TemplateCommit(commit.commit_id, commit.title, commit.created_at, filename))
        at = index + 1
    return found


def _last_change(api: HfApi, repo_id: str, commit: str, filename: str,
                 position: dict[str, int]) -> int | None:
    """Where in the commit list the file last changed as of `commit` (None: absent before)."""
    with _hub_errors(repo_id, commit, filename):
        paths = api.get_paths_info(repo_id, [filename], expand=True, revision=commit)
    last = getattr(paths[0], "last_commit", None) if paths else None
    return position.get(last.oid) if last is not None else None


def _file_names(siblings: set[str]) -> tuple[str, ...]:
    """Named templates kept as files: default plus additional_chat_templates/NAME.jinja."""
    prefix, suffix = f"{ADDITIONAL_DIR}/", ".jinja"
    extra = sorted(
        name[len(prefix) : -len(suffix)]
        for name in siblings
        if name.startswith(prefix) and name.endswith(suffix) and "/" not in name[len(prefix) :]
    )
    return ("default", *extra) if extra else ()


def special_tokens(tokenizer_config: bytes) -> tuple[str, str]:
    """Read bos/eos tokens (strings or {content: ...} objects) from a tokenizer_config.json."""
    try:
        config: Any = json.loads(tokenizer_config) if tokenizer_config else {}
    except ValueError:
        return "", ""
    if not isinstance(config, dict):
        return "", ""
    return _token_text(config.get("bos_token")), _token_text(config.get("eos_token"))


def _token_text(token: Any) -> str:
    if isinstance(token, dict):
        token = token.get("content")
    return token if isinstance(token, str) else ""


def _download(repo_id: str, commit: str, filename: str) -> bytes:
    with _hub_errors(repo_id, commit, filename):
        path = hf_hub_download(
            repo_id,
            filename,
            revision=commit,
            endpoint=endpoint(),
            etag_timeout=settings.LAB_HUB_TIMEOUT,
            cache_dir=settings.LAB_HUB_CACHE_DIR,
        )
    return Path(str(path)).read_bytes()


def _missing_message(repo_id: str, commit: str, siblings: set[str]) -> str:
    wanted = ", ".join(TEMPLATE_FILES)
    return (
        f"{repo_id} at {commit[:10]} has no chat template file: looked for {wanted}; "
        f"the repo has {len(siblings)} other file(s)."
    )


@contextmanager
def _hub_errors(repo_id: str, revision: str, filename: str) -> Iterator[None]:
    """Translate huggingface_hub and network exceptions into HubFetchError."""
    try:
        yield
    except HubFetchError:
        raise
    except Exception as exc:
        raise _translate(exc, repo_id, revision, filename) from exc


def _translate(exc: Exception, repo_id: str, revision: str, filename: str) -> HubFetchError:
    where = f"{repo_id}@{revision}" if revision else repo_id
    if isinstance(exc, HFValidationError):
        return HubFetchError("invalid_repo_id", f"'{repo_id}' is not a valid repo id: {exc}")
    if isinstance(exc, GatedRepoError):
        return HubFetchError(
            "gated",
            f"{repo_id} is gated: accept its conditions on the Hub and set HF_TOKEN to a token "
            "of an account that has access.",
        )
    if isinstance(exc, RepositoryNotFoundError):
        return HubFetchError(
            "repo_not_found",
            f"Repository {repo_id} was not found on {endpoint()} (or it is private and "
            "HF_TOKEN does not give access to it).",
        )
    if isinstance(exc, RevisionNotFoundError):
        return HubFetchError(
            "revision_not_found", f"Revision '{revision}' does not exist in {repo_id}."
        )
    if isinstance(exc, RemoteEntryNotFoundError):
        return HubFetchError("file_missing", f"{where} has no file {filename}.")
    if isinstance(exc, HfHubHTTPError) and exc.response.status_code in (401, 403):
        return HubFetchError(
            "unauthorized",
            f"The Hub refused access to {where} (HTTP {exc.response.status_code}): check HF_TOKEN.",
        )
    return _translate_network(exc, where)


def _translate_network(exc: Exception, where: str) -> HubFetchError:
    cause = exc.__cause__ if isinstance(exc, LocalEntryNotFoundError) else exc
    seconds = settings.LAB_HUB_TIMEOUT
    if isinstance(cause, httpx2.TimeoutException):
        return HubFetchError(
            "timeout", f"The Hub at {endpoint()} did not answer within {seconds:g} s ({where})."
        )
    if isinstance(cause, (httpx2.TransportError, LocalEntryNotFoundError)):
        return HubFetchError(
            "network", f"Could not reach the Hub at {endpoint()}: {_first_line(cause)}"
        )
    return HubFetchError("hub_error", f"The Hub failed on {where}: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
