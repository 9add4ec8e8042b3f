"""The protocol loses nothing: mem0 in its own process behind the memory protocol (systems/mem0/, arm
`mem0-protocol`) answers every dev question exactly as the in-process mem0 arm does, on the offline stack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.errors import SystemFailed
from bench.models.cache import LocalStore
from bench.run.runner import run_arm
from tests.bench.run_args import run_args

# Each test runs mem0 itself on the dev slice (twice in process and through the protocol, or twice behind a crashing
# proxy): whole runs of the library, minutes of CPU between them, so `make test` leaves them to `make test-all`.
pytestmark = pytest.mark.slow

COMPARED = ("question_id", "answer", "label", "lines", "sources", "retrieved_tokens", "evidence_recall", "f1")


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    folder = tmp_path_factory.mktemp("mem0-both")
    results = []
    for arm in ("mem0", "mem0-protocol"):
        options = run_args(
            runs_root=folder / "runs", out=folder / arm, cache_dir=folder / "cache", progress=False, ks=(8,)
        )
        [written] = run_arm(arm, "dev", *options)
        result = json.loads(written.read_text())
        result["keys"] = set(written.with_suffix(".calls.txt").read_text().split())
        results.append(result)
    return results[0], results[1]


def test_every_dev_answer_is_the_same_in_process_and_through_the_protocol(both: tuple[dict, dict]) -> None:
    inside, outside = both
    assert outside["system"] == "http" and inside["system"] == "mem0"
    assert len(inside["answers"]) == len(outside["answers"]) == 35
    for one, other in zip(inside["answers"], outside["answers"], strict=True):
        assert {f: one[f] for f in COMPARED} == {f: other[f] for f in COMPARED}
    assert inside["accuracy"] == outside["accuracy"]


def test_the_store_and_its_update_scoring_cross_the_protocol_too(both: tuple[dict, dict]) -> None:
    inside, outside = both
    assert inside["store"]["stored"] == outside["store"]["stored"] > 0
    assert inside["updates"] == outside["updates"]
    assert inside["extras"]["facts_produced"] == outside["extras"]["facts_produced"]
    # The adapter's mem0 calls are the in-process arm's requests (the same cache keys); the one extra call is the
    # isolation canary's extraction, in a namespace of its own.
    assert inside["keys"] < outside["keys"]
    assert len(outside["keys"] - inside["keys"]) == 1
    assert outside["calls"]["misses"] <= 1


def test_the_result_records_which_library_answered_and_how(both: tuple[dict, dict]) -> None:
    _, outside = both
    described = outside["extras"]["system"]
    assert described["memory_system"]["library"] == "mem0ai"
    assert described["memory_system"]["version"] == "2.1.0"
    assert "qdrant" in described["memory_system"]["store"]
    assert described["adapter"]["environment"] == "project"


def test_a_crash_mid_run_stops_it_and_the_rerun_replays_what_the_first_one_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The mem0 adapter behind a proxy that dies on its 21st write (the canary, then 19 dev turns got through):
    the run stops with one line and writes nothing; the rerun serves those 20 extraction calls from the cache."""
    repo = Path(__file__).resolve().parents[3]
    adapters = tmp_path / "systems"
    (adapters / "mem0-fragile").mkdir(parents=True)
    command = [
        "{python}", str(repo / "tests" / "bench" / "crash_proxy.py"), "--port", "{port}", "--die-after", "20",
        "--once-file", str(tmp_path / "crashed-once"), "--",
        "{python}", str(repo / "systems" / "mem0" / "server.py"), "--data-dir", "{data_dir}",
    ]  # fmt: skip
    (adapters / "mem0-fragile" / "adapter.toml").write_text(
        'description = "mem0 that dies once"\nlibrary = "mem0ai"\nstore = "qdrant"\nenvironment = "project"\n'
        f"command = {json.dumps(command)}\n"
    )
    monkeypatch.setenv("ENGRAM_SYSTEMS_DIR", str(adapters))
    (tmp_path / "arms").mkdir()
    (tmp_path / "arms" / "fragile.toml").write_text('system = "http"\nk = 5\n[settings]\nadapter = "mem0-fragile"\n')
    options = run_args(
        arms_dir=tmp_path / "arms",
        runs_root=tmp_path / "runs",
        out=tmp_path / "out",
        cache_dir=tmp_path / "cache",
        subsets=(),  # no shipped cache: only what the first run recorded can be served
        progress=False,
        limit=3,
    )

    with pytest.raises(SystemFailed) as raised:
        run_arm("fragile", "dev", *options)
    assert "adapter" in str(raised.value) and "POST /write of message" in str(raised.value)
    assert "\n" not in str(raised.value) and raised.value.exit_code == 2
    assert not (tmp_path / "out").exists()

    recorded = _cached_keys(tmp_path / "cache")
    assert len(recorded) >= 20  # at least the canary's and 19 turns' extraction calls

    [written] = run_arm("fragile", "dev", *options)
    result = json.loads(written.read_text())
    needed = set(written.with_suffix(".calls.txt").read_text().split())
    assert recorded <= needed  # the rerun needed every call the first run made...
    # ...and made none of them again: every one was a hit, and the cache grew only by calls not made before (at most
    # one key per miss: two identical requests in flight at once both miss and share one key)
    grown = len(_cached_keys(tmp_path / "cache")) - len(recorded)
    assert 0 < grown <= result["calls"]["misses"]
    assert result["calls"]["hits"] >= len(recorded)


def _cached_keys(folder: Path) -> set[str]:
    store = LocalStore(folder)
    try:
        return set(store.keys())
    finally:
        store.close()
