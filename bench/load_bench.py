"""Load the lab as `bin/lab` runs it: live streams over websockets and concurrent page GETs.

Usage: .venv/bin/python bench/load_bench.py [--web-workers 2] [--streams 50] [--text-kb 10]
       [--chunk 4] [--tick-ms 40] [--gets 200]

Starts Valkey, one Celery worker and the web server (`--web-workers` processes, lab.web) on a
fresh SQLite database in a temporary folder, pastes a corpus template through the form and
waits for its analysis, then
- live: `--streams` websockets at once, each typing `--text-kb` KB into the live box in
  `--chunk`-character appends every `--tick-ms` ms (the page's replay speed); latency is from
  sending an append to its reply; a stream that loses its socket or a reply is "dropped";
- pages: `--gets` concurrent GETs of the analysis page (after one warm-up GET per web worker),
  each on its own connection; latency is until the whole body is read.
Prints p50/p95/max per part and the load average before each. Wall-clock times on a shared
2-core machine: run it when the machine is quiet, and more than once.
"""

from __future__ import annotations

import argparse
import asyncio
import http.cookiejar
import json
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lab.run import free_port, migrate, start_valkey, start_web, start_worker, stop  # noqa: E402

CORPUS = ROOT / ".." / "shared" / "corpus" / "templates"
TEMPLATE = CORPUS / "Qwen-Qwen3-0.6B.jinja"
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def model_output(size: int) -> str:
    """Build `size` characters of a Qwen3 answer: reasoning, then content."""
    words = "the weather in Paris is mild today and the forecast says sun later "
    thought = (words * (size // 2 // len(words) + 1))[: size // 2]
    reasoning = "<think>\n" + thought + "\n</think>\n\n"
    return reasoning + (words * (size // len(words) + 1))[: size - len(reasoning)]


def submit_paste(base: str, source: str) -> int:
    """Paste a template through the form as a browser would; return the analysis id."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(
        http.cookiejar.CookieJar()))
    token = TOKEN.search(opener.open(base + "/").read().decode())
    assert token is not None, "the home page has no CSRF token"
    form = urllib.parse.urlencode({"source": source, "csrfmiddlewaretoken": token.group(1)})
    response = opener.open(base + "/new/paste/", form.encode())
    match = re.search(r"/a/(\d+)/", response.geturl())
    assert match is not None, f"the paste went to {response.geturl()}"
    return int(match.group(1))


def wait_done(base: str, analysis_id: int, timeout: float = 60) -> None:
    """Poll the analysis JSON until it is done."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/analyses/{analysis_id}/") as response:
            status = json.loads(response.read())["status"]
        if status == "done":
            return
        assert status != "failed", "the analysis failed"
        time.sleep(0.2)
    raise TimeoutError("the analysis did not finish")


async def live_stream(url: str, origin: str, text: str, chunk: int, tick: float) -> list[float]:
    """Type text into one live socket; return the latency of each append's reply."""
    latencies: list[float] = []
    async with websockets.connect(url, origin=origin, max_size=None) as socket:  # type: ignore[arg-type]
        await socket.recv()  # the greeting state
        for at in range(0, len(text), chunk):
            sent = time.perf_counter()
            await socket.send(json.dumps({"type": "append", "chunk": text[at : at + chunk]}))
            reply = json.loads(await asyncio.wait_for(socket.recv(), timeout=10))
            latencies.append(time.perf_counter() - sent)
            assert reply["type"] == "delta" and reply["received"] == at + len(
                text[at : at + chunk]), reply
            await asyncio.sleep(max(0.0, tick - (time.perf_counter() - sent)))
    return latencies


async def live_part(base: str, analysis_id: int, args: argparse.Namespace) -> None:
    url = base.replace("http://", "ws://") + f"/ws/a/{analysis_id}/live/"
    text = model_output(args.text_kb * 1000)
    streams = [live_stream(url, base, text, args.chunk, args.tick_ms / 1000)
               for _ in range(args.streams)]
    results = await asyncio.gather(*streams, return_exceptions=True)
    latencies = [ms for r in results if isinstance(r, list) for ms in r]
    dropped = [r for r in results if not isinstance(r, list)]
    report(f"live: {args.streams} streams x {len(text):,} chars in {args.chunk}-char appends"
           f" every {args.tick_ms} ms", latencies)
    print(f"  dropped streams: {len(dropped)}" + (f" ({dropped[0]!r})" if dropped else ""))


async def timed_get(host: str, port: int, path: str) -> float:
    """GET a page on a fresh connection; return the seconds until its body is read."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n"
                 .encode())
    await writer.drain()
    head = await reader.readline()
    await reader.read()  # to the end: the server closes after the body
    writer.close()
    assert b" 200 " in head, head
    return time.perf_counter() - started


async def pages_part(base: str, analysis_id: int, args: argparse.Namespace) -> None:
    parsed = urllib.parse.urlsplit(base)
    host, port, path = parsed.hostname or "127.0.0.1", parsed.port or 80, f"/a/{analysis_id}/"
    for _ in range(2 * args.web_workers):  # each worker renders the page once
        await timed_get(host, port, path)
    latencies = await asyncio.gather(*(timed_get(host, port, path) for _ in range(args.gets)))
    report(f"pages: {args.gets} concurrent GETs of {path}", list(latencies))


def report(what: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    if not ms:
        print(f"{what}: nothing measured")
        return
    p95 = statistics.quantiles(ms, n=100)[94] if len(ms) > 1 else ms[0]
    print(f"{what}: n={len(ms)}, p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms,"
          f" max {ms[-1]:.1f} ms")


def print_load(when: str) -> None:
    """Wall-clock numbers mean little without the machine's load beside them."""
    one, five, _ = os.getloadavg()
    print(f"  load average {when}: {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores")


def run(args: argparse.Namespace, work: Path) -> None:
    env = {"DJANGO_SETTINGS_MODULE": "lab.settings", "PYTHONUNBUFFERED": "1",
           "PATH": "/usr/bin:/bin", "DATABASE_URL": f"sqlite:///{work / 'lab.sqlite3'}"}
    migrate(env)
    processes = []
    try:
        valkey, env["REDIS_URL"] = start_valkey(work / "valkey", log=work / "valkey.log")
        processes.append(valkey)
        processes.append(start_worker(env, concurrency=1, log=work / "worker.log"))
        port = free_port()
        processes.append(start_web(env, "127.0.0.1", port, log=work / "web.log",
                                   workers=args.web_workers))
        base = f"http://127.0.0.1:{port}"
        analysis_id = submit_paste(base, TEMPLATE.read_text())
        wait_done(base, analysis_id)
        print(f"lab: {args.web_workers} web worker(s) at {base}, analysis {analysis_id}")
        if args.gets:
            print_load("before the pages")
            asyncio.run(pages_part(base, analysis_id, args))
        if args.streams:
            print_load("before the live streams")
            asyncio.run(live_part(base, analysis_id, args))
        print_load("at the end")
    finally:
        stop(processes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--text-kb", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=4)
    parser.add_argument("--tick-ms", type=int, default=40)
    parser.add_argument("--gets", type=int, default=200)
    parser.add_argument("--show-logs", action="store_true", help="print the services' logs")
    args = parser.parse_args()
    if not TEMPLATE.is_file():
        sys.exit(f"needs {TEMPLATE} (the shared corpus)")
    with tempfile.TemporaryDirectory(prefix="lab-load-") as work:
        try:
            run(args, Path(work))
        finally:
            if args.show_logs:
                for log in sorted(Path(work).glob("*.log")):
                    print(f"--- {log.name}\n{log.read_text()[-3000:]}")


if __name__ == "__main__":
    main()
