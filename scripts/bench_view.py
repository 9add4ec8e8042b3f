"""Viewer performance for the README: a 1,540-question report (LoCoMo's scored questions over all ten
conversations) must render in headless Chromium in under 2 s, as an HTML file under 5 MB.

No committed result has 1,540 questions, so a SYNTHETIC input is built: the answers of the committed result files
given (default: engram k=20 on the four offline held-out conversations, 20 lines per answer) are repeated until
1,540, each repetition under new conversation names (``conv-30~1``) and with its line texts marked as copies, so
the report cannot share one text between repetitions as it would between questions that showed the same line. When
the files name trace sidecars, their traces are repeated too. The synthetic file lives in a temporary folder.

Anchor, measured in the same run and browser: the report of one committed file (conv-30, 81 questions).
Printed per report: HTML size, page load (navigation start to the load event), script ready (the page's own
mark after its table is wired), and the first expansion (click to the expanded row, which inflates the data);
medians of --repeat fresh page loads.

    .venv/bin/python scripts/bench_view.py [--sources FILE ...] [--questions 1540] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from bench.results.schema import Provenance, Result, read_result, write_result
from bench.results.trace import Trace, trace_name, trace_of, write_trace
from bench.view.browser import chromium_page, unavailable_reason
from bench.view.report import write_report

REPO = Path(__file__).resolve().parent.parent
HELDOUT = REPO / "results" / "offline" / "heldout"
DEFAULT_SOURCES = [HELDOUT / conv / "engram__k20.json" for conv in ("conv-30", "conv-41", "conv-42", "conv-43")]
ANCHOR = HELDOUT / "conv-30" / "engram__k20.json"
BUDGET_S, BUDGET_MB = 2.0, 5.0


def synthesise(sources: list[Path], questions: int, folder: Path) -> tuple[Path, bool]:
    """A result of `questions` answers repeated from `sources` (see the module docstring), written with a trace
    when every source has one; returns its path and whether it is traced."""
    loaded = [(p, read_result(p)) for p in sources]
    traces = {p: trace_of(p, result) for p, result in loaded}
    traced = all(t is not None for t in traces.values())
    pool = [(result, traces[p], i) for p, result in loaded for i in range(len(result.answers))]
    answers, lines = [], []
    items: dict[str, dict] = {}
    turns: dict[str, dict] = {}
    for n in range(questions):
        result, trace, i = pool[n % len(pool)]
        copy = n // len(pool)
        a = result.answers[i]
        conversation = a.conversation if copy == 0 else f"{a.conversation}~{copy}"
        answers.append(
            replace(
                a,
                question_id=a.question_id if copy == 0 else f"{a.question_id}~{copy}",
                conversation=conversation,
                lines=None if a.lines is None else [t if copy == 0 else f"{t} [copy {copy}]" for t in a.lines],
            )
        )
        if traced and trace is not None:
            lines.append(trace.lines[i])
            items.setdefault(conversation, trace.items.get(a.conversation, {}))
            turns.setdefault(conversation, trace.turns.get(a.conversation, {}))
    first = loaded[0][1]
    path = folder / "synthetic__k20.json"
    result = Result.build(
        answers=answers,
        arm=f"synthetic-{questions}",
        system=first.system,
        stack=first.stack,
        slice="synthetic",
        k=first.k,
        arm_hash=None,
        settings={},
        models=dict(first.models),
        standins=list(first.standins),
        provenance=Provenance(origin="SYNTHETIC input of scripts/bench_view.py: " + ", ".join(p.name for p in sources)),
        trace=trace_name(path) if traced else None,
    )
    if traced:
        write_trace(
            folder / trace_name(path),
            Trace(result=path.name, system=first.system, lines=lines, items=items, turns=turns),
        )
    return write_result(path, result), traced


def measure(html: Path, repeat: int) -> dict[str, float]:
    loads, readies, expands = [], [], []
    for _ in range(repeat):
        with chromium_page() as (page, errors):
            page.goto(html.as_uri(), wait_until="load")
            page.wait_for_selector("body[data-ready='1']")
            loads.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000)
            readies.append(page.evaluate("window.__viewReadyMs") / 1000)
            started = page.evaluate("performance.now()")
            page.locator(".q").first.click()
            page.wait_for_selector(".detail")
            expands.append((page.evaluate("performance.now()") - started) / 1000)
            if errors:
                raise SystemExit(f"bench_view: page errors in {html.name}: {errors[:3]}")
    return {
        "mb": html.stat().st_size / 1e6,
        "load_s": statistics.median(loads),
        "ready_s": statistics.median(readies),
        "expand_s": statistics.median(expands),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="+", type=Path, default=DEFAULT_SOURCES)
    parser.add_argument("--questions", type=int, default=1540)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    reason = unavailable_reason()
    if reason:
        print(f"bench_view: cannot run: {reason}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp:
        folder = Path(tmp)
        synthetic, traced = synthesise(args.sources, args.questions, folder)
        anchor_html = write_report([ANCHOR], folder / "anchor.html")
        big_html = write_report([synthetic], folder / "synthetic.html")
        anchor = measure(anchor_html, args.repeat)
        big = measure(big_html, args.repeat)
    load = os.getloadavg()[0]
    print(
        f"bench_view {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()} {os.cpu_count()} cores, "
        f"load {load:.1f}, headless chromium, medians of {args.repeat} page loads"
    )
    print(f"anchor:    {ANCHOR.relative_to(REPO)} (81 questions)")
    print(
        f"synthetic: {args.questions} questions repeated from {len(args.sources)} files"
        f"{' with their traces' if traced else ' (no traces in the sources)'}"
    )
    for name, m in (("anchor", anchor), ("synthetic", big)):
        print(
            f"  {name:<9} html {m['mb']:.2f} MB | load {m['load_s']:.3f} s | ready {m['ready_s']:.3f} s | "
            f"first expansion {m['expand_s']:.3f} s"
        )
    print(
        f"  ratio synthetic/anchor: size {big['mb'] / anchor['mb']:.1f}x, load {big['load_s'] / anchor['load_s']:.1f}x, "
        f"first expansion {big['expand_s'] / anchor['expand_s']:.1f}x"
    )
    ok = big["load_s"] < BUDGET_S and big["mb"] < BUDGET_MB
    print(f"  budget: load < {BUDGET_S} s and html < {BUDGET_MB} MB: {'met' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
