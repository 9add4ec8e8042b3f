"""The repository is self-contained: no code, script or test reaches for a folder beside the checkout.

A clone copied anywhere must build, run and pass its tests with nothing next to it; the only outside text a test may
read is the article, when a maintainer names it explicitly (ENGRAM_ARTICLE), never by a path relative to the repo.
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# A path built to leave the checkout: "../shared", ".parent / 'shared'", parents[3] and up from a file two levels in.
LEAVING = re.compile(r"""(\.\./shared|parent\s*/\s*["']shared["']|["']shared["']\s*/\s*["'](seed|data|spec)["'])""")


def test_no_source_file_reads_a_folder_beside_the_repository() -> None:
    offenders = []
    for folder in ("bench", "engram", "tests", "scripts"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if path == Path(__file__).resolve():
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if LEAVING.search(line):
                    offenders.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    for name in ("Makefile", ".ci/run", "pyproject.toml"):
        text = (REPO / name).read_text(encoding="utf-8")
        if "../shared" in text or "/work/shared" in text:
            offenders.append(name)
    assert offenders == [], "\n".join(offenders)
