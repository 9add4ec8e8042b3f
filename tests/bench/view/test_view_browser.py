"""A reviewer opens a report in a real browser: every question is a row, filters and expansion work.

Runs in headless Chromium (Debian's package, driven by playwright). Without a browser the test skips and says why;
with ENGRAM_BENCH_REQUIRE_BROWSER=1 (set by .ci/run) a missing browser is a failure instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the [browser] extra is not installed: browser_ready skips (or fails in CI) and says why
    expect = None

from bench.results.schema import read_result
from bench.view.browser import chromium_page, unavailable_reason
from bench.view.report import write_report
from tests.conftest import REPO_ROOT

REQUIRE_ENV = "ENGRAM_BENCH_REQUIRE_BROWSER"
CONV30 = REPO_ROOT / "results" / "offline" / "heldout" / "conv-30"


@pytest.fixture(scope="module")
def browser_ready() -> None:
    reason = unavailable_reason()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but the browser test cannot run: {reason}")
    pytest.skip(f"browser test skipped: {reason} (set {REQUIRE_ENV}=1 to make this a failure)")


def _open(page, html: Path) -> None:
    page.goto(html.as_uri())
    page.wait_for_selector("body[data-ready='1']")


def test_a_paired_report_has_a_row_per_question_and_its_filters_and_expansion_work(
    browser_ready: None, tmp_path: Path
) -> None:
    a_path, b_path = CONV30 / "engram__k3.json", CONV30 / "mem0__k6.json"
    a, b = read_result(a_path), read_result(b_path)
    html = write_report([a_path, b_path], tmp_path / "report.html")
    b_by_id = {x.question_id: x for x in b.answers}
    a_only = [x for x in a.answers if x.correct and not b_by_id[x.question_id].correct]
    with chromium_page() as (page, errors):
        _open(page, html)
        assert page.locator("#standin-banner").inner_text().startswith("OFFLINE STAND-INS")
        assert page.locator(".q").count() == len(a.answers)

        page.select_option("#f-label", "a_only")
        assert page.locator(".q:visible").count() == len(a_only)
        assert page.locator("#f-count").inner_text() == f"{len(a_only)} of {len(a.answers)} questions"

        page.select_option("#f-label", "")
        page.select_option("#f-category", "temporal")
        temporal = sum(x.category == "temporal" for x in a.answers)
        assert page.locator(".q:visible").count() == temporal

        page.select_option("#f-category", "")
        wanted = a.answers[7]
        page.fill("#f-search", wanted.question)  # the first search inflates the data, then filters
        expect(page.locator("#f-count")).not_to_have_text(f"{len(a.answers)} of {len(a.answers)} questions")
        assert wanted.question_id in page.locator(".q:visible").first.inner_text()

        page.locator(".q:visible").first.click()
        detail = page.locator(".detail")
        expect(detail).to_have_count(1)
        sides = detail.locator(".detail-side")
        assert sides.count() == 2
        assert sides.nth(0).locator("ol.lines > li").count() == len(wanted.lines or [])
        assert sides.nth(1).locator("ol.lines > li").count() == len(b_by_id[wanted.question_id].lines or [])
        assert sides.nth(0).locator("ol.lines > li").first.locator(".line-text").inner_text() == wanted.lines[0]

        page.locator(".q.open").click()
        assert page.locator(".detail").count() == 0
        page.screenshot(path=str(tmp_path / "report.png"), full_page=False)
        assert errors == []
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_a_v1_import_says_its_lines_were_not_published(browser_ready: None, tmp_path: Path) -> None:
    v1 = REPO_ROOT / "results" / "v1" / "heldout" / "conv-30"
    html = write_report([v1 / "engram__k3.json", v1 / "mem0__k6.json"], tmp_path / "v1.html")
    with chromium_page() as (page, errors):
        _open(page, html)
        assert page.locator("#standin-banner").count() == 0  # the paper stack: real models
        page.select_option("#f-label", "b_only")
        page.locator(".q:visible").first.click()
        page.wait_for_selector(".detail")
        notes = page.locator(".detail .missing").all_inner_texts()
        assert any("v1 release publishes only how many lines were shown (3)" in n for n in notes)
        assert any("(6)" in n for n in notes)
        assert errors == []


def test_an_engram_line_expands_to_its_fact_decisions_and_source_turn(
    browser_ready: None, traced_engram: Path, tmp_path: Path
) -> None:
    html = write_report([traced_engram], tmp_path / "traced.html")
    with chromium_page() as (page, errors):
        page.goto(html.as_uri() + "#q=conv-26:900")  # a deep link opens the question
        page.wait_for_selector("body[data-ready='1']")
        detail = page.locator(".detail")
        expect(detail).to_have_count(1)
        lines = detail.locator("ol.lines > li")
        texts = lines.locator(".line-text").all_inner_texts()
        paris = next(i for i, t in enumerate(texts) if "Paris" in t)
        berlin = next(i for i, t in enumerate(texts) if "Berlin now" in t)
        assert "hit" in (lines.nth(berlin).get_attribute("class") or "")  # its turn is the question's evidence
        assert lines.nth(berlin).locator(".turn-ref.ev").inner_text() == "T:4 ✓ evidence"

        fact = lines.nth(paris).locator("details.fact")
        fact.locator("summary").click()
        body = fact.locator(".fact-body").inner_text()
        assert "superseded" in fact.locator("summary").inner_text()
        assert "decisions that created it" in body and "worth_remembering" in body
        assert "decisions that closed it" in body and "relation_to_candidate" in body
        assert "gates passed, closed: superseded" in body
        assert "closed by (chain):" in body and "Ana lives in Berlin now" in body

        lines.nth(paris).locator(".turn-ref").first.click()
        assert lines.nth(paris).locator(".turn-text").inner_text().endswith("I live in Paris.")
        page.screenshot(path=str(tmp_path / "traced.png"), full_page=True)
        assert errors == []
