"""What a replayed model call costs through the gateway endpoint (bench/models/endpoint) against the same call in-process.

A foreign system in another process reaches the gateway over HTTP; an in-process system calls it directly. Both read
the same cache entry. This script records N chat calls shaped like an extraction (a dev message in a ~2 KB prompt,
a ~0.5 KB JSON reply) straight into a fresh cache (no server: the entries are written by the gateway from a local
function, under the keys the `local` stack's client would use), then replays them in rounds, interleaved so load
changes hit both sides alike:

- in-process: `OpenAIChat.chat(body, "extract")`, the path engram and the baselines take (the anchor);
- endpoint, raw HTTP: the same body as JSON to /v1/chat/completions over one keep-alive connection, sent with the
  standard library's http.client (the least a client can add: what the endpoint itself costs);
- endpoint, httpx: the same over httpx, the HTTP client most Python systems' SDKs are built on;
- endpoint, openai SDK: `client.chat.completions.create(...)`, as a foreign system would call it (the SDK's own
  request building and reply parsing included, which a system pays with any server).

It prints the median per-call time of each side, calls per second, and the endpoint's extra cost per call against
the anchor (the goal: at most 2 ms), with the CPU model and the load average before and after.

    .venv/bin/python scripts/bench_endpoint.py [--calls 200] [--rounds 5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import openai

from bench.data.slices import load_slice
from bench.models.budget import RunLabels
from bench.models.cache import CallRequest
from bench.models.endpoint import start_endpoint
from bench.models.gateway import Gateway, LiveResponse
from bench.models.providers import Models
from bench.models.providers.openai.client import OpenAIChat
from bench.models.stacks import build_stack

GOAL_MS = 2.0
SYSTEM_PROMPT = (
    "You extract durable facts about the speakers from one chat message. Reply with JSON: "
    '{"facts": [{"subject": ..., "predicate": ..., "object": ...}]}. ' * 12
)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def bodies(count: int, model: str) -> list[dict[str, Any]]:
    messages = load_slice("dev").messages
    out = []
    for i in range(count):
        message = messages[i % len(messages)]
        out.append(
            {
                "model": model,
                "messages": [
                    {"role": "system", "content": SYSTEM_PROMPT},
                    {"role": "user", "content": f"[{i}] {message.speaker}: {message.text}"},
                ],
                "max_tokens": 300,
                "temperature": 0,
                "response_format": {"type": "json_object"},
            }
        )
    return out


def reply_for(body: dict[str, Any], index: int) -> dict[str, Any]:
    facts = [{"subject": "speaker", "predicate": f"said thing {j}", "object": f"detail {index}-{j}"} for j in range(6)]
    return {
        "id": f"chatcmpl-{index}",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": json.dumps({"facts": facts})},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 480, "completion_tokens": 120, "total_tokens": 600},
    }


def record(gateway: Gateway, chat: OpenAIChat, sent: list[dict[str, Any]]) -> None:
    """The entries the stack's client would have cached, written without a server (the replay never knows)."""
    for index, body in enumerate(sent):
        request = CallRequest("openai", "chat.completions", body["model"], body, "extract", 0, chat.target)
        reply = reply_for(body, index)
        gateway.call(request, lambda _r, reply=reply: LiveResponse(body=reply, input_tokens=480, output_tokens=120))


def per_call_ms(calls: list[Callable[[], Any]]) -> float:
    start = time.perf_counter()
    for call in calls:
        call()
    return (time.perf_counter() - start) * 1000 / len(calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    stack = build_stack("local")
    upstream_model = stack.ref("extract").model
    with tempfile.TemporaryDirectory() as tmp:
        gateway = Gateway(local=Path(tmp) / "cache", subsets=[], mode="replay", labels=RunLabels("bench-endpoint"))
        hub = Models.for_stack(stack.name, stack.models, gateway, lambda: None)  # type: ignore[arg-type,return-value]
        chat = hub.chat("extract")
        assert isinstance(chat, OpenAIChat)
        sent = bodies(args.calls, upstream_model)
        gateway.modes["openai"] = "record"  # only to write the entries; every measured call below is a replay
        record(gateway, chat, sent)
        gateway.modes["openai"] = "replay"
        foreign = [{**body, "model": "engram-bench/extract"} for body in sent]
        handle = start_endpoint(stack, gateway=gateway, hub=hub)
        raw = httpx.Client(base_url=handle.base_url, timeout=30)
        plain = http.client.HTTPConnection("127.0.0.1", handle.port, timeout=30)

        def post(body: dict[str, Any]) -> None:
            plain.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
            reply = plain.getresponse()
            reply.read()
            assert reply.status == 200, reply.status

        sdk = openai.OpenAI(base_url=handle.base_url, api_key="none", max_retries=0)
        try:
            # one warm-up pass each: connections, the SDK's lazy imports, the cache's first reads
            check = chat.chat(sent[0], "extract").body
            assert raw.post("/chat/completions", json=foreign[0]).json()["choices"] == check["choices"]
            sdk.chat.completions.create(**foreign[0])
            post(foreign[0])
            sides: dict[str, list[float]] = {
                "in-process": [],
                "endpoint (raw HTTP)": [],
                "endpoint (httpx)": [],
                "endpoint (openai SDK)": [],
            }
            for _ in range(args.rounds):
                sides["in-process"].append(per_call_ms([lambda b=b: chat.chat(b, "extract") for b in sent]))
                sides["endpoint (raw HTTP)"].append(per_call_ms([lambda b=b: post(b) for b in foreign]))
                sides["endpoint (httpx)"].append(
                    per_call_ms([lambda b=b: raw.post("/chat/completions", json=b).raise_for_status() for b in foreign])
                )
                sides["endpoint (openai SDK)"].append(
                    per_call_ms([lambda b=b: sdk.chat.completions.create(**b) for b in foreign])
                )
            served = handle.report()["calls"]["extract"]
        finally:
            raw.close()
            plain.close()
            sdk.close()
            handle.stop()
            hub.close()
            gateway.close()
    assert served == {"cached": 3 + args.rounds * 3 * args.calls}, served  # every endpoint call was a cache hit
    load_after = os.getloadavg()[0]
    print(
        f"replayed chat calls, {args.calls} distinct per round, {args.rounds} rounds interleaved; "
        f"{cpu_model()}, {os.cpu_count()} cores, load average {load_before:.2f} before / {load_after:.2f} after"
    )
    anchor = statistics.median(sides["in-process"])
    print(f"{'path':<24}{'ms per call':>13}{'calls/s':>10}{'extra ms vs in-process':>25}")
    for name, values in sides.items():
        median = statistics.median(values)
        extra = "(anchor)" if name == "in-process" else f"{median - anchor:+.3f}"
        print(f"{name:<24}{median:>13.3f}{1000 / median:>10.0f}{extra:>25}")
    worst = statistics.median(sides["endpoint (raw HTTP)"]) - anchor
    verdict = "within" if worst <= GOAL_MS else "OVER"
    print(f"endpoint overhead (raw HTTP): {worst:.3f} ms per call, {verdict} the {GOAL_MS:g} ms goal")


if __name__ == "__main__":
    main()
