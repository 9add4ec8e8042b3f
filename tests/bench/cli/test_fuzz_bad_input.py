"""Property: whatever is wrong with an arm file, a data file or a result file, the command ends with exit 2, one
line on stderr, and nothing written. Each generated mutation is invalid by construction (a required field gone, a
wrong type, an unknown name, bytes that are not UTF-8, a cut file), so the property is exact, not a guess."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import random
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.cli.program import main
from bench.data.slices import SLICE_NAMES
from bench.run.arms import TOP_LEVEL_KEYS
from bench.vocab import DATA_DIR, HELDOUT_GROUP, RESULTS_DIR

FUZZ = settings(
    max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
BAD_UTF8 = st.sampled_from([b"\xff", b"\xc3\x28", b"\xe9", b"\x80abc", b"\xed\xa0\x80"])


def cli(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    """Run the CLI in-process; its exit code and what it printed on stderr."""
    err = io.StringIO()
    monkeypatch.setattr("sys.argv", ["engram-bench", *argv])
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            main()
            code = 0
        except SystemExit as exited:
            code = int(exited.code or 0)
    return code, err.getvalue().strip()


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def assert_refused(code: int, err: str) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("engram-bench: ") and "Traceback" not in err


@contextlib.contextmanager
def workspace() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        yield Path(tmp)


# ---------------------------------------------------------------------------------------------------- arm files

GOOD_ARM = 'description = "raw turns"\nsystem = "raw-turn-rag"\nk = [2, 5]\n\n[k_by_slice]\ndev = 3\n'


@st.composite
def broken_arms(draw: st.DrawFn) -> bytes:
    kind = draw(
        st.sampled_from(["unknown_key", "bad_k", "slice_typo", "system", "extends", "utf8", "syntax", "setting"])
    )
    if kind == "unknown_key":
        key = draw(NAME.filter(lambda n: n not in TOP_LEVEL_KEYS))
        return (GOOD_ARM.replace("k = [2, 5]", f"k = [2, 5]\n{key} = 1")).encode()
    if kind == "bad_k":
        value = draw(st.sampled_from(["0", "-3", '"three"', "2.5", "[]", "[2, 2]", "true", "[1, 0]"]))
        return GOOD_ARM.replace("k = [2, 5]", f"k = {value}").encode()
    if kind == "slice_typo":
        key = draw(NAME.filter(lambda n: n not in (*SLICE_NAMES, HELDOUT_GROUP)))
        return GOOD_ARM.replace("dev = 3", f"{key} = 3").encode()
    if kind == "system":
        return GOOD_ARM.replace('"raw-turn-rag"', json.dumps(draw(NAME) + "-nosuch")).encode()
    if kind == "extends":
        target = draw(st.sampled_from(["../x", "/etc/passwd", "a/b", "..", "x.toml", " raw"]))
        return f"extends = {json.dumps(target)}\n{GOOD_ARM}".encode()
    if kind == "utf8":
        raw = GOOD_ARM.encode()
        cut = raw.index(b"raw turns") + draw(st.integers(0, 8))
        return raw[:cut] + draw(BAD_UTF8) + raw[cut:]
    if kind == "syntax":
        return draw(
            st.sampled_from([GOOD_ARM.replace('"raw-turn-rag"', '"raw-turn-rag'), GOOD_ARM + "[k_by_slice]\n"])
        ).encode()
    return (GOOD_ARM + f"\n[settings]\n{draw(NAME)}_nosuch = 1\n").encode()


@FUZZ
@given(arm=broken_arms())
def test_a_broken_arm_file_is_refused_before_anything_is_written(arm: bytes) -> None:
    with workspace() as tmp, pytest.MonkeyPatch.context() as mp:
        arms = tmp / "arms"
        arms.mkdir()
        (arms / "fuzzed.toml").write_bytes(arm)
        mp.setenv("ENGRAM_RUNS_DIR", str(tmp / "runs"))
        mp.setenv("ENGRAM_CACHE_DIR", str(tmp / "cache"))
        before = snapshot(tmp)
        code, err = cli(["run", "fuzzed", "--slice", "dev", "--quiet", "--arms-dir", str(arms)], mp)
        assert_refused(code, err)
        assert "fuzzed.toml" in err
        assert snapshot(tmp) == before


# ---------------------------------------------------------------------------------------------------- data files

LOCOMO = "locomo/locomo10.json"


@functools.cache
def pristine_locomo() -> list[dict[str, Any]]:
    return json.loads((DATA_DIR / LOCOMO).read_text(encoding="utf-8"))


def _turns(conv: dict[str, Any]) -> list[dict[str, Any]]:
    body = conv["conversation"]
    return [
        turn for key, turns in body.items() if key.startswith("session_") and isinstance(turns, list) for turn in turns
    ]


def _mutate_locomo(kind: str, rng: random.Random) -> bytes:
    conversations = json.loads(json.dumps(pristine_locomo()))
    conv = rng.choice(conversations)
    body = conv["conversation"]
    turn = rng.choice(_turns(conv))
    if kind == "turn_field":
        turn.pop(rng.choice(["text", "speaker", "dia_id"]))
    elif kind == "turn_type":
        turn[rng.choice(["text", "speaker", "dia_id"])] = rng.choice([None, 7, ["x"], {"a": 1}])
    elif kind == "speaker":
        body.pop(rng.choice(["speaker_a", "speaker_b"]))
    elif kind == "session_date":
        body.pop(rng.choice([k for k in body if k.endswith("_date_time")]))
    elif kind == "question":
        rng.choice(conv["qa"]).pop("question")
    elif kind == "top":
        conv.pop(rng.choice(["sample_id", "conversation", "qa"]))
    raw = json.dumps(conversations).encode()
    if kind == "utf8":
        position = raw.index(b'"text": "') + 9
        return raw[:position] + b"\xff\xfe" + raw[position:]
    if kind == "cut":
        return raw[: rng.randrange(1, len(raw) - 1)]
    return raw


def doctored_data_dir(root: Path, locomo: bytes, update_sha: bool) -> Path:
    """A data folder that links every pristine file and holds this LoCoMo file, with SOURCES.md updated to accept
    it (so the structural checks are what is tested) or not (so the sha256 check is)."""
    root.mkdir()
    for entry in DATA_DIR.iterdir():
        if entry.name not in ("locomo", "SOURCES.md"):
            (root / entry.name).symlink_to(entry)
    (root / "locomo").mkdir()
    for entry in (DATA_DIR / "locomo").iterdir():
        if entry.name != "locomo10.json":
            (root / "locomo" / entry.name).symlink_to(entry)
    (root / LOCOMO).write_bytes(locomo)
    sources = (DATA_DIR / "SOURCES.md").read_text(encoding="utf-8")
    if update_sha:
        old = hashlib.sha256((DATA_DIR / LOCOMO).read_bytes()).hexdigest()
        sources = sources.replace(old, hashlib.sha256(locomo).hexdigest())
    (root / "SOURCES.md").write_text(sources, encoding="utf-8")
    return root


@pytest.mark.slow
@FUZZ
@given(
    kind=st.sampled_from(["turn_field", "turn_type", "speaker", "session_date", "question", "top", "utf8", "cut"]),
    seed=st.integers(0, 2**16),
    update_sha=st.booleans(),
)
def test_a_damaged_locomo_file_is_refused_in_one_line(kind: str, seed: int, update_sha: bool) -> None:
    with workspace() as tmp, pytest.MonkeyPatch.context() as mp:
        data = doctored_data_dir(tmp / "data", _mutate_locomo(kind, random.Random(seed)), update_sha)
        mp.setenv("ENGRAM_DATA_DIR", str(data))
        before = snapshot(tmp)
        code, err = cli(["slices"], mp)
        assert_refused(code, err)
        assert "locomo10.json" in err
        assert snapshot(tmp) == before


# -------------------------------------------------------------------------------------------------- result files

RESULT = RESULTS_DIR / "offline" / "dev" / "mem0__k3.json"
REQUIRED = ("schema_version", "arm", "system", "stack", "slice", "k", "answers", "accuracy", "provenance", "models")
REQUIRED_IN_ANSWER = ("question_id", "conversation", "category", "scored", "question", "gold", "label")


def _mutate_result(kind: str, rng: random.Random) -> bytes:
    data = json.loads(RESULT.read_text(encoding="utf-8"))
    answer = rng.choice(data["answers"])
    if kind == "field":
        data.pop(rng.choice(REQUIRED))
    elif kind == "answer_field":
        answer.pop(rng.choice(REQUIRED_IN_ANSWER))
    elif kind == "type":
        data[rng.choice(["answers", "accuracy", "arm", "schema_version"])] = rng.choice(["x", 3.5, None, [1]])
    elif kind == "label":
        answer["label"] = "WRONG" if answer["label"] == "CORRECT" else "CORRECT"  # the summary no longer agrees
    elif kind == "no_answers":
        data["answers"], data["accuracy"], data["accuracy_by_category"] = [], {"correct": 0, "n": 0, "value": None}, {}
    elif kind == "duplicate":
        data["answers"].append(dict(answer))
    raw = json.dumps(data).encode()
    if kind == "utf8":
        position = raw.index(b'"question": "') + 13
        return raw[:position] + b"\xe9\x28" + raw[position:]
    if kind == "cut":
        return raw[: rng.randrange(1, len(raw) - 1)]
    return raw


@FUZZ
@given(
    kind=st.sampled_from(["field", "answer_field", "type", "label", "no_answers", "duplicate", "utf8", "cut"]),
    seed=st.integers(0, 2**16),
    first=st.booleans(),
)
def test_a_damaged_result_file_given_to_compare_is_refused_in_one_line(kind: str, seed: int, first: bool) -> None:
    with workspace() as tmp, pytest.MonkeyPatch.context() as mp:
        good, bad = tmp / "good.json", tmp / "bad.json"
        good.write_bytes(RESULT.read_bytes())
        bad.write_bytes(_mutate_result(kind, random.Random(seed)))
        before = snapshot(tmp)
        pair: list[Callable[[], Path]] = [lambda: good, lambda: bad]
        files = [str(p()) for p in (pair if not first else pair[::-1])]
        code, err = cli(["compare", *files], mp)
        assert_refused(code, err)
        assert "bad.json" in err
        assert snapshot(tmp) == before
