"""A metric is one module (bench.analysis.scoring.metric): the worked example (docs/examples/metric/exact_match.py),
dropped into the metrics package or installed as a package, reaches a result (`rescore`), `compare --metric`, `show`
and `view` with no list edited; and the built-in metrics are the ones results name, each in its own module."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import bench.analysis.scoring.metrics as metrics_package
from bench.analysis.scoring.metric import METRICS, Metric, all_metrics, llm_free_metrics, shown_metrics
from bench.errors import RegistryError
from bench.vocab import REPO_ROOT, RESULTS_DIR
from tests.bench.installed import bench_cli, install_package
from tests.cli_main import exit_code_of

EXAMPLE = REPO_ROOT / "docs" / "examples" / "metric"
COMMITTED = RESULTS_DIR / "offline" / "dev" / "full-context.json"
EXACT = "exact-match"


def test_the_built_in_metrics_are_the_modules_of_the_package_and_what_results_name() -> None:
    modules = sorted(p.stem for p in Path(metrics_package.__file__).parent.glob("*.py") if p.stem != "__init__")
    assert sorted(METRICS.origin(name).rsplit(".", 1)[1] for name in METRICS.names()) == modules
    assert METRICS.names() == ["evidence-recall", "judge", "locomo-adversarial", "locomo-f1", "mem0-bleu1", "mem0-f1"]
    committed = json.loads(COMMITTED.read_text())["metrics"]
    llm_free = {m.name for m in llm_free_metrics()}
    assert llm_free == {"locomo-adversarial", "locomo-f1", "mem0-bleu1", "mem0-f1"} <= set(committed)
    for metric in llm_free_metrics():  # what a run writes about each is what the committed file says
        assert committed[metric.name] == metric.entry()
    assert [m.shown.column for m in shown_metrics() if m.shown] == ["F1", "ER"]


def test_a_metric_that_is_not_a_metric_or_writes_elsewhere_is_refused_in_one_line() -> None:
    from bench.analysis.scoring.metric import _adopt

    with pytest.raises(RegistryError, match=r"metric 'x': expected a bench.analysis.scoring.metric.Metric, found int"):
        _adopt("x", 3)
    with pytest.raises(RegistryError, match=r"metric 'x': expected a Metric named 'x', found one named 'y'"):
        _adopt("x", Metric(name="y", field="answers[].scores.y"))
    scorer = Metric(name="x", field="answers[].label", score=lambda a, g, c: 1.0)
    with pytest.raises(RegistryError, match=r"metric 'x': field: expected answers\[\].scores.x .* found 'answers"):
        _adopt("x", scorer)


@pytest.fixture
def dropped_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The example module copied into the metrics package (a second folder of it), found as a built-in would be."""
    folder = tmp_path / "more_metrics"
    folder.mkdir()
    shutil.copy(EXAMPLE / "exact_match.py", folder / "exact_match.py")
    monkeypatch.setattr(metrics_package, "__path__", [*metrics_package.__path__, str(folder)])
    monkeypatch.setattr(METRICS, "_discovered", False)  # discover again, as a fresh process would
    try:
        yield
    finally:
        METRICS.remove(EXACT)
        sys.modules.pop("bench.analysis.scoring.metrics.exact_match", None)
        importlib.invalidate_caches()


def _run(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = exit_code_of(argv, monkeypatch)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _two_sides(tmp_path: Path) -> tuple[Path, Path]:
    """A: the committed file with two answers set to their gold in other casing and punctuation; B: as committed."""
    raw = json.loads(COMMITTED.read_text())
    raw["answers"][0]["answer"] = "7 MAY 2023!"  # gold "7 May 2023"
    raw["answers"][2]["answer"] = "psychology,  counseling certification."  # gold "Psychology, counseling ..."
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    a, b = tmp_path / "a" / COMMITTED.name, tmp_path / "b" / COMMITTED.name
    a.write_text(json.dumps(raw, indent=2, sort_keys=True) + "\n")
    shutil.copy(COMMITTED, b)
    return a, b


def test_a_metric_module_dropped_into_the_package_reaches_results_compare_show_and_view(
    dropped_in: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert METRICS.origin(EXACT) == "bench.analysis.scoring.metrics.exact_match"
    assert EXACT in {m.name for m in all_metrics()}
    a, b = _two_sides(tmp_path)

    code, out = _run(["rescore", str(a), str(b)], monkeypatch, capsys)
    assert code == 0, out
    rescored = json.loads(a.read_text())
    assert rescored["metrics"][EXACT] == {
        "version": 1,
        "field": "answers[].scores.exact-match",
        "source": "docs/examples/metric/exact_match.py (lowercase, ASCII punctuation removed, whitespace collapsed)",
    }
    values = {x["question_id"]: (x.get("scores") or {}).get(EXACT) for x in rescored["answers"]}
    assert values["conv-26:0"] == values["conv-26:2"] == 1.0 and values["conv-26:1"] == 0.0
    rule = METRICS.get(EXACT).score
    assert rule is not None and rule("Not mentioned", None, "adversarial") is None  # no value: not in `scores`

    code, out = _run(["compare", str(a), str(b), "--metric", "em", "--json"], monkeypatch, capsys)
    assert code == 0, out
    (report,) = json.loads(out[out.index("[") :])
    scored = [x for x in rescored["answers"] if x["scored"] and x["category"] != "adversarial"]
    assert report["metric"] == "em" and report["metric_names"] == {"a": [EXACT], "b": [EXACT]}
    assert report["overall"]["n"] == len(scored)
    assert report["overall"]["mean_a"] == pytest.approx(2 / len(scored))
    assert report["overall"]["mean_b"] == 0.0

    code, out = _run(["show", str(a), "conv-26:0"], monkeypatch, capsys)
    assert code == 0 and " · exact match 1.0 · tokens " in out, out

    page = tmp_path / "report.html"
    code, out = _run(["view", str(a), str(b), "--out", str(page)], monkeypatch, capsys)
    assert code == 0, out
    html = page.read_text()
    assert '<span title="exact match with the gold">A EM</span>' in html
    assert f"· exact match {2 / len(scored):.3f} ·" in html


def test_an_installed_metric_package_reaches_a_result_and_compare(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    install_package(EXAMPLE, site)
    a, b = _two_sides(tmp_path)

    rescored = bench_cli(["rescore", str(a), str(b)], site, tmp_path)
    assert rescored.returncode == 0, rescored.stderr[-2000:]
    assert json.loads(a.read_text())["answers"][0]["scores"][EXACT] == 1.0

    compared = bench_cli(["compare", str(a), str(b), "--metric", "em"], site, tmp_path)
    assert compared.returncode == 0, compared.stderr[-2000:]
    assert "metric: em (exact-match; per question, 0 to 1)" in compared.stdout

    unknown = bench_cli(["compare", str(a), str(b), "--metric", "rouge-l"], site, tmp_path)
    assert unknown.returncode == 2
    assert "known metrics: bleu1, em, evidence-recall, f1, j, mem0-f1" in unknown.stderr
