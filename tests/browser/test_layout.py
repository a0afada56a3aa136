"""Phones: no page of the walkthrough is wider than the screen, and the header's menu button opens
the site menu (with the mouse, a tap or the keyboard). Desktops show the menu without a button.
conftest.py runs every test here at 1280 px and at 390 px."""

from __future__ import annotations

import pytest

from tests.browser.conftest import docs_screenshot

pytestmark = pytest.mark.browser

# the widest elements sticking out past the right edge, for the failure message
OVERFLOW_JS = """() => {
  const width = document.documentElement.clientWidth;
  const out = [...document.querySelectorAll('body *')]
    .filter(el => el.getBoundingClientRect().right > width + 1 && el.getClientRects().length)
    .filter(el => !el.closest('table.data, .table-scroll, pre'))
    .slice(0, 5)
    .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
         + (el.className && el.className.baseVal === undefined ? '.' + el.className : ''));
  return {scroll: document.documentElement.scrollWidth, inner: window.innerWidth, width, out};
}"""


def log_in(page, live_server, user) -> None:
    from django.conf import settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    page.context.clear_cookies()
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )


def overflow(page, path: str) -> dict | None:
    """The page's widths when it is wider than the screen, else None."""
    if path:
        response = page.goto(path)
        assert response.status == 200, path
        page.wait_for_load_state("networkidle")
    sizes = page.evaluate(OVERFLOW_JS)
    viewport = page.viewport_size["width"]
    too_wide = sizes["scroll"] > min(sizes["inner"], viewport) or sizes["inner"] > viewport
    return {"page": page.url, **sizes} if too_wide else None


@pytest.fixture
def walkthrough(play_catalog, make_user):
    """Games (people's and models'; games of labelled secrets are hidden), judge disagreements to
    label, a finished job and the boards; a player with a finished game and a researcher who also
    labels."""
    from tests.webapp.labelling.support import run_disagreements, store_games
    from tests.webapp.play.support import model_game
    from webapp.catalog.models import ModelSpec, WordList
    from webapp.leaderboards.services import leaderboards_refresh
    from webapp.play.models import Game

    store_games()
    job = run_disagreements(controls=0.0)
    player = make_user("player", username="a-player-with-a-long-name")
    Game.objects.create(
        secret="dog", mode="human_guesser", player=player, status="finished", outcome="won",
        n_turns=4, judge=ModelSpec.objects.get(name="kb"), config={"win_rule": "strict"},
    )  # fmt: skip
    leaderboards_refresh()
    return {
        "player": player,
        "researcher": make_user("researcher", "annotator", username="rita"),
        "job": job,
        "game": model_game(
            "violin", ["Is it an animal?", "Is it an instrument?", "Is it a violin?"]
        ),
        "word_list": WordList.objects.order_by("pk").first(),
    }


# pages `make docs-screenshots` keeps for the docs: name, where the picture starts
DOCS_PAGES = {"/jobs/": ("jobs", "#runs-h"), "/leaderboards/": ("leaderboards", "#ability")}


def test_no_page_is_wider_than_the_screen(page, live_server, walkthrough):
    too_wide = []
    shared = ["/", "/games/", f"/games/{walkthrough['game'].pk}/", "/leaderboards/"]
    shared.append(f"/players/{walkthrough['player'].username}/")
    for path in [*shared, "/accounts/login/", "/accounts/signup/", "/play/"]:
        too_wide.append(overflow(page, path))
    page.click("#start-asking")  # a guest's game, asking
    page.wait_for_url("**/play/*/")
    too_wide.append(overflow(page, ""))
    page.goto("/play/")
    page.click("#start-judging")  # and judging a model's questions
    page.wait_for_url("**/play/*/")
    too_wide.append(overflow(page, ""))

    log_in(page, live_server, walkthrough["player"])
    for path in [*shared, "/players/me/", "/play/"]:
        too_wide.append(overflow(page, path))

    log_in(page, live_server, walkthrough["researcher"])
    job, word_list = walkthrough["job"], walkthrough["word_list"]
    for path in (
        "/labelling/",
        "/labelling/review/",
        "/labelling/judges/",
        "/labelling/agreement/",
        "/jobs/",
        f"/jobs/{job.pk}/",
        "/jobs/new/evaluation/",
        "/jobs/new/grpo/",
        "/jobs/new/curation/",
        "/lists/",
        f"/lists/{word_list.pk}/",
        *shared,
    ):
        too_wide.append(overflow(page, path))
        if path in DOCS_PAGES:
            name, start = DOCS_PAGES[path]
            docs_screenshot(page, name, at=start)
    assert [t for t in too_wide if t] == []


def nav_link(page, name: str):
    return page.locator("#site-menu").get_by_role("link", name=name, exact=True)


def test_a_guest_reaches_every_menu_link(page, viewport):
    from playwright.sync_api import expect

    page.goto("/games/")
    toggle = page.locator(".menu-toggle")
    if viewport == "desktop":
        expect(toggle).to_be_hidden()
        for name in ("Home", "Play", "Games", "Leaderboards", "API", "Log in", "Sign up"):
            expect(nav_link(page, name)).to_be_visible()
        return
    expect(toggle).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(nav_link(page, "Log in")).to_be_hidden()
    toggle.tap()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    for name in ("Home", "Play", "Games", "Leaderboards", "API", "Log in", "Sign up"):
        expect(nav_link(page, name)).to_be_in_viewport()
    toggle.tap()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(nav_link(page, "Sign up")).to_be_hidden()
    toggle.tap()
    nav_link(page, "Sign up").tap()
    page.wait_for_url("**/accounts/signup/")


def test_the_menu_works_with_the_keyboard_alone(page, viewport):
    from playwright.sync_api import expect

    page.goto("/leaderboards/")
    page.keyboard.press("Tab")
    skip = page.locator(".skip-link")
    expect(skip).to_be_focused()  # the first stop: "Skip to content"
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Tab")
    expect(page.locator(".brand")).to_be_focused()
    page.keyboard.press("Tab")
    if viewport == "desktop":  # no button: the next stop is the first menu link
        expect(nav_link(page, "Home")).to_be_focused()
    else:
        toggle = page.locator(".menu-toggle")
        expect(toggle).to_be_focused()
        page.keyboard.press("Enter")
        expect(toggle).to_have_attribute("aria-expanded", "true")
        page.keyboard.press("Tab")
        expect(nav_link(page, "Home")).to_be_focused()
        page.keyboard.press("Escape")  # closes the menu and gives the focus back to the button
        expect(toggle).to_have_attribute("aria-expanded", "false")
        expect(toggle).to_be_focused()
        expect(nav_link(page, "Home")).to_be_hidden()
        page.keyboard.press("Space")
        expect(toggle).to_have_attribute("aria-expanded", "true")
    page.goto("/leaderboards/")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # skip to content: the focus moves into the page's main part
    page.wait_for_url("**/leaderboards/#main")
    expect(page.locator("main#main")).to_be_focused()


def test_a_researcher_reaches_labelling_to_log_out(page, live_server, viewport, make_user):
    from playwright.sync_api import expect

    log_in(page, live_server, make_user("researcher", "annotator", username="rita"))
    page.goto("/")
    if viewport == "phone":
        expect(nav_link(page, "Jobs")).to_be_hidden()
        page.locator(".menu-toggle").tap()
    for name in ("Labelling", "Jobs", "Word lists", "Admin", "API", "rita"):
        expect(nav_link(page, name)).to_be_in_viewport()
    log_out = page.locator("#site-menu").get_by_role("button", name="Log out")
    expect(log_out).to_be_in_viewport()
    log_out.click()
    page.wait_for_load_state("networkidle")
    if viewport == "phone":
        page.locator(".menu-toggle").tap()
    expect(nav_link(page, "Log in")).to_be_visible()


def test_without_javascript_the_menu_is_shown_and_the_button_is_not(
    browser, live_server, transactional_db, viewport
):
    from playwright.sync_api import expect

    from tests.browser.conftest import VIEWPORTS

    context = browser.new_context(
        base_url=live_server.url, java_script_enabled=False, **VIEWPORTS[viewport]
    )
    try:
        page = context.new_page()
        page.goto("/")
        expect(page.locator(".menu-toggle")).to_be_hidden()
        for name in ("Home", "Games", "Log in", "Sign up"):
            expect(nav_link(page, name)).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= VIEWPORTS[viewport]["viewport"]["width"]
    finally:
        context.close()
