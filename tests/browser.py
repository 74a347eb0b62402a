"""A headless Chromium page for tests of generated HTML (the report page, the docs site).

Debian's `chromium` driven by playwright-python through `executable_path` (never
`playwright install`: no browser download). Use:

    from browser import chromium_page

    def test_page(tmp_path):
        with chromium_page() as (page, errors):
            page.goto(path.as_uri())
            assert errors == []          # console errors and uncaught exceptions, as text

`chromium_page()` skips the test where chromium or playwright is missing, except under
`CI=true`, where their absence fails it (CI installs both: `apt-get install chromium`,
`pip install playwright`). `CHROMIUM` (env `GGSPEC_CHROMIUM`, default /usr/bin/chromium) is the
browser used.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

CHROMIUM = os.environ.get("GGSPEC_CHROMIUM", "/usr/bin/chromium")
#: flags for a quiet, offline, sandbox-free headless run (containers have no user namespaces)
ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run")


def missing() -> str | None:
    """Why no browser test can run here, or None."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not (os.path.isfile(CHROMIUM) or shutil.which(CHROMIUM)):
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    return None


def require() -> None:
    """Skip the calling test without a browser; under CI=true, fail it instead."""
    why = missing()
    if why is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true but {why}")
    pytest.skip(why)


@contextmanager
def chromium_page(width: int = 1280, height: int = 900) -> Iterator[tuple[Any, list[str]]]:
    """(a playwright sync `Page`, the list its console errors and page errors land in)."""
    require()
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=list(ARGS))
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            page.on("console", lambda msg: errors.append(f"console.{msg.type}: {msg.text}") if msg.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
            yield page, errors
        finally:
            browser.close()
