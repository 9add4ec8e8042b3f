"""The call cache as a user meets it: stable keys, safe concurrent writers, corruption caught, shippable subsets."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

from bench.errors import CacheError
from bench.models.cache import (
    CacheEntry,
    CallRequest,
    LocalStore,
    ShippedSubset,
    canonical_json,
    discover_subsets,
    write_subset,
)
from bench.models.gateway import Gateway, LiveResponse

REPO = Path(__file__).resolve().parents[3]
PYTHON = sys.executable

BASE = CallRequest(
    provider="anthropic",
    endpoint="messages",
    model="claude-sonnet-4-6",
    body={
        "model": "claude-sonnet-4-6",
        "system": "Answer briefly.",
        "messages": [{"role": "user", "content": "Where does Caroline live?"}],
        "max_tokens": 1024,
        "temperature": 0.0,
    },
    purpose="answer",
)


def _with_body(**changes: object) -> CallRequest:
    return replace(BASE, body={**BASE.body, **changes})


@pytest.mark.parametrize(
    "changed",
    [
        replace(BASE, provider="jev"),
        replace(BASE, endpoint="count_tokens"),
        replace(BASE, model="claude-haiku-4-5"),
        replace(BASE, replicate=1),
        _with_body(system="Answer at length."),
        _with_body(messages=[{"role": "user", "content": "Where does Melanie live?"}]),
        _with_body(max_tokens=1025),
        _with_body(temperature=0.1),
        _with_body(top_p=0.9),
        _with_body(output_format={"type": "json_schema", "schema": {"type": "object"}}),
    ],
    ids=[
        "provider",
        "endpoint",
        "model",
        "replicate",
        "system",
        "messages",
        "max_tokens",
        "temperature",
        "top_p",
        "response_format",
    ],
)
def test_changing_any_identifying_input_changes_the_key(changed: CallRequest) -> None:
    assert changed.key() != BASE.key()


def test_purpose_is_recorded_but_not_part_of_the_key() -> None:
    assert replace(BASE, purpose="judge").key() == BASE.key()


def test_key_ignores_dict_order_and_is_a_sha256() -> None:
    reordered = replace(BASE, body=dict(reversed(list(BASE.body.items()))))
    assert reordered.key() == BASE.key()
    assert len(BASE.key()) == 64 and int(BASE.key(), 16) >= 0


def test_a_body_holding_a_non_json_value_is_refused_rather_than_stringified() -> None:
    from datetime import datetime

    with pytest.raises(CacheError, match="expected plain JSON values"):
        _with_body(when=datetime(2023, 5, 8)).key()


def test_two_processes_build_the_same_key_for_the_same_request() -> None:
    script = textwrap.dedent(
        """
        import json, sys
        from bench.models.cache import CallRequest
        request = CallRequest(provider="anthropic", endpoint="messages", model="claude-sonnet-4-6",
                              body=json.loads(sys.argv[1]), purpose="answer")
        print(request.key())
        """
    )
    keys = set()
    for seed in ("1", "2"):  # different hash seeds: dict/set iteration order may differ between processes
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [PYTHON, "-c", script, json.dumps(BASE.body)], cwd=REPO, env=env, capture_output=True, text=True, check=True
        )
        keys.add(out.stdout.strip())
    assert keys == {BASE.key()}


def _entry(key: str, text: str = "hello") -> CacheEntry:
    return CacheEntry(
        key=key,
        provider="offline",
        endpoint="answer",
        model="standin",
        purpose="answer",
        replicate=0,
        body={"text": text},
        input_tokens=3,
        output_tokens=1,
        cost_usd=0.0,
        latency_ms=1.5,
        recorded_at="2026-12-02T00:00:00+00:00",
    )


def test_first_writer_wins_and_both_writers_see_the_same_value(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    first = store.add(_entry("a" * 64, "first"))
    second = store.add(_entry("a" * 64, "second"))
    assert first.body == second.body == {"text": "first"}
    assert store.get("a" * 64).body == {"text": "first"}


def test_threads_writing_the_same_cache_lose_nothing(tmp_path: Path) -> None:
    gateway = Gateway(local=tmp_path, subsets=[])

    def call(i: int) -> str:
        request = CallRequest("offline", "answer", "standin", {"q": i % 50}, "answer")
        return gateway.call(request, lambda r: LiveResponse(body={"a": r.body["q"]})).key

    with ThreadPoolExecutor(max_workers=8) as pool:
        keys = list(pool.map(call, range(200)))
    assert len(set(keys)) == 50
    assert len(gateway.local) == 50
    assert all(gateway.local.get(k) is not None for k in keys)


WRITER = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from bench.models.cache import CallRequest
    from bench.models.gateway import Gateway, LiveResponse
    cache_dir, start, stop = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    gateway = Gateway(local=cache_dir, subsets=[])
    seen = {}
    for i in range(start, stop):
        request = CallRequest("offline", "answer", "standin", {"question": i}, "answer")
        result = gateway.call(request, lambda r: LiveResponse(body={"answer": r.body["question"], "pid": os.getpid()}))
        seen[result.key] = result.body
    # read back everything, including what the other process wrote
    for i in range(0, 300):
        request = CallRequest("offline", "answer", "standin", {"question": i}, "answer")
        entry = gateway.local.get(request.key())
        if entry is not None:
            seen[request.key()] = entry.body
    print(json.dumps(seen))
    """
)


def test_two_processes_writing_and_reading_the_same_cache_lose_nothing(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    # Overlapping ranges: keys 100..199 are written by both processes at about the same time.
    procs = [
        subprocess.Popen([PYTHON, "-c", WRITER, str(cache_dir), lo, hi], cwd=REPO, stdout=subprocess.PIPE, text=True)
        for lo, hi in (("0", "200"), ("100", "300"))
    ]
    outputs = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    store = LocalStore(cache_dir)
    assert len(store) == 300
    for key in set(outputs[0]) & set(outputs[1]):
        assert outputs[0][key] == outputs[1][key] == store.get(key).body  # one value per key, everywhere


def test_a_corrupt_entry_is_reported_with_its_key_and_file_never_served(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    stored = store.add(_entry("b" * 64, "true answer"))
    tampered = json.loads(stored.to_json_text())
    tampered["body"] = {"text": "tampered answer"}
    store.put_raw(stored.key, canonical_json(tampered))
    with pytest.raises(CacheError) as caught:
        store.get(stored.key)
    assert stored.key in str(caught.value) and "cache.db" in str(caught.value) and "checksum" in str(caught.value)
    store.put_raw(stored.key, "{not json")
    with pytest.raises(CacheError, match="b" * 64):
        store.get(stored.key)


def test_the_local_store_never_evicts(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    assert store._cache.eviction_policy == "none"


def test_a_subset_exports_byte_identically_and_verifies_on_read(tmp_path: Path) -> None:
    entries = [_entry(c * 64, f"answer {c}") for c in "fedcba"]
    write_subset(entries, tmp_path / "one", source="run-1")
    write_subset(list(reversed(entries)), tmp_path / "two", source="run-1")
    for name in ("calls.jsonl", "manifest.json"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()
    lines = (tmp_path / "one" / "calls.jsonl").read_text().splitlines()
    assert [json.loads(line)["key"] for line in lines] == sorted(c * 64 for c in "abcdef")
    subset = ShippedSubset(tmp_path / "one")
    assert len(subset) == 6 and subset.get("a" * 64).body == {"text": "answer a"}


def test_an_edited_subset_is_refused_naming_the_file(tmp_path: Path) -> None:
    write_subset([_entry("c" * 64)], tmp_path / "dev", source="run-1")
    path = tmp_path / "dev" / "calls.jsonl"
    path.write_text(path.read_text().replace("hello", "HELLO"))
    with pytest.raises(CacheError, match=r"calls\.jsonl: expected sha256"):
        ShippedSubset(tmp_path / "dev")


def test_a_damaged_entry_of_a_resealed_subset_is_refused_when_it_is_read(tmp_path: Path) -> None:
    # Someone edits one answer and writes the manifest's sha256 anew: the file matches its manifest, so the subset
    # opens, but that entry no longer matches its own checksum. It is refused, naming its line, when it is read
    # (or verified); the entries next to it are served.
    nested = _entry("b" * 64, "hello")
    nested = replace(nested, body={"text": "hello", "key": "e" * 64})  # a body with a "key" of its own
    write_subset([_entry("a" * 64), nested, _entry("c" * 64)], tmp_path / "dev", source="run-1")
    path = tmp_path / "dev" / "calls.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace("hello", "HELLO")
    path.write_text("".join(lines))
    manifest = json.loads((tmp_path / "dev" / "manifest.json").read_text())
    manifest["sha256"] = hashlib.sha256(path.read_bytes()).hexdigest()
    (tmp_path / "dev" / "manifest.json").write_text(json.dumps(manifest))
    subset = ShippedSubset(tmp_path / "dev")
    assert len(subset) == 3 and sorted(subset.keys()) == ["a" * 64, "b" * 64, "c" * 64]
    assert subset.get("a" * 64).body == {"text": "hello"}
    assert subset.get("b" * 64).body == {"text": "hello", "key": "e" * 64}
    assert subset.get("e" * 64) is None
    with pytest.raises(CacheError, match=r"calls\.jsonl:3: entry c{64} fails its checksum"):
        subset.get("c" * 64)
    with pytest.raises(CacheError, match=r"calls\.jsonl:3"):
        subset.verify()


def test_shipped_subsets_are_read_before_the_local_cache(tmp_path: Path) -> None:
    request = CallRequest("offline", "answer", "standin", {"q": "which first?"}, "answer")
    local = LocalStore(tmp_path / "local")
    local.add(replace(_entry(request.key(), "from local")))
    local.close()
    write_subset([_entry(request.key(), "from subset")], tmp_path / "dev", source="run-1")
    gateway = Gateway(local=tmp_path / "local", subsets=[tmp_path / "dev"])
    result = gateway.call(request, lambda r: pytest.fail("must not compute: cached"))
    assert result.body == {"text": "from subset"} and result.cached


def test_every_committed_subset_reads_back_intact() -> None:
    # A run verifies only the entries it reads; this checks every entry of every subset the repository ships.
    subsets = [ShippedSubset.open(path) for path in discover_subsets()]
    assert subsets, "the repository ships call subsets under cache/"
    for subset in subsets:
        subset.verify()
        assert len(subset) == subset.manifest.entries
