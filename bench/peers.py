"""Peer parsers for the side-by-side benchmark: SGLang's Python tool-call detectors.

SGLang is an optional, bench-only extra (`bench/README.md` has the install steps). Its package
`__init__` imports torch and the whole serving runtime; the detectors need none of it, so the
`sglang` and `sglang.srt` packages are entered as bare namespaces and only
`sglang.srt.function_call` is imported (it needs pydantic, openai, msgspec, orjson,
partial-json-parser, pybase64, requests and IPython through its protocol module).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import logging
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# Our benchmark format -> (module, class) of the SGLang detector for the same output format.
# functionary-v3.1 (`<function=NAME>{json}</function>`) has no SGLang detector.
DETECTORS = {
    "hermes-2-pro": ("hermes_detector", "HermesDetector"),
    "qwen3-coder": ("qwen3_coder_detector", "Qwen3CoderDetector"),
}


@dataclass(frozen=True)
class Calls:
    """The calls one side extracted: (name, arguments as parsed JSON) in order."""

    items: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class Peer:
    """A peer's detector for one format: one-shot and streaming entry points, which return
    the side's own result (what is timed), and `calls` to read the calls off such a result
    (not timed: the check reads every argument as JSON)."""

    name: str
    whole: Callable[[str], Any]
    stream: Callable[[Iterable[str]], Any]
    calls: Callable[[Any], Calls]
    # How many pieces of arguments text a stream sends (not timed): the sides may send a
    # value as it arrives or only once it is complete, which is not the same work.
    pieces: Callable[[Iterable[str]], int]


def _enter_namespaces() -> None:
    """Register `sglang` and `sglang.srt` as bare packages so their __init__ is not run."""
    if "sglang.srt" in sys.modules:
        return
    spec = importlib.util.find_spec("sglang")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("sglang is not installed (see bench/README.md: bench-peers)")
    root = list(spec.submodule_search_locations)[0]
    for name, path in (("sglang", root), ("sglang.srt", f"{root}/srt")):
        if name not in sys.modules:
            package = types.ModuleType(name)
            package.__path__ = [path]
            sys.modules[name] = package


def sglang_peers(tools: Sequence[Mapping[str, Any]]) -> dict[str, Peer]:
    """Return SGLang's detector for each benchmark format it has one for.

    Raises ImportError (with the missing module) when the extra is not installed."""
    return {name: sglang_peer(module, cls, tools) for name, (module, cls) in DETECTORS.items()}


def sglang_peer(module: str, cls: str, tools: Sequence[Mapping[str, Any]],
                vocabulary: Sequence[str] = ()) -> Peer:
    """Return one SGLang detector (`sglang.srt.function_call.<module>.<cls>`) as a peer.

    vocabulary: special tokens for a detector that reads its markers from the model's
    tokenizer (Hunyuan's `<tool_call:opensource>`); given to it as that tokenizer's vocabulary.
    Raises ImportError (with the missing module) when the extra is not installed."""
    _enter_namespaces()
    # Detectors log a warning per call they drop (an unknown name): the bench reports those.
    logging.getLogger("sglang").setLevel(logging.ERROR)
    protocol = importlib.import_module("sglang.srt.entrypoints.openai.protocol")
    sglang_tools = [protocol.Tool.model_validate(tool) for tool in tools]
    detector = getattr(importlib.import_module(f"sglang.srt.function_call.{module}"), cls)
    if vocabulary:
        detector = functools.partial(detector, tokenizer=Vocabulary(tuple(vocabulary)))
    return Peer(f"sglang {cls}", *_entry_points(detector, sglang_tools))


@dataclass(frozen=True)
class Vocabulary:
    """The part of a tokenizer a detector reads its marker tokens from."""

    tokens: tuple[str, ...]

    def get_vocab(self) -> dict[str, int]:
        """Return the tokens with made-up ids, as a tokenizer's vocabulary."""
        return {token: index for index, token in enumerate(self.tokens)}


def _entry_points(
    detector: Callable[[], Any], tools: list[Any]
) -> tuple[Callable[[str], Any], Callable[[Iterable[str]], Any], Callable[[Any], Calls],
           Callable[[Iterable[str]], int]]:
    """Wrap a detector class: a fresh detector per parse, as a server does per request.

    Both entry points give (name, arguments JSON text) per call, the form a client gets."""

    def whole(text: str) -> list[tuple[str, str]]:
        result = detector().detect_and_parse(text, tools)
        return [(call.name, call.parameters) for call in result.calls]

    def stream(chunks: Iterable[str]) -> list[tuple[str, str]]:
        instance = detector()
        names: dict[int, str] = {}
        arguments: dict[int, list[str]] = {}
        for chunk in chunks:
            for call in instance.parse_streaming_increment(chunk, tools).calls:
                if call.name:
                    names[call.tool_index] = call.name
                arguments.setdefault(call.tool_index, []).append(call.parameters)
        return [(names[i], "".join(arguments[i])) for i in sorted(names)]

    def calls(result: list[tuple[str, str]]) -> Calls:
        return Calls(tuple((name, json.loads(arguments)) for name, arguments in result))

    def pieces(chunks: Iterable[str]) -> int:
        instance = detector()
        return sum(1 for chunk in chunks
                   for call in instance.parse_streaming_increment(chunk, tools).calls
                   if call.parameters)

    return whole, stream, calls, pieces
