"""Record the MiniLM vectors reproduce-dev's arms embed, into cache/dev/embeddings.npz (ship it beside the subset).

Run it in a fresh process after the dev results or the subset change:

    .venv/bin/python scripts/record_dev_embeddings.py

It replays the dev arms exactly as `reproduce-dev` does, with every vector computed by the real MiniLM and recorded
the first time its text is embedded (what any run computes), checks that every cell still matches, and writes the
file. `make bench` (scripts/bench_reproduce.py) then checks that replaying from it gives byte-identical results.
"""

from __future__ import annotations

import sys

from bench.cli.commands.reproduce import reproduce
from bench.models.embeddings import VECTORS_FILE, RecordedEmbedder, shared_minilm
from bench.run.request import RunServices
from bench.vocab import DEV_CACHE_SUBSET


def main() -> int:
    target = DEV_CACHE_SUBSET / VECTORS_FILE
    if target.exists():
        target.unlink()  # record from the model itself, not from an older recording
    recorder = RecordedEmbedder(shared_minilm)
    if not reproduce(base_services=RunServices(embedder=recorder)):
        print("record_dev_embeddings: reproduce-dev does not match the committed results; nothing recorded")
        return 1
    recorder.save(target)
    print(f"record_dev_embeddings: {recorder.computed} vectors written to {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
