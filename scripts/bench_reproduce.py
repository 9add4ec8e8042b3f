"""`make reproduce-dev` wall time, against an anchor measured in the same run, and a byte-for-byte result check.

    anchor:   the dev arms replayed with every MiniLM vector recomputed (torch imported, one encode per new text)
    measured: `engram-bench reproduce-dev` as a user runs it (vectors from cache/dev/embeddings.npz, no torch)

Each runs in its own fresh process. The replayed result files of both must equal each other except the `timing`
block (the recorded vectors change nothing), and replay every field of the committed results/offline/dev/ files
except how those were run (timing, call counters, provenance).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ENGRAM_BENCH = Path(sys.executable).with_name("engram-bench")
RECOMPUTE = """
import sys
from pathlib import Path
from bench.cli.commands.reproduce import reproduce
from bench.models.embeddings import RecordedEmbedder
from bench.run.request import RunServices
from bench.models.embeddings import shared_minilm
ok = reproduce(base_services=RunServices(embedder=RecordedEmbedder(shared_minilm)), keep=Path(sys.argv[1]))
sys.exit(0 if ok else 1)
"""
KEEP = """
import sys
from pathlib import Path
from bench.cli.commands.reproduce import reproduce
sys.exit(0 if reproduce(keep=Path(sys.argv[1])) else 1)
"""


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=REPO, check=True, capture_output=True, text=True)
    return time.perf_counter() - started


def without_timing(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("timing", None)
    return data


def _flat(value: object, at: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        return {k: v for key, item in value.items() for k, v in _flat(item, f"{at}.{key}").items()}
    if isinstance(value, list):
        return {k: v for i, item in enumerate(value) for k, v in _flat(item, f"{at}[{i}]").items()}
    return {at: value}


def committed_fields_agree(replayed: Path, committed: Path) -> bool:
    """Every field of the committed file, except how it was run (timing, call counters, provenance), is replayed."""
    ours, theirs = _flat(json.loads(replayed.read_text())), _flat(json.loads(committed.read_text()))
    skip = (".timing", ".calls", ".provenance")
    return all(ours.get(key) == value for key, value in theirs.items() if not key.startswith(skip))


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        recomputed, recorded = Path(tmp) / "recomputed", Path(tmp) / "recorded"
        anchor = timed([sys.executable, "-c", RECOMPUTE, str(recomputed)])
        measured = timed([str(ENGRAM_BENCH), "reproduce-dev"])
        timed([sys.executable, "-c", KEEP, str(recorded)])
        names = sorted(p.name for p in recomputed.glob("*.json"))
        same = all(without_timing(recomputed / n) == without_timing(recorded / n) for n in names)
        committed = all(committed_fields_agree(recorded / n, REPO / "results" / "offline" / "dev" / n) for n in names)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} cores, load {load:.1f}")
    print(f"anchor   (vectors recomputed, torch imported): {anchor:6.1f} s")
    print(f"measured (engram-bench reproduce-dev):          {measured:6.1f} s   ratio {measured / anchor:.2f}")
    print(f"result files {', '.join(names)}: recorded == recomputed (minus timing): {same}; every committed field")
    print(f"  (but timing, call counters, provenance) replayed: {committed}")
    return 0 if same and committed else 1


if __name__ == "__main__":
    sys.exit(main())
