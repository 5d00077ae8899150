"""Response headers and JSON errors: JSON endpoints never answer with an HTML error page."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_missing_analysis_in_the_api_is_a_json_404_naming_what_is_missing(
    client: Client,
) -> None:
    response = client.get("/api/analyses/999/")
    assert (response.status_code, response["Content-Type"]) == (404, "application/json")
    error = response.json()["error"]
    assert error["status"] == 404 and "Analysis" in error["message"]


def test_format_json_pages_and_unrouted_api_paths_answer_errors_in_json(client: Client) -> None:
    assert client.get("/a/999/?format=json").json()["error"]["status"] == 404
    assert client.get("/api/nothing-here/").json() == {
        "error": {"status": 404, "message": "Not Found"},
        "path": "/api/nothing-here/",
    }
    latest = client.get("/corpus/api/runs/latest/")
    assert latest.json()["error"]["message"] == "no finished run yet"


def test_a_wrong_method_on_a_json_endpoint_is_a_json_405_with_allow(client: Client) -> None:
    response = client.post("/api/analyses/1/")
    assert response.status_code == 405 and response["Allow"] == "GET"
    assert response.json()["error"] == {"status": 405, "message": "Method Not Allowed"}


def test_pages_keep_their_html_error_pages(client: Client) -> None:
    response = client.get("/a/999/")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")
