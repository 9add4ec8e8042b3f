"""The article template holds references, not numbers; the rendered article prints what numbers.json holds."""

from __future__ import annotations

import re

from bench.report.article import ARTICLE_TEMPLATE, render_article
from bench.report.paper import Paper
from bench.vocab import PAPER_TEMPLATES_DIR

# Digits allowed in the prose: structural ones only (spec §11.4 in spirit).
ALLOWED = [
    r"claude-haiku-4-5",
    r"claude-sonnet-4-6",
    r"jev-1\.13\.0",
    r"mem0 2\.1\.0",
    r"^#+ \d+\.",  # section numbers in headings
    r"k=\d+",  # retrieval budgets
    r"95%",  # the confidence level
    r"§\d+(\.\d+)*",
    r"\bmem0\b",  # a system name
    r"Result \d",  # result headings
    r"\bset[ -][12]\b",  # the two update sets are named set 1 and set 2
]
REFERENCE = re.compile(r"\{\{.*?\}\}|\{#.*?#\}", re.S)


def stray_numbers(template_source: str) -> list[str]:
    prose = REFERENCE.sub(" ", template_source)
    found = []
    for line in prose.splitlines():
        stripped = line
        for pattern in ALLOWED:
            stripped = re.sub(pattern, " ", stripped)
        if re.search(r"\d", stripped):
            found.append(line.strip())
    return found


def test_the_template_types_no_number_into_the_prose() -> None:
    source = (PAPER_TEMPLATES_DIR / ARTICLE_TEMPLATE).read_text(encoding="utf-8")
    assert stray_numbers(source) == []


def test_the_scan_catches_a_typed_number() -> None:
    assert stray_numbers("engram answers 73.3% of questions at k=3") == ["engram answers 73.3% of questions at k=3"]
    assert stray_numbers('engram answers {{ n("heldout.engram-k3.accuracy") }} at k=3') == []


def test_every_reference_resolves_and_prints_its_display(paper_v1: Paper) -> None:
    source = (PAPER_TEMPLATES_DIR / ARTICLE_TEMPLATE).read_text(encoding="utf-8")
    ids = re.findall(r'n\("([^"]+)"\)', re.sub(r"\{#.*?#\}", "", source, flags=re.S))
    assert len(ids) > 80
    article = render_article(paper_v1)
    assert "{{" not in article and "}}" not in article
    for number_id in ids:
        assert paper_v1.numbers[number_id].display in article
    assert "engram writes at about the cost of add-only" in article
    assert "paper v1, Claude + Jev" in article
