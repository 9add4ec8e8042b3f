"""Results of out-of-process systems are ordinary results: `compare` pairs them and `view` renders them, and each
reply body the harness accepts is valid under the published JSON Schema."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench.run.runner import run_arm
from tests.bench.run_args import run_args
from tests.cli_main import exit_code_of

TESTS = Path(__file__).parents[1]
SCHEMA = TESTS.parents[1] / "docs" / "memory-protocol.schema.json"


@pytest.fixture(scope="module")
def two_results(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("mcp")
    folder = tmp_path_factory.mktemp("foreign")
    arms = folder / "arms"
    arms.mkdir()
    service = json.dumps([sys.executable, str(TESTS / "memory_service.py"), "--port", "{port}"])
    notebook = json.dumps([sys.executable, str(TESTS / "mcp_memory_server.py")])
    (arms / "wordbag.toml").write_text(f'system = "http"\nk = 5\n[settings]\ncommand = {service}\n')
    (arms / "notebook.toml").write_text(f'system = "mcp"\nk = 5\n[settings]\ncommand = {notebook}\n')
    written = []
    for arm in ("wordbag", "notebook"):
        options = run_args(
            arms_dir=arms, runs_root=folder / "runs", out=folder / "out", cache_dir=folder / "cache", progress=False
        )
        written += run_arm(arm, "dev", *options)
    return written[0], written[1]


def _cli(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = exit_code_of(argv, monkeypatch)
    return code, capsys.readouterr().out


def test_compare_pairs_an_http_system_with_an_mcp_one(
    two_results: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    http_result, mcp_result = two_results
    code, out = _cli(["compare", str(http_result), str(mcp_result), "--json", "--draws", "200"], monkeypatch, capsys)
    assert code == 0
    report = json.loads(out)
    assert "wordbag" in json.dumps(report) and "notebook" in json.dumps(report)


def test_view_renders_both_side_by_side(
    two_results: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    out_file = tmp_path / "side-by-side.html"
    code, _ = _cli(["view", *map(str, two_results), "--out", str(out_file)], monkeypatch, capsys)
    html = out_file.read_text()
    assert code == 0 and "wordbag" in html and "notebook" in html


def test_every_reply_the_harness_accepts_is_valid_under_the_published_schema(tmp_path: Path) -> None:
    """The test service's replies (written from the prose of the docs) and the adapter helper's, checked against
    docs/memory-protocol.schema.json, so the hand-written checks in bench.systems.wire and the schema agree."""
    jsonschema = pytest.importorskip("jsonschema")
    import socket
    import subprocess
    import time

    import httpx

    schema = json.loads(SCHEMA.read_text())

    def valid(body: object, name: str) -> None:
        jsonschema.validate(body, {**schema, "$ref": f"#/$defs/{name}"})

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(TESTS / "memory_service.py"), "--port", str(port)])
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                health = httpx.get(url + "/health").json()
                break
            except httpx.TransportError:
                time.sleep(0.05)
        valid(health, "health_reply")
        ns = {"namespace": "schema-check"}
        request = {**ns, "id": "S1:1", "speaker": "Ottoline", "date": "4 July, 2030", "text": "I collect barometers."}
        valid(request, "write_request")
        valid(httpx.post(url + "/reset", json=ns).json(), "reset_reply")
        valid(httpx.post(url + "/write", json=request).json(), "write_reply")
        asked = {**ns, "question": "What does Ottoline collect?", "k": 2, "as_of": "4 July, 2030"}
        valid(asked, "retrieve_request")
        found = httpx.post(url + "/retrieve", json=asked).json()
        valid(found, "retrieve_reply")
        assert found["lines"][0]["sources"] == ["S1:1"]
        valid(httpx.post(url + "/stats", json=ns).json(), "stats_reply")
        refused = httpx.post(url + "/write", json={**ns, "id": "S1:2"})
        assert refused.status_code == 400
        valid(refused.json(), "error_reply")
    finally:
        proc.terminate()
        proc.wait(5)
