"""Fetching chat templates from the Hub (through the local Hub server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lab.analyses import hub


def test_it_downloads_the_chat_template_at_the_resolved_commit(
    hub_env: Any, corpus_templates: Path
) -> None:
    fetched = hub.fetch_chat_template("corpus/Qwen-Qwen3-0.6B")
    repo = hub_env.repos["corpus/Qwen-Qwen3-0.6B"]
    assert fetched.commit_sha == repo.sha
    assert fetched.filename == "chat_template.jinja"
    assert fetched.data == (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_bytes()


def test_it_resolves_a_branch_name_to_its_commit(hub_env: Any) -> None:
    fetched = hub.fetch_chat_template("corpus/Qwen-Qwen3-0.6B", "main")
    assert fetched.revision == "main"
    assert fetched.commit_sha == hub_env.repos["corpus/Qwen-Qwen3-0.6B"].sha


def test_it_reads_tokenizer_config_when_there_is_no_template_file(hub_env: Any) -> None:
    fetched = hub.fetch_chat_template("tests/named")
    assert fetched.filename == "tokenizer_config.json"
    assert hub.special_tokens(fetched.data) == ("<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>")


def test_templates_kept_as_files_are_listed_and_picked_by_name(
    hub_env: Any, corpus_templates: Path
) -> None:
    default = hub.fetch_chat_template("tests/named-files")
    assert (default.filename, default.file_names) == (
        "chat_template.jinja",
        ("default", "tool_use"),
    )
    picked = hub.fetch_chat_template("tests/named-files", template_name="tool_use")
    assert picked.filename == "additional_chat_templates/tool_use.jinja"
    hermes = corpus_templates / "NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja"
    assert picked.data == hermes.read_bytes()
    assert hub.special_tokens(picked.tokenizer_config) == ("<s>", "<|im_end|>")


def _failure(repo_id: str, revision: str = "") -> hub.HubFetchError:
    with pytest.raises(hub.HubFetchError) as caught:
        hub.fetch_chat_template(repo_id, revision)
    return caught.value


def test_a_missing_repo_says_not_found(hub_env: Any) -> None:
    error = _failure("nobody/nothing")
    assert error.kind == "repo_not_found"
    assert "Repository nobody/nothing was not found" in str(error)


def test_a_repo_without_template_file_says_which_files_were_looked_for(hub_env: Any) -> None:
    error = _failure("tests/no-template")
    assert error.kind == "file_missing"
    assert "no chat template file: looked for chat_template.jinja" in str(error)


def test_a_gated_repo_says_how_to_get_access(hub_env: Any) -> None:
    error = _failure("tests/gated")
    assert error.kind == "gated"
    assert "is gated" in str(error) and "HF_TOKEN" in str(error)


def test_a_private_repo_without_token_is_refused(hub_env: Any) -> None:
    error = _failure("tests/private")
    assert error.kind == "unauthorized"
    assert "refused access to tests/private" in str(error)


def test_hf_token_from_the_environment_is_sent(
    hub_env: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_lab_test")
    assert hub.fetch_chat_template("tests/private").commit_sha == hub_env.repos["tests/private"].sha


def test_an_unknown_revision_is_named(hub_env: Any) -> None:
    error = _failure("corpus/Qwen-Qwen3-0.6B", "v9.9")
    assert error.kind == "revision_not_found"
    assert "Revision 'v9.9' does not exist in corpus/Qwen-Qwen3-0.6B" in str(error)


def test_an_invalid_repo_id_is_rejected_before_any_request(hub_env: Any) -> None:
    error = _failure("not a repo!")
    assert error.kind == "invalid_repo_id"
    assert "'not a repo!' is not a valid repo id" in str(error)


def test_a_slow_hub_times_out(hub_env: Any) -> None:
    error = _failure("tests/slow")
    assert error.kind == "timeout"
    assert "did not answer within 1 s" in str(error)


def test_an_unreachable_hub_says_so(hub_env: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: nothing listens
    error = _failure("corpus/Qwen-Qwen3-0.6B")
    assert error.kind == "network"
    assert "Could not reach the Hub at http://127.0.0.1:9" in str(error)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (b'{"bos_token": "<s>", "eos_token": "</s>"}', ("<s>", "</s>")),
        (b'{"bos_token": {"content": "<s>"}, "eos_token": null}', ("<s>", "")),
        (b"not json", ("", "")),
        (b"", ("", "")),
    ],
)
def test_special_tokens_accept_strings_objects_and_garbage(
    config: bytes, expected: tuple[str, str]
) -> None:
    assert hub.special_tokens(config) == expected


def test_it_lists_the_commits_that_touched_the_template_newest_first(hub_env: Any) -> None:
    repo = hub_env.repos["tests/history"]
    commits = hub.template_commits("tests/history")
    assert [c.title for c in commits] == ["Fix tool calls in the template", "Add chat template"]
    assert [c.commit_sha for c in commits] == [repo.commits[3].sha, repo.commits[1].sha]
    assert {c.filename for c in commits} == {"chat_template.jinja"}
    assert commits[0].created_at > commits[1].created_at


def test_each_listed_commit_fetches_its_own_template(
    hub_env: Any, corpus_templates: Path
) -> None:
    newest, oldest = hub.template_commits("tests/history")
    assert hub.fetch_chat_template("tests/history", oldest.commit_sha).data == (
        corpus_templates / "GLM-4.6.jinja").read_bytes()
    assert hub.fetch_chat_template("tests/history", newest.commit_sha).data == (
        corpus_templates / "GLM-4.7-Flash.jinja").read_bytes()


def test_the_commit_list_stops_at_the_limit(hub_env: Any) -> None:
    assert len(hub.template_commits("tests/history", limit=1)) == 1


def test_a_repo_without_a_template_has_no_template_commits(hub_env: Any) -> None:
    with pytest.raises(hub.HubFetchError) as raised:
        hub.template_commits("tests/no-template")
    assert raised.value.kind == "file_missing"
