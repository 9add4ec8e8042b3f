"""Appendix E, re-executed: ``python -m bench.report.appendix <entry>`` (or ``engram-bench paper appendix run``)
runs the command the index (``bench.report.index``, written by the full build) shows for one entry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench.errors import BenchError, EntryError, ResultError
from bench.vocab import APPENDIX_DIR, PAPER_DIR

ENTRIES_FILE = "entries.json"


def list_entries(appendix_dir: Path = APPENDIX_DIR) -> list[dict[str, Any]]:
    """The entries the last full build indexed (appendix_e/entries.json): entry, command, outputs, reads."""
    path = appendix_dir / ENTRIES_FILE
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
        entries = document["entries"]
    except FileNotFoundError:
        raise ResultError(
            f"{path}: expected the appendix index (run `engram-bench paper build`), found no file"
        ) from None
    except (ValueError, KeyError, TypeError):
        raise ResultError(f"{path}: expected JSON with an 'entries' list, found something else") from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and "entry" in e for e in entries):
        raise ResultError(f"{path}: field 'entries': expected a list of objects with an 'entry', found another value")
    return entries


def run_entry(entry: str, out_dir: Path | None = None) -> list[Path]:
    """Re-execute one appendix entry (the command its index line shows) and return the files it wrote."""
    known = [e["entry"] for e in list_entries()]
    if entry not in known:  # named here, before the build computes anything, as this command's own argument
        raise EntryError(
            f"paper appendix run: expected an entry of appendix_e/INDEX.md ({', '.join(known)}), found {entry!r}"
        )
    # local import: the report layer (matplotlib, pandas, statsmodels: ~1 s); `--help` loads this module
    from bench.report.build import build

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
