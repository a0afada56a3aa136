"""Labelling with the keyboard alone in headless Chromium: Y/N/U/I, Ctrl+Z undo, Ctrl+Space skip;
then the judge accuracy page shows the labels' effect. Reuses conftest.py's `page` where there is
one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.browser.conftest import browser_unavailable, docs_screenshot

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True, scope="module")
def _orm_next_to_playwright():
    """Playwright's sync API runs an event loop in this thread; let the ORM run beside it, for this
    module only (a session-wide setting leaks into subprocesses such as `manage.py check
    --deploy`)."""
    before = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if before is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = before


CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture
def labelling_page(request, live_server, transactional_db):
    """conftest.py's `page` when it provides one; else a Chromium page of our own (same
    settings)."""
    try:
        page = request.getfixturevalue("page")
    except pytest.FixtureLookupError:
        page = None
    if page is not None:
        yield page
        return
    if not os.path.exists("/usr/bin/chromium"):
        browser_unavailable("/usr/bin/chromium is missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
        )
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": 1200, "height": 900}
        )
        page = context.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        yield page
        browser.close()
    assert errors == [], f"JavaScript errors: {errors}"


def _log_in(page, live_server, user) -> None:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )


def test_label_with_the_keyboard_alone_including_undo_and_skip(
    labelling_page, live_server, make_user
):
    from playwright.sync_api import expect

    page = labelling_page
    from tests.webapp.labelling.support import run_disagreements, store_games
    from webapp.labelling.models import Assignment, DisagreementItem, Label

    store_games()
    run_disagreements(controls=0.0, labels_needed=1)  # one label completes an item: it becomes gold
    annotator = make_user("annotator", username="ann")
    _log_in(page, live_server, annotator)
    page.goto("/labelling/")
    labelled, question = page.get_by_test_id("labelled"), page.get_by_test_id("question")
    announce = page.locator("#announce")
    expect(question).to_have_text("“Is it an animal?”")
    expect(page.locator("#reveal")).to_have_count(0)  # blind: no votes before answering
    reloads: list[str] = []  # every key below is answered in place (htmx), never by a page load
    page.on(
        "framenavigated",
        lambda frame: reloads.append(frame.url) if frame == page.main_frame else None,
    )
    SHOTS.mkdir(parents=True, exist_ok=True)

    page.keyboard.press("y")
    expect(labelled).to_have_text("1")
    expect(page.locator("#reveal")).to_contain_text("you said yes")
    expect(page.locator("#reveal")).to_contain_text("kb-any-sense: yes")
    expect(announce).to_contain_text("Saved “yes”. The judges said: kb no, kb-any-sense yes.")
    expect(question).to_have_text("“Is it an organism?”")
    docs_screenshot(page, "labelling")

    page.keyboard.press("n")
    expect(labelled).to_have_text("2")
    expect(question).to_have_text("“Is it an electronic device?”")
    page.keyboard.press("Control+z")  # undo the "no": the organism question comes back
    expect(labelled).to_have_text("1")
    expect(announce).to_contain_text("Undone: your label on “Is it an organism?” was removed.")
    expect(question).to_have_text("“Is it an organism?”")
    page.keyboard.press("u")
    expect(labelled).to_have_text("2")

    expect(question).to_have_text("“Is it an electronic device?”")
    page.screenshot(path=str(SHOTS / "labelling-item.png"), full_page=True)
    page.keyboard.press("Control+Space")  # skip the mouse
    expect(announce).to_contain_text("Skipped")
    expect(question).to_have_text("“Is it a building?”")
    expect(labelled).to_have_text("2")
    page.keyboard.press("i")
    expect(labelled).to_have_text("3")
    expect(page.locator("#lab-item")).to_contain_text("Nothing is waiting for you")
    expect(page.get_by_test_id("remaining")).to_have_text("0")
    assert reloads == []
    page.screenshot(path=str(SHOTS / "labelling-queue.png"), full_page=True)

    labels = dict(
        Label.objects.filter(annotator=annotator).values_list("item__question", "verdict")
    )
    assert labels == {
        "Is it an animal?": "yes",
        "Is it an organism?": "unclear",
        "Is it a building?": "invalid",
    }
    device = DisagreementItem.objects.get(question="Is it an electronic device?")
    assert Assignment.objects.get(item=device, annotator=annotator).skipped_at is not None
    assert device.labels_count == 0

    # The labels are gold by consensus now: yes (kb wrong, kb-any-sense right), unclear (not
    # scored), invalid (both judges answered a question the annotator found invalid).
    page.context.clear_cookies()
    _log_in(page, live_server, make_user("researcher", username="rita"))
    page.goto("/labelling/judges/")
    expect(page.get_by_test_id("gold-items")).to_have_text("3")
    any_sense = page.locator('tr[data-judge="kb-any-sense"] td')
    kb = page.locator('tr[data-judge="kb"] td')
    expect(any_sense.nth(1)).to_have_text("2")
    expect(any_sense.nth(2)).to_have_text("50.0")
    expect(kb.nth(2)).to_have_text("0.0")
    expect(kb.nth(8)).to_have_text("1")  # one wrong negative: "no" to the seal being an animal
    expect(page.locator("#accuracy-chart")).to_be_visible()
    page.screenshot(path=str(SHOTS / "labelling-judges.png"), full_page=True)
    docs_screenshot(page, "labelling-judges")
