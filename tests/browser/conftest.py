"""Browser tests: Debian's Chromium driven by Playwright against pytest-django's live_server.

Never `playwright install`: the browser is /usr/bin/chromium. Playwright's sync API runs an event
loop in the test thread, so Django's async-safety check is relaxed for the ORM calls of these tests
only (set around each test, not for the session: it would leak into subprocesses other tests start).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# the docs' and the README's pictures, written only with DOCS_SCREENSHOTS=1 (make docs-screenshots)
DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "assets" / "screenshots"
DOCS_SHOT = {"x": 0, "y": 0, "width": 1280, "height": 800}


def browser_unavailable(reason: str) -> None:
    """Skip the browser tests on a developer machine; fail them in CI (CI=true), where a
    missing browser must not turn the suite green with the browser tests unrun."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{reason} (CI=true: browser tests may not be skipped)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    """One Chromium per test module; the ORM may run beside Playwright's event loop meanwhile
    (module scope: the flush after each transactional test still happens inside that window)."""
    if not os.path.exists(CHROMIUM):
        browser_unavailable(f"{CHROMIUM} is missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if before is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


VIEWPORTS = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True},
}


@pytest.fixture(autouse=True, params=list(VIEWPORTS), ids=list(VIEWPORTS))
def viewport(request) -> str:
    """Every browser test runs on a desktop screen and on a phone's (390 px wide, touch).
    Autouse, so a page a test asks for at run time (request.getfixturevalue) is sized too."""
    return request.param


@pytest.fixture
def page(browser, live_server, transactional_db, viewport):
    context = browser.new_context(base_url=live_server.url, **VIEWPORTS[viewport])
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    yield page
    context.close()
    assert errors == [], f"JavaScript errors: {errors}"


@pytest.fixture
def play_catalog(browser, transactional_db):
    from tests.webapp.play.support import clear_guest_limit, seed_play_catalog

    clear_guest_limit()
    seed_play_catalog()


def screenshot(page, name: str) -> Path:
    """A full-page screenshot; a phone's gets "-phone" in its name (the desktop's keeps it)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    phone = page.viewport_size["width"] == VIEWPORTS["phone"]["viewport"]["width"]
    path = SCREENSHOTS / f"{name}{'-phone' if phone else ''}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def docs_screenshot(page, name: str, *, at: str = "") -> Path | None:
    """With DOCS_SCREENSHOTS=1 (`make docs-screenshots`), 1280×800 pixels of the desktop page as
    docs/assets/screenshots/<name>.png, from the top of the window (`at`: scrolled first so that
    this selector, or "top", the page's top, starts it); otherwise, and on the phone, nothing, so
    an ordinary test run leaves the tree as it was."""
    if os.environ.get("DOCS_SCREENSHOTS") != "1":
        return None
    if page.viewport_size["width"] != VIEWPORTS["desktop"]["viewport"]["width"]:
        return None
    if at == "top":
        page.evaluate("window.scrollTo(0, 0)")
    elif at:
        page.locator(at).evaluate("el => el.scrollIntoView()")
    DOCS_SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = DOCS_SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), clip=DOCS_SHOT)
    return path
