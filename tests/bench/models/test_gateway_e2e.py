"""End to end: record a small run against local Anthropic and Jev servers, export the calls it read with the CLI,
stop the servers, replay from the exported subset alone and get identical output. Then: no secret anywhere."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import sys
from pathlib import Path

import pytest
from fakeservers import FakeModelServer

from bench.disk.atomic import write_json
from bench.errors import CacheMiss
from bench.models.budget import Budget, Ledger, RunLabels
from bench.models.cache import LocalStore, ShippedSubset
from bench.models.clients.wrappers import OfflineLLM
from bench.models.gateway import Gateway
from bench.models.providers.anthropic.client import AnthropicLLM
from bench.models.providers.jev.client import JevDecider
from engram import Ask, Question

REPO = Path(__file__).resolve().parents[3]
ANTHROPIC_KEY = "sk-ant-FAKE-0123456789abcdef"
JEV_KEY = "ts-FAKE-fedcba9876543210"
TEMPORAL = Question(
    id="temporal_status",
    kind="choice",
    instructions="When is it true?",
    criteria={"current": "true now", "planned": "future", "past": "earlier only"},
    default="current",
)
WORTH = Question(
    id="worth_remembering",
    kind="yes_no",
    instructions="Keep it?",
    criteria={"yes": "stable detail", "no": "small talk"},
    default="no",
)


class UpperJudge(OfflineLLM):
    model = "judge-standin-v1"

    def respond(self, *, role, system, messages, max_tokens, temperature) -> str:
        return "CORRECT" if "boston" in messages[-1]["content"].lower() else "WRONG"


def small_run(gateway: Gateway) -> dict:
    """A miniature paper-stack run: extraction prompt, two typed decisions, an answer, a judge, a token count."""
    llm, jev = AnthropicLLM(gateway), JevDecider(gateway, requests_per_second=1000)
    try:
        out: dict = {}
        for i, text in enumerate(["I moved to Boston in May.", "We might adopt a dog next year."]):
            extraction = llm.complete(
                role="extract",
                model="claude-haiku-4-5",
                system="Extract facts.",
                messages=[{"role": "user", "content": text}],
                max_tokens=2000,
                temperature=0.1,
            )
            state = {"new_fact": {"text": text, "subject": "caroline", "object": "unspecified"}}
            decisions = jev.ask(state, [Ask("temporal", TEMPORAL), Ask("worth", WORTH)])
            out[f"message-{i}"] = {
                "extraction": _plain(extraction),
                "decisions": {k: d.to_json() for k, d in sorted(decisions.items())},
            }
        answer = llm.complete(
            role="answer",
            model="claude-sonnet-4-6",
            system="Answer briefly.",
            messages=[{"role": "user", "content": "Where does Caroline live?"}],
            max_tokens=1024,
            temperature=0.0,
        )
        judged = UpperJudge(gateway).complete(
            role="judge",
            model="claude-sonnet-4-6",
            system=None,
            messages=[{"role": "user", "content": "gold: Boston"}],
            max_tokens=1024,
            temperature=0.0,
        )
        out["answer"], out["judge"] = _plain(answer), _plain(judged)
        out["tokens"] = llm.count_tokens("claude-sonnet-4-6", [{"role": "user", "content": "Caroline: Boston"}])
        return out
    finally:
        llm.close()
        jev.close()


def _plain(completion) -> dict:
    data = dataclasses.asdict(completion)
    data.pop("cached")  # the one field that must differ between a recording and its replay
    return data


def _gateway(cache_dir: Path, tmp_path: Path, **kw) -> Gateway:
    labels = RunLabels("e2e-run", arm="engram", slice_name="dev")
    return Gateway(local=cache_dir, labels=labels, budget=Budget(Ledger(tmp_path / "ledger.jsonl"), labels), **kw)


def run_cli(*args: str) -> tuple[int, str, str]:
    """`engram-bench ...` in this process (the CLI's imports are paid once per session): (exit code, out, err)."""
    import bench.cli.program

    out, err, argv = io.StringIO(), io.StringIO(), sys.argv
    sys.argv = ["engram-bench", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            bench.cli.program.main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory):
    """Record the small run live against the fake servers, write its result and key list, export the subset.
    Recorded once for the module: every test below reads these artefacts and never changes them."""
    tmp_path = tmp_path_factory.mktemp("e2e")
    log_path = tmp_path / "run.log"
    handler = logging.FileHandler(log_path)  # every library log line, at every level: the secrets test scans it
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler), root.setLevel(logging.DEBUG)
    anthropic_server, jev_server = FakeModelServer().start(), FakeModelServer().start()
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
            env.setenv("TYPESAFE_URL", jev_server.url)
            env.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
            env.setenv("TYPESAFE_API_KEY", JEV_KEY)
            cache_dir, result = tmp_path / "cache-local", tmp_path / "results" / "engram.json"
            with _gateway(cache_dir, tmp_path, subsets=[], mode="record") as gateway:
                output = small_run(gateway)
                write_json(result, output)
                gateway.write_keys(result.with_suffix(".calls.txt"))
    finally:
        anthropic_server.stop(), jev_server.stop()
        root.removeHandler(handler), root.setLevel(old_level)
        handler.close()
    sent = anthropic_server.count() + jev_server.count()
    keys_seen = {
        v
        for server in (anthropic_server, jev_server)
        for r in server.requests
        for v in r.headers.values()
        if ANTHROPIC_KEY in v or JEV_KEY in v
    }
    code, out, err = run_cli(
        "cache", "export", "--run", str(result), "--out", str(tmp_path / "subset"), "--cache-dir", str(cache_dir)
    )
    assert code == 0, err
    with log_path.open("a") as log:
        log.write(out + err)
    return {
        "output": output,
        "result": result,
        "subset": tmp_path / "subset",
        "sent": sent,
        "keys_seen": keys_seen,
        "cache_dir": cache_dir,
        "servers": (anthropic_server, jev_server),
        "tmp": tmp_path,
        "export_output": out,
    }


def test_a_recorded_run_replays_identically_from_its_exported_subset_with_servers_stopped(
    recorded, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("ANTHROPIC_API_KEY", "TYPESAFE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    assert recorded["sent"] == 2 + 2 + 1 + 1  # two extractions, two Jev requests, one answer, one count
    subset = ShippedSubset(recorded["subset"])
    assert len(subset) == 2 + 4 + 1 + 1 + 1  # the judge stand-in is in the subset too
    with _gateway(None, tmp_path, subsets=[recorded["subset"]], strict=True) as replay:
        assert small_run(replay) == recorded["output"]
        counts = replay.counts()
        assert sum(c.misses for c in counts.values()) == 0 and replay.spent_usd == 0.0
    assert sum(server.count() for server in recorded["servers"]) == recorded["sent"]  # nothing sent on replay


def test_the_export_says_which_files_it_wrote(recorded) -> None:
    out = recorded["export_output"]
    subset = recorded["subset"]
    assert f"wrote {subset / 'calls.jsonl'}  (9 entries, sha256 " in out
    assert f"wrote {subset / 'manifest.json'}" in out
    assert out.startswith("cache export: the 9 calls listed in ")


def test_re_exporting_the_same_run_is_byte_identical(recorded, tmp_path: Path) -> None:
    code, _, err = run_cli(
        "cache",
        "export",
        "--run",
        str(recorded["result"]),
        "--out",
        str(tmp_path / "again"),
        "--cache-dir",
        str(recorded["cache_dir"]),
    )
    assert code == 0, err
    for name in ("calls.jsonl", "manifest.json"):
        assert (tmp_path / "again" / name).read_bytes() == (recorded["subset"] / name).read_bytes()


def test_a_replay_miss_stops_the_run_naming_provider_model_purpose_and_key(recorded, tmp_path: Path) -> None:
    with _gateway(None, tmp_path, subsets=[recorded["subset"]]) as replay:
        llm = AnthropicLLM(replay)
        with pytest.raises(CacheMiss, match=r"anthropic/claude-sonnet-4-6 \(purpose answer, key [0-9a-f]{64}\)"):
            llm.complete(
                role="answer",
                model="claude-sonnet-4-6",
                system="Answer briefly.",
                messages=[{"role": "user", "content": "A question nobody recorded"}],
                max_tokens=1024,
            )


def test_no_api_key_appears_in_the_cache_subset_results_or_logs(recorded) -> None:
    tmp_path = recorded["tmp"]
    places = [
        recorded["cache_dir"],
        recorded["subset"],
        recorded["result"].parent,
        tmp_path / "run.log",
        tmp_path / "ledger.jsonl",
    ]
    files = [p for place in places for p in ([place] if place.is_file() else place.rglob("*")) if p.is_file()]
    assert len(files) >= 6
    assert b"Request options" in (tmp_path / "run.log").read_bytes()  # the SDK's debug logging was captured too
    assert len(recorded["keys_seen"]) == 2  # the keys really were used on the wire, so a leak was possible
    for secret in (ANTHROPIC_KEY, JEV_KEY, "FAKE-0123456789", "fedcba9876543210"):
        hits = [str(p) for p in files if secret.encode() in p.read_bytes()]
        assert hits == [], f"{secret!r} found in {hits}"


def test_cache_stats_shows_entries_size_and_the_last_runs_hits_and_misses(recorded) -> None:
    code, out, err = run_cli("cache", "stats", "--cache-dir", str(recorded["cache_dir"]))
    assert code == 0, err
    assert "9 entries" in out and "e2e-run" in out
    assert "0 hits, 9 misses" in out and "anthropic" in out


def test_export_of_an_unrecorded_run_is_one_line_and_exit_code_2(tmp_path: Path) -> None:
    code, _, err = run_cli("cache", "export", "--run", str(tmp_path / "nothing.json"), "--out", str(tmp_path / "out"))
    assert code == 2
    assert err.strip().count("\n") == 0 and "nothing.calls.txt" in err
    assert not (tmp_path / "out").exists()


def test_cache_stats_of_a_run_without_arm_or_slice_says_so_instead_of_none(tmp_path: Path) -> None:
    # What `gateway serve` leaves: counters of a run that was no benchmark run.
    LocalStore(tmp_path).close()
    counters = {"run_id": "gateway-serve-offline", "hits": 3, "misses": 1, "spent_usd": 0.0, "by_provider": {}}
    (tmp_path / "last_run.json").write_text(json.dumps(counters))
    code, out, err = run_cli("cache", "stats", "--cache-dir", str(tmp_path))
    assert code == 0, err
    assert "gateway-serve-offline (no arm or slice: not a benchmark run): 3 hits, 1 misses" in out
    assert "None" not in out


def test_cache_stats_writes_counts_with_thousands_separators_like_every_other_screen(tmp_path: Path) -> None:
    # `plan` and the run banner write 2,484; cache stats wrote the shipped subsets' 3145 and 23843.
    LocalStore(tmp_path).close()
    code, out, err = run_cli("cache", "stats", "--cache-dir", str(tmp_path))
    assert code == 0, err
    manifest = json.loads((REPO / "cache" / "dev" / "manifest.json").read_text())
    assert manifest["entries"] >= 1000  # a count that needs a separator
    assert f"cache/dev: {manifest['entries']:,} entries" in out
