"""A real headless Chromium for checking reports (the browser test and scripts/bench_view.py).

Debian's `chromium` package driven by playwright's Python package (the optional `[browser]` extra); playwright's own
browser download is not used. The browser starts with a fresh profile and every background service off, so a
report is seen exactly as a reader opening the file would see it, and nothing reaches the network.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench import settings

CHROMIUM_ENV = settings.CHROMIUM  # a browser binary other than `chromium` on PATH
CHROMIUM_FLAGS = (
    "--no-sandbox",  # runs as root in CI containers
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def chromium_path() -> str | None:
    return settings.current().chromium or shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason() -> str | None:
    """Why a browser check cannot run here, or None when it can."""
    try:
        # local import: probes for playwright (the browser extra), which the base install lacks
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[browser]')"
    if chromium_path() is None:
        return f"no chromium binary (apt-get install chromium, or set {CHROMIUM_ENV})"
    return None


@contextmanager
def chromium_page(width: int = 1400, height: int = 1000) -> Iterator[tuple[Any, list[str]]]:
    """A playwright page in headless Chromium with a fresh profile, and the list its page errors and console errors
    are collected in, so a check can assert there were none: `with chromium_page() as (page, errors): ...`."""
    # local import: playwright is the browser extra, which the base install lacks
    from playwright.sync_api import sync_playwright

    binary = chromium_path()
    if binary is None:
        raise RuntimeError(unavailable_reason() or "no chromium")
    with tempfile.TemporaryDirectory(prefix="engram-bench-chromium-") as profile, sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile,
            executable_path=binary,
            headless=True,
            args=list(CHROMIUM_FLAGS),
            viewport={"width": width, "height": height},
        )
        try:
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
            yield page, errors
        finally:
            context.close()
