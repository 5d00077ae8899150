"""Downloads of an analysis: grammar, parser dump, analysis JSON, verify report (as files)."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from django.test import Client

from analyzer.cli.main import main
from analyzer.gbnf import grammar_accepts
from lab.analyses import engine, intake
from lab.analyses.models import Analysis
from lab.analyses.tasks import run_analysis

pytestmark = pytest.mark.django_db
FORMATS = Path(__file__).resolve().parents[2] / "templates_corpus" / "formats"
TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}}}}]


@pytest.fixture
def done(db: None) -> Analysis:
    source = (FORMATS / "tools_tagged.jinja").read_text()
    analysis = intake.request_analysis(intake.store_template(engine.load_pasted(source)))
    run_analysis(analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE, analysis.error
    return analysis


def test_the_grammar_downloads_as_a_gbnf_file(client: Client, done: Analysis) -> None:
    options = quote(json.dumps({"tools": TOOLS}))
    response = client.get(f"/a/{done.pk}/grammar.gbnf?options={options}")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="analysis-{done.pk}.gbnf"'
    grammar = response.content.decode()
    assert grammar.startswith("# lazy: yes\n# trigger (word): '<tool_call>'\n")
    assert "# preserved tokens: " in grammar
    call = ("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
            "</function>\n</tool_call>")
    assert grammar_accepts(grammar, call)
    assert not grammar_accepts(grammar, call.replace("get_weather", "get_time"))


def test_the_parser_dump_downloads_as_text(client: Client, done: Analysis) -> None:
    response = client.get(f"/a/{done.pk}/parser.txt")
    assert response["Content-Disposition"].endswith(f'filename="analysis-{done.pk}-parser.txt"')
    assert "<function=" in response.content.decode()


def test_the_analysis_json_downloads_byte_for_byte(client: Client, done: Analysis) -> None:
    response = client.get(f"/a/{done.pk}/analysis.json")
    assert response["Content-Disposition"].endswith(f'filename="analysis-{done.pk}.json"')
    assert response.content.decode() == done.result_json


def test_the_verify_report_downloads_as_json(client: Client, done: Analysis) -> None:
    response = client.get(f"/a/{done.pk}/verify.json")
    assert response["Content-Disposition"].endswith(f'filename="analysis-{done.pk}-verify.json"')
    report = json.loads(response.content)
    assert report["template_sha256"] == done.template.sha256
    assert report["round_trip"] in ("pass", "fail", "skip") and report["cases"]


def test_the_files_are_what_the_command_line_prints(
    client: Client, done: Analysis, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template, tools = FORMATS / "tools_tagged.jinja", tmp_path / "tools.json"
    tools.write_text(json.dumps(TOOLS))
    (tmp_path / "output.txt").write_text("Hi")
    options = quote(json.dumps({"tools": TOOLS}))

    def printed(*args: str) -> tuple[str, str]:
        capsys.readouterr()
        main([args[0], str(template), *args[1:]])
        captured = capsys.readouterr()
        return captured.out, captured.err

    assert printed("analyze", "--json")[0] == download(client, f"/a/{done.pk}/analysis.json") + "\n"
    assert printed("verify", "--json")[0] == download(client, f"/a/{done.pk}/verify.json") + "\n"
    grammar = printed("grammar", "--tools", str(tools))[0]
    assert grammar == download(client, f"/a/{done.pk}/grammar.gbnf?options={options}")
    dump = printed("parse", "--input", str(tmp_path / "output.txt"), "--tools", str(tools),
                   "--grammar")[1]
    assert dump.startswith(download(client, f"/a/{done.pk}/parser.txt?options={options}") + "\n")


def download(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.content
    return response.content.decode()


def test_bad_options_are_a_json_error(client: Client, done: Analysis) -> None:
    response = client.get(f"/a/{done.pk}/grammar.gbnf?options=%7Bnot-json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "bad_options"


def test_an_unfinished_analysis_has_no_files(client: Client, done: Analysis) -> None:
    Analysis.objects.filter(pk=done.pk).update(status=Analysis.Status.QUEUED)
    assert client.get(f"/a/{done.pk}/analysis.json").status_code == 404
