"""Does a run of a pooled slice keep a provider's declared concurrency busy? `full-context` on the `locomo` slice (ten
conversations) against a fake OpenAI-compatible server that answers every request after a fixed delay.

The server (a stand-in for a model: it answers "fake answer", and a verdict to a judge prompt) runs in its own
process and counts the requests it serves and how many were in flight at once. The run is the real command line,
`engram-bench run full-context --slice locomo --stack bench-fake`, with a stack file of its own whose
`concurrency` is 32, in a fresh temporary cache, runs and output folder (nothing committed changes and nothing is
cached for real). It runs twice in the same invocation: once with a 0 ms server (the anchor: start-up, loading the
slice, building prompts, the cache and the files, everything but the wait) and once with the delay (200 ms).

    ideal = requests x delay / concurrency         (every slot busy for the whole run)
    ratio = wall(delay) / (ideal + wall(0 ms))     (the goal: at most 1.5)

    .venv/bin/python scripts/bench_concurrency.py [--delay-ms 200] [--concurrency 32] [--slice locomo]

Several minutes on a shared 2-core machine (two runs of 1540 questions, each answered and judged).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.sharedctypes import Synchronized
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MODEL = "fake-model"
ROLES = ("extract", "decide", "escalate", "llm_decider", "answer", "judge", "count_tokens")


def stack_file(port: int, concurrency: int) -> str:
    roles = "\n".join(f'{role} = "openai/{MODEL}"' for role in ROLES)
    return (
        'description = "a fake OpenAI-compatible server on 127.0.0.1 (scripts/bench_concurrency.py; a stand-in)"\n'
        'label = "fake server stand-in (bench_concurrency.py)"\n\n'
        f"[roles]\n{roles}\n\n"
        f'[providers.openai]\nbase_url = "http://127.0.0.1:{port}/v1"\npaid = false\n'
        f"concurrency = {concurrency}\ntimeout_s = 120.0\nretries = 2\n\n"
        f"[providers.openai.prices]\n{MODEL} = {{ input = 0.0, output = 0.0 }}\n"
    )


def reply_for(body: dict) -> bytes:
    prompt = json.dumps(body.get("messages", []))
    text = '{"label": "CORRECT"}' if "CORRECT" in prompt and "WRONG" in prompt else "fake answer"
    return json.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", MODEL),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": len(prompt) // 4, "completion_tokens": 2, "total_tokens": len(prompt) // 4 + 2},
        }
    ).encode()


def serve(
    delay_s: float,
    ready: Synchronized,
    served: Synchronized,
    peak: Synchronized,
    received: Synchronized | None = None,
) -> None:
    """The fake server's process: answer every chat completion after `delay_s`, counting requests, the most in
    flight at once and (when given `received`) the request bytes."""
    lock = threading.Lock()
    in_flight = 0

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body leave in two writes: with Nagle's algorithm on, the body waits for the client's delayed
        # ACK (about 40 ms), which a one-request-at-a-time client pays on every call.
        disable_nagle_algorithm = True

        def do_POST(self) -> None:
            nonlocal in_flight
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            body = json.loads(raw)
            with lock:
                in_flight += 1
                peak.value = max(peak.value, in_flight)
                if received is not None:
                    received.value += len(raw)
            time.sleep(delay_s)
            payload = reply_for(body)
            with lock:
                in_flight -= 1
                served.value += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.request_queue_size = 256
    ready.value = server.server_address[1]
    server.serve_forever(poll_interval=0.05)


def measure(root: Path, delay_ms: float, concurrency: int, slice_name: str) -> tuple[float, int, int]:
    """(wall seconds of the command, requests served, most in flight) for one run against a server of `delay_ms`."""
    ctx = multiprocessing.get_context("spawn")
    port, served, peak = ctx.Value("i", 0), ctx.Value("i", 0), ctx.Value("i", 0)
    server = ctx.Process(target=serve, args=(delay_ms / 1000, port, served, peak), daemon=True)
    server.start()
    while port.value == 0:
        time.sleep(0.02)
    here = root / f"delay-{delay_ms:g}ms"
    stacks = here / "stacks"
    stacks.mkdir(parents=True)
    for shipped in (REPO / "stacks").glob("*.toml"):  # arms name the shipped stacks, so they stay available
        shutil.copy(shipped, stacks / shipped.name)
    (stacks / "bench-fake.toml").write_text(stack_file(port.value, concurrency), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ENGRAM_"))}
    env |= {
        "ENGRAM_STACKS_DIR": str(stacks),
        "ENGRAM_CACHE_DIR": str(here / "cache"),
        "ENGRAM_RUNS_DIR": str(here / "runs"),
        "ENGRAM_LEDGER": str(here / "ledger.jsonl"),
    }
    argv = [sys.executable, "-m", "bench", "--quiet", "run", "full-context", "--slice", slice_name]
    argv += ["--stack", "bench-fake", "--mode", "live", "--out", str(here / "out")]
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    server.terminate()
    server.join()
    if done.returncode != 0:
        raise SystemExit(f"the run at {delay_ms:g} ms failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    return wall, served.value, peak.value


def machine() -> tuple[str, str]:
    model = "unknown CPU"
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return model, load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=32, help="the stack file's concurrency")
    parser.add_argument("--slice", default="locomo")
    args = parser.parse_args()
    cpu, load_before = machine()
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as folder:
        root = Path(folder)
        anchor_wall, anchor_requests, anchor_peak = measure(root, 0.0, args.concurrency, args.slice)
        wall, requests, peak = measure(root, args.delay_ms, args.concurrency, args.slice)
    _, load_after = machine()
    ideal = requests * args.delay_ms / 1000 / args.concurrency
    print(f"CPU: {cpu}; load average before {load_before}, after {load_after}")
    print(f"full-context on {args.slice}, stack concurrency {args.concurrency}, fake server {args.delay_ms:g} ms")
    print(f"anchor (0 ms server): {anchor_wall:.1f} s for {anchor_requests} requests, at most {anchor_peak} in flight")
    print(f"{args.delay_ms:g} ms server: {wall:.1f} s for {requests} requests, at most {peak} in flight")
    print(f"ideal wait: {requests} x {args.delay_ms / 1000:g} s / {args.concurrency} = {ideal:.1f} s")
    print(f"ratio: wall / (ideal + anchor) = {wall:.1f} / ({ideal:.1f} + {anchor_wall:.1f}) = "
          f"{wall / (ideal + anchor_wall):.2f} (goal: at most 1.5)")  # fmt: skip
    print(f"waiting share: (wall - anchor) / ideal = {(wall - anchor_wall) / ideal:.2f}")


if __name__ == "__main__":
    main()
