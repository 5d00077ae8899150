"""`python -m analyzer render FILE --messages M.json [...]`: print the exact prompt.

With `--vs-kwarg`, `--vs-messages` or `--vs-tools` it renders a second time with those inputs
changed and prints both renders' diff instead (the differing parts in `[[ ]]`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from analyzer.analysis.playground import (
    RenderDiff,
    RenderRequest,
    diff_renders,
    render_conversation,
)
from analyzer.cli.main import CliInputError, load_template_argument, read_json
from analyzer.parsing.report import quote


def register(subparsers: Any) -> None:
    """Add the render subcommand."""
    parser = subparsers.add_parser(
        "render", help="render a conversation through the template (the exact prompt)",
        description="Render messages through a chat template exactly as transformers' "
                    "apply_chat_template does, and print the prompt byte for byte.")
    parser.add_argument("file", type=Path, help="template: .jinja, chat_template.json or "
                                                "tokenizer_config.json (- reads standard input)")
    parser.add_argument("--messages", type=Path, required=True,
                        help="JSON file: a list of messages, or {\"messages\": [...], "
                             "\"tools\": [...]}")
    parser.add_argument("--tools", type=Path, help="JSON file: a list of tool definitions")
    parser.add_argument("--kwarg", action="append", default=[], metavar="NAME=JSON",
                        help="a template variable, e.g. enable_thinking=false (repeatable; a "
                             "value that is not JSON is taken as a string)")
    parser.add_argument("--no-generation-prompt", action="store_true",
                        help="do not append the assistant's generation prompt")
    parser.add_argument("--continue-final-message", nargs="?", const="content", default="",
                        metavar="FIELD",
                        help="end the prompt inside the final message, to continue it (its "
                             "content, or FIELD such as reasoning_content)")
    parser.add_argument("--bos-token", default=None, help="override the template's bos_token")
    parser.add_argument("--eos-token", default=None, help="override the template's eos_token")
    parser.add_argument("--template-name", default=None, help="named template to use")
    parser.add_argument("--vs-kwarg", action="append", default=[], metavar="NAME=JSON",
                        help="render again with this kwarg changed and print the diff")
    parser.add_argument("--vs-messages", type=Path, help="render again with these messages")
    parser.add_argument("--vs-tools", type=Path, help="render again with these tools")
    parser.add_argument("--json", action="store_true",
                        help="print the request, the prompt and the kwargs the template reads")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Render the conversation and print the prompt (or the diff of two renders)."""
    source = load_template_argument(args.file, args.template_name)
    request = build_request(args)
    result = render_conversation(source, request)
    if args.vs_kwarg or args.vs_messages or args.vs_tools:
        other = render_conversation(source, changed_request(request, args))
        sys.stdout.write(format_render_diff(diff_renders(result, other)))
    elif args.json:
        sys.stdout.write(json.dumps({"prompt": result.prompt,
                                     "request": json.loads(request.to_json()),
                                     "render_mode": result.render_mode.value,
                                     "template_kwargs": list(result.template_kwargs),
                                     "unused_kwargs": list(result.unused_kwargs)},
                                    ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.write(result.prompt)
    for name in result.unused_kwargs:
        print(f"note: the template never reads kwarg {name!r}", file=sys.stderr)
    if result.render_note:
        print(f"note: rendered leniently (as llama.cpp's Jinja would); transformers refuses: "
              f"{result.render_note}", file=sys.stderr)
    return 0


def build_request(args: argparse.Namespace) -> RenderRequest:
    """Build the request from the files and options."""
    data = read_json(args.messages, "--messages")
    messages = data.get("messages") if isinstance(data, dict) else data
    tools = read_json(args.tools, "--tools") if args.tools else (
        data.get("tools") if isinstance(data, dict) else None)
    if isinstance(tools, dict):
        tools = tools.get("tools")
    return RenderRequest.make(
        messages if messages is not None else [], tools=tools,
        kwargs=parse_kwargs(args.kwarg, "--kwarg"),
        add_generation_prompt=not args.no_generation_prompt and not args.continue_final_message,
        continue_final_message=args.continue_final_message,
        bos_token=args.bos_token, eos_token=args.eos_token)


def changed_request(request: RenderRequest, args: argparse.Namespace) -> RenderRequest:
    """The request of the second render: the first one with the --vs-* inputs."""
    changes: dict[str, Any] = {}
    if args.vs_kwarg:
        changes["kwargs"] = {**request.kwargs, **parse_kwargs(args.vs_kwarg, "--vs-kwarg")}
    if args.vs_messages:
        data = read_json(args.vs_messages, "--vs-messages")
        changes["messages"] = data.get("messages") if isinstance(data, dict) else data
    if args.vs_tools:
        tools = read_json(args.vs_tools, "--vs-tools")
        changes["tools"] = tools.get("tools") if isinstance(tools, dict) else tools
    return request.with_changes(**changes)


def parse_kwargs(pairs: list[str], option: str) -> dict[str, Any]:
    """Read NAME=JSON pairs; a value that is not JSON stays a string."""
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.isidentifier():
            raise CliInputError(f"{option} {pair!r}: expected NAME=JSON, e.g. "
                                   "enable_thinking=false")
        try:
            kwargs[name] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[name] = value
    return kwargs


def format_render_diff(rd: RenderDiff) -> str:
    """Show what changed between two renders, both middles quoted, the common part elided."""
    changed = ", ".join(rd.changed_inputs) or "nothing"
    if rd.identical:
        return f"changed: {changed}\nno difference: both renders are the same " \
               f"({len(rd.left.prompt)} characters)\n"
    d = rd.diff
    return (f"changed: {changed}\n"
            f"common prefix: {len(d.prefix)} characters, common suffix: {len(d.suffix)}\n"
            f"- {quote(d.prefix[-40:])[1:-1]}[[{quote(d.left)[1:-1]}]]"
            f"{quote(d.suffix[:40])[1:-1]}\n"
            f"+ {quote(d.prefix[-40:])[1:-1]}[[{quote(d.right)[1:-1]}]]"
            f"{quote(d.suffix[:40])[1:-1]}\n")
