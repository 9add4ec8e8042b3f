"""Does a run keep a local OpenAI-compatible server busy? Requests in flight at the server, and the speed-up over one
request at a time (the anchor, measured in the same run).

A local HTTP server answers each chat completion after a fixed delay (a stand-in for a model's own time) and counts
the requests it is serving at every moment. The client is the harness's `OpenAIChat` behind a live gateway, driven
by the runner's answer pool (`ANSWER_CONCURRENCY` threads), once with the local stack's concurrency
(`stacks/local.toml`) and once with concurrency 1. About 10 seconds.

    .venv/bin/python scripts/bench_openai_inflight.py [--calls 60] [--delay-ms 100]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench.models.gateway import Gateway
from bench.models.providers.openai.client import OpenAIChat
from bench.models.stacks import build_stack
from bench.run.planner import ANSWER_CONCURRENCY


class Busy:
    """Requests in flight, sampled at every arrival and departure (time-weighted mean, max)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0
        self.area = 0.0
        self.since = time.perf_counter()
        self.start = self.since

    def change(self, delta: int) -> None:
        with self.lock:
            t = time.perf_counter()
            self.area += self.now * (t - self.since)
            self.since = t
            self.now += delta
            self.peak = max(self.peak, self.now)

    def mean(self) -> float:
        return self.area / max(self.since - self.start, 1e-9)


def serve(delay_s: float, busy: Busy) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            busy.change(+1)
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            time.sleep(delay_s)
            reply = {
                "id": "chatcmpl-bench",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11},
            }
            payload = json.dumps(reply).encode()
            busy.change(-1)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return server


def drive(calls: int, concurrency: int, delay_s: float, tag: str) -> tuple[float, Busy]:
    busy = Busy()
    server = serve(delay_s, busy)
    host, port = server.server_address[:2]
    with tempfile.TemporaryDirectory() as folder:
        gateway = Gateway(local=Path(folder), subsets=[], mode="live")
        client = OpenAIChat(gateway, f"http://{host}:{port}/v1", max_concurrency=concurrency)

        def one(n: int) -> str:
            question = [{"role": "user", "content": f"{tag} question {n}"}]
            return client.complete(
                role="answer", model="local-model", system=None, messages=question, max_tokens=8, temperature=0.0
            ).text

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=ANSWER_CONCURRENCY) as pool:
            replies = list(pool.map(one, range(calls)))
        wall = time.perf_counter() - started
        client.close()
        gateway.close()
    server.shutdown()
    server.server_close()
    assert replies == ["ok"] * calls
    return wall, busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--delay-ms", type=float, default=100.0)
    args = parser.parse_args()
    declared = build_stack("local").settings("openai").concurrency or 1
    delay = args.delay_ms / 1000
    anchor_wall, anchor = drive(args.calls, 1, delay, "anchor")
    wall, busy = drive(args.calls, declared, delay, "declared")
    print(
        f"{args.calls} chat completions, server time {args.delay_ms:.0f} ms each, {ANSWER_CONCURRENCY} answer threads"
    )
    print(f"concurrency 1 (anchor): {anchor_wall:.2f} s, in flight mean {anchor.mean():.2f}, max {anchor.peak}")
    print(
        f"concurrency {declared} (stacks/local.toml): {wall:.2f} s, in flight mean {busy.mean():.2f}, max {busy.peak}; "
        f"{anchor_wall / wall:.2f}x the anchor's throughput (ideal {declared:.2f}x)"
    )


if __name__ == "__main__":
    main()
