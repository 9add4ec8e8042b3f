"""Appendix E, re-executed: ``python -m bench.report.appendix <entry>`` (or ``engram-bench paper appendix run``)
runs the command the index (``bench.report.index``, written by the full build) shows for one entry.
"""

from __future__ import annotations

import sys
from pathlib import Path

from bench.errors import BenchError
from bench.report.build import build
from bench.vocab import PAPER_DIR


def run_entry(entry: str, out_dir: Path | None = None) -> list[Path]:
    """Re-execute one appendix entry (the command its index line shows) and return the files it wrote."""
    return build(out_dir=out_dir or PAPER_DIR, only=entry).written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 3) or (len(args) == 3 and args[1] != "--out"):
        print(
            "usage: python -m bench.report.appendix <entry> [--out DIR]   (entries: appendix_e/INDEX.md)",
            file=sys.stderr,
        )
        return 2
    try:
        written = run_entry(args[0], Path(args[2]) if len(args) == 3 else None)
    except BenchError as exc:
        print(f"appendix: {exc}", file=sys.stderr)
        return exc.exit_code
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
