"""The Content-Security-Policy breaks no page: Chromium reports no violation (no inline script or
style, no eval) on the pages with charts, htmx and forms, and the charts still draw."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture
def researcher_page(page, live_server, make_user):
    from django.conf import settings
    from django.test import Client

    client = Client()
    page.user = make_user("researcher")
    client.force_login(page.user)
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    return page


def test_no_page_violates_the_content_security_policy(researcher_page, play_catalog):
    from tests.webapp.labelling.support import run_disagreements, store_games
    from webapp.labelling.models import DisagreementItem
    from webapp.leaderboards.services import leaderboards_refresh
    from webapp.play.models import Game
    from webapp.play.services import game_start
    from webapp.play.visitors import Visitor

    store_games()
    run_disagreements(controls=0.0)
    DisagreementItem.objects.update(gold="yes")  # gold: the judges' accuracy chart has rows
    leaderboards_refresh()
    game = Game.objects.order_by("pk").first()
    page = researcher_page
    # a "You ask" game of the researcher's own (issue 46: its page was said to break the policy)
    asking = game_start(visitor=Visitor(user=page.user), role="guesser", judge="kb")
    violations: list[str] = []
    sized: list[bool] = []
    page.on(
        "console",
        lambda msg: (
            violations.append(f"{page.url}: {msg.text}")
            if "Content Security Policy" in msg.text
            else None
        ),
    )
    for path in (
        "/",
        "/play/",
        "/games/",
        f"/games/{game.pk}/",
        f"/play/{asking.pk}/",
        "/leaderboards/",
        "/labelling/",
        "/labelling/review/",
        "/labelling/judges/",
        "/labelling/agreement/",
        "/jobs/",
        "/lists/",
        "/accounts/login/",
        "/api/docs/",
    ):
        response = page.goto(path)
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_load_state("networkidle")
        for box in page.locator(".chart-box[data-height]").all():  # sized by the chart script
            sized.append(box.evaluate("b => b.style.height === b.dataset.height + 'px'"))
    assert violations == []
    assert sized and all(sized)
