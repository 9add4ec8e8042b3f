"""Benchmark the offline stand-ins on LoCoMo conv-26 sessions 1-4 (the dev slice's 76 messages).

Prints: MiniLM load time and encode throughput at the fixed batch size; spaCy load time; the rules extractor's
time per message; the RulesDecider's time per write request (six fact questions + ten relation questions, the
article's request shape), cold and with its texts already parsed and embedded, and per read request (30 relevance
questions). Median of several runs after a warm-up;
timings on a shared 2-core machine vary by tens of percent between runs.
Run: `.venv/bin/python scripts/bench_rules_standins.py`.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOCOMO = REPO / "data" / "locomo" / "locomo10.json"
SESSIONS = ("session_1", "session_2", "session_3", "session_4")
REPEATS = 3


def dev_messages() -> list[dict]:
    conversation = json.loads(LOCOMO.read_text(encoding="utf-8"))[0]["conversation"]
    return [turn for session in SESSIONS for turn in conversation[session]]


def timed(run) -> float:
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def median_seconds(run) -> float:
    run()  # warm-up: caches of parses and vectors are part of steady state
    return statistics.median(timed(run) for _ in range(REPEATS))


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from engram import Ask, ExtractionContext, Message, MiniLMEmbedder, RulesExtractor
    from engram import _lexical as lexical
    from engram.deciders import RulesDecider
    from engram.questions import RELEVANT_TO_QUERY, fact_questions, relation_key, relation_questions, relevance_key

    turns = dev_messages()
    texts = [t["text"] for t in turns]
    print(
        f"offline stand-ins on LoCoMo conv-26 sessions 1-4 ({len(turns)} messages); "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores (shared)"
    )

    embedder = MiniLMEmbedder()
    print(f"MiniLM load + first encode: {timed(lambda: embedder.embed(['warm up'])):.2f} s")
    fresh = [f"{t} ({i})" for i, t in enumerate(texts * 4)]  # distinct texts, so nothing comes from the cache
    seconds = timed(lambda: embedder.embed(fresh))
    print(f"MiniLM encode, batch 64: {len(fresh) / seconds:.0f} sentences/s ({len(fresh)} sentences)")
    print(f"spaCy en_core_web_sm load: {timed(lexical.nlp):.2f} s")

    extractor = RulesExtractor()
    context = ExtractionContext(previous=[], similar_facts=[], current_date="2026-09-23")
    messages = [Message(t["dia_id"], t["text"], t["speaker"], datetime(2023, 5, 8)) for t in turns]
    drafts = [f for m in messages for f in extractor.extract(m, context).facts]
    lexical.parse.cache_clear()
    lexical.frame.cache_clear()
    cold = timed(lambda: [extractor.extract(m, context) for m in messages])
    print(
        f"rules extractor: {1000 * cold / len(messages):.1f} ms/message cold parse cache, "
        f"{len(drafts)} drafts from {len(messages)} messages"
    )

    decider = RulesDecider(embedder)
    relation, _ = relation_questions(2)
    questions = fact_questions(2)
    pool = [d.text for d in drafts]

    def write_request(i: int) -> None:
        draft = drafts[i % len(drafts)]
        state = {
            "new_fact": {"text": draft.text, "subject": draft.subject, "object": draft.object},
            "source_message": draft.source_text,
        }
        candidates = [pool[(i + j + 1) % len(pool)] for j in range(10)]
        asks = [Ask(q.id, q) for q in questions]
        asks += [
            Ask(relation_key(j), relation, refs={"existing_fact": {"text": c}}, target=str(j))
            for j, c in enumerate(candidates)
        ]
        decider.ask(state, asks)

    n = min(40, len(drafts))
    lexical.parse.cache_clear()
    lexical.frame.cache_clear()
    embedder.clear_cache()
    cold = timed(lambda: [write_request(i) for i in range(n)]) / n
    warm = median_seconds(lambda: [write_request(i) for i in range(n)]) / n
    print(
        f"RulesDecider write request (6 fact + 10 relation questions): {1000 * cold:.1f} ms cold "
        f"(parsing and embedding new texts), {1000 * warm:.1f} ms with texts already parsed and embedded"
    )

    def read_request() -> None:
        asks = [
            Ask(relevance_key(j), RELEVANT_TO_QUERY, refs={"memory": {"text": pool[j % len(pool)]}}) for j in range(30)
        ]
        decider.ask({"query": "What did Caroline research?"}, asks)

    print(f"RulesDecider read request (30 relevance questions): {1000 * median_seconds(read_request):.1f} ms")


if __name__ == "__main__":
    main()
