"""The compare page (lab/analyses/comparing.py and its view) through the test client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from lab.analyses import comparing, engine, intake
from lab.analyses.models import Template

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(corpus_templates: Path) -> tuple[Template, Template]:
    source = (corpus_templates / "Qwen-Qwen3-0.6B.jinja").read_text()
    old = intake.store_template(engine.load_pasted(source))
    changed = source.replace("<tool_call>", "<function_call>").replace(
        "</tool_call>", "</function_call>"
    )
    new = intake.store_template(engine.load_pasted(changed))
    return old, new


def test_two_stored_templates_differ_in_source_analysis_and_behaviour(
    client: Client, pair: tuple[Template, Template]
) -> None:
    old, new = pair
    response = client.get("/compare/", {"a": old.key, "b": new.key})
    page = response.content.decode()
    assert response.status_code == 200
    assert 'class="dl op-del"' in page and 'class="dl op-add"' in page
    assert "&lt;function_call&gt;" in page and "unchanged lines" in page
    assert "tools.format.per_call_start" in page
    assert 'data-case="tool call"' in page and "differs" in page


def test_a_template_compared_with_itself_says_no_difference(
    client: Client, pair: tuple[Template, Template]
) -> None:
    old, _ = pair
    page = client.get("/compare/", {"a": old.key, "b": old.key}).content.decode()
    assert "No difference: the same source." in page
    assert "No difference: both analyses find the same" in page
    assert "differs</span>" not in page


def test_unchanged_runs_are_folded_around_the_changes(pair: tuple[Template, Template]) -> None:
    view = comparing.compare(*pair)
    lines = [row for row in view.source if not isinstance(row, comparing.Fold)]
    folds = [row for row in view.source if isinstance(row, comparing.Fold)]
    assert folds and all(fold.count > 0 for fold in folds)
    total = len(lines) + sum(fold.count for fold in folds)
    assert total == len(view.comparison.source)


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ({"a": "x", "repo_id": ""}, 200, 'value="x"'),  # A alone: prefilled, B awaited
        ({"b": "x"}, 422, "Give two stored templates"),
        ({"a": "0" * 64, "b": "1" * 64}, 404, "no stored template"),
    ],
)
def test_bad_requests_say_what_is_missing(
    client: Client, query: dict[str, str], status: int, message: str
) -> None:
    response = client.get("/compare/", query)
    assert response.status_code == status
    assert message in response.content.decode()


def test_two_hub_revisions_are_fetched_and_redirect_to_the_permalink(
    client: Client, hub_env: Any
) -> None:
    response = client.get(
        "/compare/", {"repo_id": "corpus/Qwen-Qwen3-0.6B", "rev_a": "main", "rev_b": "main"}
    )
    assert response.status_code == 302
    template = Template.objects.get()
    assert response["Location"] == f"/compare/?a={template.key}&b={template.key}"


def test_a_repo_alone_lists_the_commits_that_changed_its_template(
    client: Client, hub_env: Any
) -> None:
    repo = hub_env.repos["tests/history"]
    page = client.get("/compare/", {"repo_id": "tests/history"}).content.decode()
    assert "Fix tool calls in the template" in page and "Add chat template" in page
    newest, oldest = repo.commits[3].sha, repo.commits[1].sha
    assert f"repo_id=tests%2Fhistory&amp;rev_a={oldest}&amp;rev_b={newest}" in page
    assert "first version" in page


def test_the_template_page_links_to_a_comparison_with_itself_as_a(
    client: Client, pair: tuple[Template, Template]
) -> None:
    old, _ = pair
    page = client.get(old.get_absolute_url()).content.decode()
    assert f'href="/compare/?a={old.key}"' in page
    form = client.get("/compare/", {"a": old.key}).content.decode()
    assert f'value="{old.key}"' in form and "Give two stored templates" not in form


def test_a_hostile_template_compared_ends_with_the_limit_named(
    client: Client, pair: tuple[Template, Template]
) -> None:
    spinning = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    hostile = intake.store_template(engine.load_pasted(spinning))
    response = client.get("/compare/", {"a": pair[0].key, "b": hostile.key})
    assert response.status_code == 422
    assert "took longer than" in response.content.decode()
