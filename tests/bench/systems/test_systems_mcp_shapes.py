"""MCP memory servers shaped like real ones (tests/bench/mcp_shaped_servers.py) run from a TOML alone: tools chosen by
what they are for, arguments fixed with placeholders, plain-text replies split into hits, refusals counted, and a
store that never leaves the run's own folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from arm_runs import folder_options

from bench.errors import SystemFailed, UnhealthyRun
from bench.run.runner import run_arm
from bench.systems import mcp_system

pytest.importorskip("mcp")

SHAPED = Path(__file__).parents[1].joinpath("mcp_shaped_servers.py")
NOTEBOOK = Path(__file__).parents[1].joinpath("mcp_memory_server.py")


def _arm(folder: Path, name: str, argv: list[str], settings: str, k: int = 4) -> None:
    arms = folder / "arms"
    arms.mkdir(exist_ok=True)
    (arms / f"{name}.toml").write_text(
        f'system = "mcp"\nk = {k}\n[settings]\ncommand = {json.dumps(argv)}\ntimeout_s = 30\n{settings}\n'
    )


def _run(folder: Path, name: str, limit: int = 4, **extra: object) -> dict:
    [written] = run_arm(name, "dev", *folder_options(folder, limit, **extra))
    return json.loads(written.read_text())


SERVICE_SETTINGS = """
reset_tool = "memory_delete"
reset_args = { tags = ["{namespace}"] }
ingest_args = { conversation_id = "{namespace}", metadata = { tags = "{namespace}" } }
env = { SERVICE_BASE_DIR = "{data_dir}/service" }
"""


GRAPH_SETTINGS = """
ingest_tool = "create_entities"
ingest_args = { entities = [{ name = "{message_id}", entityType = "turn", observations = ["{text}"] }] }
env = { MEMORY_FILE_PATH = "{data_dir}/memory.json" }
"""


def test_a_service_shaped_server_gets_its_memory_tools_and_hits_without_hashes_or_clock_times(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_system, "_ANNOUNCED", set())  # shown once per process: this test's run shows it first
    _arm(tmp_path, "service", [sys.executable, str(SHAPED), "service"], SERVICE_SETTINGS)
    result = _run(tmp_path, "service")

    tools = result["extras"]["system"]["tools"]
    assert tools["search"]["tool"] == "memory_search"  # not mistake_note_search, though it has fewer arguments
    assert tools["search"]["namespace_arg"] == "agent_id" and tools["search"]["k_arg"] == "limit"
    assert tools["ingest"]["tool"] == "memory_store"
    assert tools["ingest"]["fixed_args"]["conversation_id"] == "{namespace}"
    assert "memory_search(query, agent_id, limit)" in capsys.readouterr().out  # on the first screen
    answers = result["answers"]
    assert any(a["lines"] for a in answers)
    for answer in answers:
        assert len(answer["lines"]) <= 4
        for line, sources in zip(answer["lines"], answer["sources"], strict=True):
            assert line.startswith("[") and "Hash:" not in line and "Created:" not in line and not line[0].isdigit()
            assert len(sources) == 1
    assert result["store"]["health"]["refused_writes"] == 0
    # The store went where the env table said, inside the run's data dir.
    [stored] = (tmp_path / "runs").rglob("service/memories.json")
    assert "system-data" in str(stored)


def test_a_graph_shaped_server_stores_each_turn_as_an_entity_from_a_json_template(tmp_path: Path) -> None:
    _arm(tmp_path, "graph", [sys.executable, str(SHAPED), "graph"], GRAPH_SETTINGS, k=3)
    result = _run(tmp_path, "graph", limit=3)
    described = result["extras"]["system"]
    assert described["tools"]["search"] == {"tool": "search_nodes", "text_arg": "query"}
    assert described["tools"]["reset"] is None and described["isolation"] == "one process per conversation"
    assert described["k_applied_by"].startswith("harness")
    hit = [(a["lines"], a["sources"]) for a in result["answers"] if a["lines"]]
    assert hit
    for lines, sources in hit:
        assert len(lines) <= 3
        assert all(len(s) == 1 and s[0].startswith("D") for s in sources)  # the entity's name is the message id
    assert list((tmp_path / "runs").rglob("memory.json"))


NOTES_SETTINGS = """
ingest_args = { title = "{message_id}", directory = "{namespace}" }
search_args = { output_format = "json" }
reset_tool = "delete_note"
reset_args = { identifier = "{namespace}", is_directory = true }
"""


def test_a_notes_shaped_server_runs_once_its_required_arguments_are_fixed(tmp_path: Path) -> None:
    _arm(tmp_path, "notes", [sys.executable, str(SHAPED), "notes"], NOTES_SETTINGS)
    result = _run(tmp_path, "notes")
    tools = result["extras"]["system"]["tools"]
    assert tools["search"]["tool"] == "search_notes"  # the one-argument connector `search` is not a memory search
    assert tools["ingest"] == {
        "tool": "write_note",
        "text_arg": "content",
        "fixed_args": {"title": "{message_id}", "directory": "{namespace}"},
    }
    assert result["store"]["stored"] == 76
    assert result["store"]["health"]["refused_resets"] >= 1  # the fresh data dir had no folder to delete: counted
    assert any(a["lines"] for a in result["answers"])
    [index] = (tmp_path / "runs").rglob("notes-index.json")
    assert "system-data" in str(index)  # the working folder is the run's data dir, never the checkout


def test_without_fixed_arguments_the_notes_server_is_one_line_saying_which_setting_to_add(tmp_path: Path) -> None:
    _arm(tmp_path, "bare-notes", [sys.executable, str(SHAPED), "notes"], "")
    with pytest.raises(SystemFailed) as raised:
        _run(tmp_path, "bare-notes")
    message = str(raised.value)
    assert "write_note: required arguments ['directory', 'title'] are not filled" in message
    assert "settings.ingest_args" in message and "\n" not in message


def test_refused_writes_are_counted_until_they_pass_the_threshold(tmp_path: Path) -> None:
    # Every turn of a speaker gets the same title: the server refuses all but the first of each.
    refusing = NOTES_SETTINGS.replace('title = "{message_id}"', 'title = "{speaker}"')
    _arm(tmp_path, "strict-notes", [sys.executable, str(SHAPED), "notes"], refusing)
    with pytest.raises(SystemFailed) as raised:
        _run(tmp_path, "strict-notes")
    assert "Note already exists" in str(raised.value) and "settings.max_refused_writes=0.1" in str(raised.value)

    _arm(tmp_path, "lenient-notes", [sys.executable, str(SHAPED), "notes"], refusing + "max_refused_writes = 1.0\n")
    result = _run(tmp_path, "lenient-notes")
    assert result["store"]["health"]["refused_writes"] == 74 and result["store"]["stored"] == 2


def test_a_search_that_finds_nothing_for_most_questions_is_unhealthy_and_fails_strict(tmp_path: Path) -> None:
    wrong = SERVICE_SETTINGS + 'search_tool = "mistake_note_search"\n'
    _arm(tmp_path, "mistaken", [sys.executable, str(SHAPED), "service"], wrong)
    result = _run(tmp_path, "mistaken")
    assert "retrieval: 4 of 4 retrievals came back empty" in result["extras"]["health"]["problems"]
    with pytest.raises(UnhealthyRun) as raised:
        _run(tmp_path, "mistaken", health_strict=True, out=tmp_path / "strict-out")
    assert "retrievals came back empty" in str(raised.value)


def test_a_server_that_keeps_its_store_under_home_keeps_it_in_the_run(tmp_path: Path) -> None:
    _arm(tmp_path, "home-notebook", [sys.executable, str(NOTEBOOK), "--store-in-home"], "", k=2)
    _run(tmp_path, "home-notebook", limit=2)
    [notes] = (tmp_path / "runs").rglob("notes.json")
    assert notes.parent.name == ".notebook" and notes.parent.parent.name == "home"
    assert "system-data" in str(notes)


def test_an_env_value_with_an_unknown_placeholder_is_one_line_when_the_arm_loads(tmp_path: Path) -> None:
    _arm(tmp_path, "typo", [sys.executable, str(NOTEBOOK)], 'env = { NOTEBOOK_DATA_DIR = "{datadir}/x" }')
    with pytest.raises(Exception) as raised:
        _run(tmp_path, "typo")
    assert "settings.env.NOTEBOOK_DATA_DIR" in str(raised.value) and "{data_dir}" in str(raised.value)
    assert not (tmp_path / "runs").exists()  # refused before anything started


def _contract(folder: Path, settings: str, shape: str = "service", *flags: str) -> dict[str, tuple[bool, str]]:
    from bench.systems.contract import context_builder, offline_gateway, run_contract
    from bench.systems.mcp_system import McpSystem

    resolved = McpSystem.validate_settings(
        {"command": [sys.executable, str(SHAPED), shape, *flags], "timeout_s": 30, **_toml(settings)}
    )
    with offline_gateway(folder / "cache") as gateway:
        outcomes = run_contract(context_builder("mcp", resolved, "offline", gateway), folder / "check", reuse_dir=True)
    return {o.check: (o.passed, o.detail) for o in outcomes}


def _toml(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


def test_the_contract_passes_a_server_whose_reset_is_a_fresh_data_dir(tmp_path: Path) -> None:
    outcomes = _contract(tmp_path, GRAPH_SETTINGS, "graph")
    assert all(passed for passed, _ in outcomes.values()), outcomes
    assert set(outcomes) >= {"round trip", "reset isolation", "replay", "namespace isolation"}
    assert "keyword" not in outcomes["round trip"][1]  # the question itself found the turn


def test_a_server_that_matches_text_passes_the_round_trip_by_the_turns_name_and_says_its_questions_find_little(
    tmp_path: Path,
) -> None:
    outcomes = _contract(tmp_path, GRAPH_SETTINGS, "graph", "--substring")
    assert all(passed for passed, _ in outcomes.values()), outcomes
    passed, detail = outcomes["round trip"]
    assert "found only by its keyword 'Odalys'" in detail
    assert "the question 'Where did Odalys move to?' itself found nothing" in detail
    assert "a run's questions will retrieve little" in detail
    # Reset and replay ask the name too: the question alone finds nothing before a reset or after it, proving nothing.
    assert outcomes["replay"][1] == "the same 1 lines from the same turns written again"


def test_a_server_that_finds_the_turn_neither_by_question_nor_by_name_fails_the_round_trip(tmp_path: Path) -> None:
    # The text goes in a field the server ignores: nothing is stored, which is what the round trip is for.
    unfindable = GRAPH_SETTINGS.replace('observations = ["{text}"]', 'observations = [], note = "{text}"')
    passed, detail = _contract(tmp_path, unfindable, "graph", "--substring")["round trip"]
    assert not passed
    assert "'Where did Odalys move to?' (no lines), then 'Odalys'" in detail and "got 0 lines" in detail


def test_a_run_on_a_server_that_matches_text_reports_its_empty_retrievals(tmp_path: Path) -> None:
    """The contract passes it on a name; a run asks questions, finds nothing for them, and its health says so."""
    _arm(tmp_path, "substring", [sys.executable, str(SHAPED), "graph", "--substring"], GRAPH_SETTINGS)
    result = _run(tmp_path, "substring")
    assert [a["lines"] for a in result["answers"]] == [[]] * 4
    assert "retrieval: 4 of 4 retrievals came back empty" in result["extras"]["health"]["problems"]


def test_the_replay_check_catches_a_clock_in_the_lines_and_strip_removes_it(tmp_path: Path) -> None:
    clocked = SERVICE_SETTINGS + "meta_lines = '^\\s*Hash:'\n"  # Created: lines (wall clock) now reach the hits
    passed, detail = _contract(tmp_path / "clocked", clocked)["replay"]
    assert not passed and "Created:" in detail and "settings.strip" in detail
    stripped = clocked + "strip = '\\s*Created: \\S+'\n"
    assert _contract(tmp_path / "stripped", stripped)["replay"][0]


def test_placeholders_are_absolute_paths_when_the_runs_folder_is_given_relative(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A relative MEMORY_FILE_PATH would be resolved against the server's own folder (its working folder here).
    monkeypatch.chdir(tmp_path)
    _arm(tmp_path, "graph", [sys.executable, str(SHAPED), "graph"], GRAPH_SETTINGS, k=2)
    _run(tmp_path, "graph", limit=2, runs_root=Path("runs"), arms_dir=Path("arms"))
    [stored] = (tmp_path / "runs").rglob("memory.json")
    # in the run's data dir, not in a copy of the relative path under it (the server's working folder)
    assert str(stored.relative_to(tmp_path)).count("system-data") == 1, stored


def test_lines_carrying_todays_clock_are_named_on_the_terminal_and_in_the_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clocked = SERVICE_SETTINGS + "meta_lines = '^\\s*Hash:'\n"  # the Created: wall-clock lines reach the hits
    _arm(tmp_path, "clocked", [sys.executable, str(SHAPED), "service"], clocked)
    result = _run(tmp_path, "clocked")
    err = capsys.readouterr().err
    assert err.count("a retrieved line carries") == 1 and "settings.strip" in err
    assert result["store"]["health"]["volatile_hits"] > 0
    assert any("changes (no replay)" in p for p in result["extras"]["health"]["problems"])

    _arm(tmp_path, "unclocked", [sys.executable, str(SHAPED), "service"], clocked + "strip = '\\s*Created: \\S+'\n")
    steady = _run(tmp_path, "unclocked", out=tmp_path / "out-steady")
    assert steady["store"]["health"]["volatile_hits"] == 0 and "a retrieved line carries" not in capsys.readouterr().err
