"""`python -m analyzer render`: the exact prompt, kwargs, and the diff of two renders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from analyzer.analysis.playground import RenderRequest, render_conversation
from analyzer.cli.main import main
from analyzer.render.loading import load_template_file

ROOT = Path(__file__).resolve().parents[3]
FORMATS = ROOT / "templates_corpus" / "formats"
TOOLS = [{"type": "function", "function": {"name": "get_weather",
                                           "parameters": {"type": "object"}}}]
MESSAGES = [{"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "get_weather",
                                                  "arguments": {"city": "Paris"}}}]}]


@pytest.fixture
def messages(tmp_path: Path) -> Path:
    path = tmp_path / "messages.json"
    path.write_text(json.dumps({"messages": MESSAGES, "tools": TOOLS}), encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = main(["render", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_it_prints_the_prompt_byte_for_byte(messages: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    template = FORMATS / "tools_tagged.jinja"
    status, out, _ = run(capsys, str(template), "--messages", str(messages))
    expected = render_conversation(load_template_file(template),
                                   RenderRequest.make(MESSAGES, tools=TOOLS)).prompt
    assert status == 0 and out == expected
    assert out.endswith("<|im_start|>assistant\n")
    assert "<parameter=city>\nParis\n</parameter>" in out


def test_no_generation_prompt_leaves_the_assistant_turn_out(
        messages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(capsys, str(FORMATS / "tools_tagged.jinja"), "--messages", str(messages),
                    "--no-generation-prompt")
    assert out.endswith("<|im_end|>\n")


def test_it_continues_the_final_message_with_the_given_special_tokens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "bos.jinja"
    template.write_text("{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}"
                        "{{ eos_token }}{% endfor %}{% if add_generation_prompt %}<assistant>"
                        "{% endif %}", encoding="utf-8")
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "Hi"},
                                        {"role": "assistant", "content": "The answer is"}]))
    status, out, _ = run(capsys, str(template), "--messages", str(conversation),
                         "--continue-final-message", "--bos-token", "<s>", "--eos-token", "</s>")
    assert status == 0 and out == "<s><user>Hi</s><assistant>The answer is"


def test_kwargs_are_json_and_the_unread_ones_are_noted(
        messages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, str(FORMATS / "think_forced_closed.jinja"), "--messages",
                           str(messages), "--kwarg", "enable_thinking=false", "--kwarg",
                           "mood=calm", "--json")
    data = json.loads(out)
    assert status == 0 and data["request"]["kwargs"] == {"enable_thinking": False, "mood": "calm"}
    assert "enable_thinking" in data["template_kwargs"]
    assert data["unused_kwargs"] == ["mood"] and "never reads kwarg 'mood'" in err


def test_vs_kwarg_prints_the_diff_of_two_renders(messages: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, str(FORMATS / "think_forced_closed.jinja"), "--messages",
                         str(messages), "--kwarg", "enable_thinking=true", "--vs-kwarg",
                         "enable_thinking=false")
    assert status == 0
    assert out.startswith("changed: kwargs.enable_thinking\n")
    minus, plus = (line for line in out.splitlines() if line[:2] in ("- ", "+ "))
    assert minus != plus and "[[" in minus and "[[" in plus


def test_a_bad_kwarg_is_a_clear_error(messages: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, str(FORMATS / "plain.jinja"), "--messages", str(messages),
                         "--kwarg", "enable_thinking")
    assert status == 2 and "expected NAME=JSON" in err


def test_a_bad_messages_file_is_a_clear_error(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.json"
    path.write_text("[{", encoding="utf-8")
    status, _, err = run(capsys, str(FORMATS / "plain.jinja"), "--messages", str(path))
    assert status == 2 and f"--messages {path}: not JSON" in err


def test_the_template_can_come_from_standard_input(messages: Path) -> None:
    template = (FORMATS / "tools_tagged.jinja").read_text(encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "analyzer", "render", "-", "--messages",
                           str(messages)], input=template, capture_output=True, text=True,
                          check=True, cwd=ROOT)
    assert "<function=get_weather>" in done.stdout


def test_a_lenient_render_is_noted(messages: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "appends.jinja"
    template.write_text("{% set xs = [] %}{{ xs.append(1) or '' }}{{ xs | length }}")
    status, out, err = run(capsys, str(template), "--messages", str(messages))
    assert status == 0 and out == "1"
    assert "rendered leniently" in err and "transformers refuses" in err
