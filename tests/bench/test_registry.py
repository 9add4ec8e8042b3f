"""The one registry: names to factories, one error for a duplicate or unknown name, creation parameters recorded,
and parts from installed packages found through entry points, loaded only when used."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.errors import BenchError, ConfigError, RegistryError
from bench.registry import ENTRY_POINT_GROUPS, Registry, RegistryInfo, import_modules, registry_info


class Kettle:
    def __init__(self, litres: float = 1.0, colour: str = "steel") -> None:
        self.litres = litres
        self.colour = colour


@dataclass(frozen=True)
class Teapot:
    cups: int


def fresh(kind: str = "appliance", **kw: object) -> Registry[type]:
    return Registry(kind, group=None, **kw)  # type: ignore[arg-type]


def test_a_registered_factory_creates_parts_that_record_their_parameters() -> None:
    appliances = fresh()
    appliances.register("kettle")(Kettle)

    made = appliances.create("kettle", litres=1.7, colour="copper")

    assert isinstance(made, Kettle) and made.litres == 1.7
    assert registry_info(made) == RegistryInfo(
        kind="appliance", name="kettle", params={"litres": 1.7, "colour": "copper"}
    )
    assert registry_info(made).to_json() == {  # type: ignore[union-attr]
        "kind": "appliance",
        "name": "kettle",
        "params": {"litres": 1.7, "colour": "copper"},
    }


def test_a_frozen_part_still_carries_its_record() -> None:
    appliances = fresh()
    appliances.add("teapot", Teapot)
    pot = appliances.create("teapot", cups=6)
    assert pot == Teapot(6)
    assert registry_info(pot) is not None and registry_info(pot).params == {"cups": 6}  # type: ignore[union-attr]


def test_an_unknown_name_lists_the_known_ones_and_says_how_to_add_one() -> None:
    appliances = Registry("gadget", group="engram_bench.gadgets_nowhere", hint="decorate a class with @gadget('x')")
    appliances.add("toaster", Kettle)
    appliances.add("blender", Teapot)

    with pytest.raises(RegistryError) as caught:
        appliances.get("juicer", where="arms/breakfast.toml: system")

    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("arms/breakfast.toml: system: unknown gadget 'juicer'")
    assert "known gadgets: blender, toaster" in message
    assert "@gadget('x')" in message and "engram_bench.gadgets_nowhere" in message
    # One error class for the user: a ConfigError, so the CLI prints one line and exits 2.
    assert isinstance(caught.value, ConfigError) and isinstance(caught.value, BenchError)
    assert caught.value.exit_code == 2


def test_a_second_factory_under_a_taken_name_is_refused_naming_both() -> None:
    appliances = fresh()
    appliances.add("kettle", Kettle)

    with pytest.raises(RegistryError, match=r"appliance 'kettle' is registered twice: by .*Kettle and by .*Teapot"):
        appliances.add("kettle", Teapot)
    assert appliances.get("kettle") is Kettle  # the first registration stands


def test_registering_the_same_class_again_is_not_a_duplicate() -> None:
    appliances = fresh()
    appliances.add("kettle", Kettle)
    appliances.add("kettle", Kettle)

    # A module imported a second time defines an equal class under the same module and qualified name.
    Again = type("Kettle", (), {"__module__": Kettle.__module__, "__qualname__": Kettle.__qualname__})
    appliances.add("kettle", Again)
    assert appliances.get("kettle") is Again


def test_discovery_runs_once_on_the_first_lookup_and_adopt_sees_every_factory() -> None:
    calls: list[str] = []
    seen: list[str] = []

    def discover() -> None:
        calls.append("discover")
        shelf.add("mixer", Kettle)
        # A lookup from inside discovery sees what is registered so far instead of recursing.
        assert "mixer" in shelf

    def adopt(name: str, factory: type) -> type:
        seen.append(name)
        return factory

    shelf: Registry[type] = Registry("appliance", group=None, discover=discover, adopt=adopt)
    assert calls == []
    assert shelf.names() == ["mixer"]
    assert shelf.names() == ["mixer"]
    assert calls == ["discover"] and seen == ["mixer"]


def test_the_plugin_groups_are_the_five_documented_ones() -> None:
    assert dict(ENTRY_POINT_GROUPS) == {
        "system": "engram_bench.systems",
        "provider": "engram_bench.providers",
        "dataset": "engram_bench.datasets",
        "metric": "engram_bench.metrics",
        "table": "engram_bench.tables",
    }


# ------------------------------------------------------------------------------------------ installed packages


def install(site: Path, dist: str, version: str, group: str, entries: dict[str, str], modules: dict[str, str]) -> None:
    """A package as pip leaves it: its modules, and a dist-info folder with METADATA and entry_points.txt."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entries.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
    for module, source in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(source))


GROUP = "engram_bench_test.appliances"


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_an_installed_package_adds_a_part_that_loads_only_when_used(site: Path) -> None:
    install(
        site,
        "griddle-works",
        "2.4.1",
        GROUP,
        {"griddle": "griddle_mod:Griddle"},
        {"griddle_mod": "class Griddle:\n    def __init__(self, heat=3):\n        self.heat = heat\n"},
    )
    sys.modules.pop("griddle_mod", None)
    appliances: Registry[type] = Registry("appliance", group=GROUP)
    appliances.add("kettle", Kettle)

    assert appliances.names() == ["griddle", "kettle"]
    assert "griddle_mod" not in sys.modules  # listing names imports nothing

    griddle = appliances.create("griddle", heat=5)

    assert type(griddle).__name__ == "Griddle" and griddle.heat == 5
    info = registry_info(griddle)
    assert info is not None and info.plugin
    assert (info.distribution, info.version, info.params) == ("griddle-works", "2.4.1", {"heat": 5})
    assert info.to_json()["distribution"] == "griddle-works"
    assert "griddle-works 2.4.1" in appliances.origin("griddle")
    # A built-in part records no distribution at all (absent, not null).
    assert "distribution" not in appliances.info("kettle", {}).to_json()


def test_a_broken_entry_point_is_named_in_one_line_only_when_it_is_used(site: Path) -> None:
    install(
        site,
        "rusty-pans",
        "0.0.9",
        GROUP,
        {"saucepan": "rusty_pans_mod:Saucepan", "wok": "no_such_module_anywhere:Wok"},
        {"rusty_pans_mod": "raise RuntimeError('the handle fell off\\nsecond line')\n"},
    )
    appliances: Registry[type] = Registry("appliance", group=GROUP)
    appliances.add("kettle", Kettle)

    assert appliances.names() == ["kettle", "saucepan", "wok"]
    assert appliances.get("kettle") is Kettle  # another name is unaffected

    with pytest.raises(RegistryError) as caught:
        appliances.get("saucepan")
    message = str(caught.value)
    assert "\n" not in message
    assert "rusty_pans_mod:Saucepan" in message and "rusty-pans 0.0.9" in message
    assert "RuntimeError: the handle fell off" in message

    with pytest.raises(RegistryError, match="wok.*ModuleNotFoundError"):
        appliances.get("wok")


def test_a_package_claiming_a_built_in_name_is_refused_when_that_name_is_used(site: Path) -> None:
    install(site, "kettle-clone", "1.0", GROUP, {"kettle": "kettle_clone_mod:Kettle"}, {"kettle_clone_mod": ""})
    appliances: Registry[type] = Registry("appliance", group=GROUP)
    appliances.add("kettle", Kettle)
    appliances.add("teapot", Teapot)

    assert appliances.names() == ["kettle", "teapot"]  # listing still works
    assert appliances.get("teapot") is Teapot
    with pytest.raises(RegistryError, match=r"'kettle' is registered twice: .*kettle-clone 1.0.*rename one"):
        appliances.get("kettle")


def test_a_plugin_part_is_checked_by_the_same_adopt_hook_as_a_built_in_one(site: Path) -> None:
    install(site, "odd-parts", "3.1", GROUP, {"spoon": "odd_parts_mod:SPOON"}, {"odd_parts_mod": "SPOON = 42\n"})

    def adopt(name: str, factory: object) -> type:
        if not isinstance(factory, type):
            raise RegistryError(f"appliance {name!r}: expected a class, found {type(factory).__name__}")
        return factory

    appliances: Registry[type] = Registry("appliance", group=GROUP, adopt=adopt)
    with pytest.raises(RegistryError, match="'spoon': expected a class, found int"):
        appliances.get("spoon")


# ------------------------------------------------------------------------------- the registries of the harness


def test_systems_providers_commands_and_executors_refuse_a_taken_name_the_same_way() -> None:
    from bench.analysis.scoring.metric import METRICS
    from bench.cli.program import COMMANDS
    from bench.models.judge import JUDGE_PROMPTS
    from bench.models.providers import PROVIDERS
    from bench.run.grid.spec import EXECUTORS
    from bench.systems import SYSTEMS

    def impostor() -> None: ...

    taken_names = (
        (SYSTEMS, "mem0"),
        (PROVIDERS, "jev"),
        (COMMANDS, "run"),
        (EXECUTORS, "ray"),
        (METRICS, "mem0-bleu1"),
        (JUDGE_PROMPTS, "strict"),
    )
    for registry, taken in taken_names:
        assert taken in registry.names()
        with pytest.raises(RegistryError, match=rf"{registry.kind} '{taken}' is registered twice: .* rename one"):
            registry.add(taken, impostor)
        assert registry.get(taken) is not impostor


def test_a_command_module_records_where_each_command_came_from() -> None:
    from bench.cli.program import COMMANDS

    assert COMMANDS.origin("reproduce-dev") == "bench.cli.commands.reproduce"
    assert {"cache", "paper", "run", "schema"} <= set(COMMANDS.names())


def test_a_plugin_module_that_registers_itself_is_one_part_not_a_duplicate(site: Path) -> None:
    appliances: Registry[type] = Registry("appliance", group=GROUP)
    # The module uses the same decorator a built-in part would (so it also works copied into the repository).
    sys.modules["registry_under_test"] = type(sys)("registry_under_test")
    sys.modules["registry_under_test"].appliances = appliances  # type: ignore[attr-defined]
    install(
        site,
        "self-registering",
        "1.2",
        GROUP,
        {"toaster": "self_registering_mod:Toaster"},
        {
            "self_registering_mod": """
            from registry_under_test import appliances

            @appliances.register("toaster")
            class Toaster:
                pass
            """
        },
    )
    try:
        toaster = appliances.get("toaster")
        assert toaster.__name__ == "Toaster"
        assert appliances.info("toaster").version == "1.2"
    finally:
        del sys.modules["registry_under_test"]
        sys.modules.pop("self_registering_mod", None)


def test_one_file_imported_under_two_module_names_registers_one_part_but_another_file_is_refused(tmp_path) -> None:
    import importlib.util

    from bench.registry import Registry

    def load(path, module_name):
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module

    source = "class Almanac:\n    pass\n"
    (tmp_path / "one.py").write_text(source)
    (tmp_path / "other.py").write_text(source)
    parts: Registry[type] = Registry("system")
    parts.add("almanac", load(tmp_path / "one.py", "one").Almanac)
    parts.add("almanac", load(tmp_path / "one.py", "tests_copy.one").Almanac)  # pytest's second name for a file
    with pytest.raises(RegistryError, match="registered twice"):
        parts.add("almanac", load(tmp_path / "other.py", "other").Almanac)


# ------------------------------------------------------------------------------------------ built-in parts


def test_a_new_module_in_a_parts_package_is_found_without_editing_a_list(site: Path) -> None:
    shelf: Registry[type] = Registry("appliance", group=None, discover=lambda: import_modules("kitchen", skip={"base"}))
    (site / "kitchen").mkdir()
    (site / "kitchen" / "__init__.py").write_text("")
    (site / "kitchen" / "base.py").write_text("raise AssertionError('the skipped module is imported')\n")
    (site / "kitchen" / "_helpers.py").write_text("raise AssertionError('a private module is imported')\n")
    register = "import sys\nclass Gadget: ...\nsys.modules['{0}'].SHELF.add('{1}', Gadget)\n"
    (site / "kitchen" / "toaster.py").write_text(register.format(__name__, "toaster"))
    (site / "kitchen" / "blender.py").write_text(register.format(__name__, "blender"))
    globals()["SHELF"] = shelf
    try:
        assert shelf.names() == ["blender", "toaster"]
        assert [m.__name__ for m in import_modules("kitchen", skip={"base"})] == ["kitchen.blender", "kitchen.toaster"]
    finally:
        del globals()["SHELF"]
        for name in [m for m in sys.modules if m == "kitchen" or m.startswith("kitchen.")]:
            del sys.modules[name]


def test_every_module_of_the_report_parts_package_registers_a_table_or_figure_set() -> None:
    from bench.report.catalog import FIGURE_SETS, TABLES

    parts = [*(TABLES.get(n) for n in TABLES.names()), *(FIGURE_SETS.get(n) for n in FIGURE_SETS.names())]
    registering = {part.__module__ for part in parts}
    modules = {m.__name__ for m in import_modules("bench.report.parts")}
    assert "bench.report.parts.v3_tables" in modules and modules <= registering, sorted(modules - registering)
