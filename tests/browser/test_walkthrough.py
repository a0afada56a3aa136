"""Issue 46 item 4, in a real browser: the key hints show only where there is a keyboard (not on
a phone's touch screen), and a click while the server cannot be reached says "Connection lost,
retrying…" until the server answers again, then clears once a request succeeds."""

from __future__ import annotations

import pytest

from webapp.play import services

pytestmark = pytest.mark.browser
TOUCH_ONLY = "matchMedia('(hover: none) and (pointer: coarse)').matches"


def test_key_hints_on_keyboards_only_and_a_lost_connection_is_said(
    page, play_catalog, monkeypatch, viewport
):
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "dog")
    page.goto("/play/")
    page.click("#start-asking")
    page.wait_for_url("**/play/*/")
    phone = viewport == "phone"
    assert page.evaluate(TOUCH_ONLY) == phone
    assert page.locator("#question-form button kbd").first.is_visible() != phone
    assert page.is_visible("#shortcuts-note") != phone
    assert page.is_visible("#question-form button[type=submit]")  # the button itself stays

    status = page.locator("#connection-status")
    assert not status.is_visible()
    for path in ("**/play/*/ask/", "**/play/*/suggestions/**", "**/healthz"):
        page.route(path, lambda route: route.abort())  # the server is unreachable
    page.fill("#question-input", "Is it an animal?")
    page.click("#question-form button[type=submit]")
    page.wait_for_function(
        "() => document.getElementById('connection-status').textContent"
        " === 'Connection lost, retrying…'"
    )
    assert status.is_visible() and status.get_attribute("role") == "alert"
    page.unroute("**/healthz")  # the server answers again
    page.wait_for_function(
        "() => document.getElementById('connection-status').dataset.state === 'back'",
        timeout=10_000,
    )
    assert "please repeat it" in status.inner_text()
    assert page.inner_text("#turn-counter").startswith("Question 1 of 20")  # nothing was sent
    page.unroute("**/play/*/ask/")
    page.unroute("**/play/*/suggestions/**")
    page.click("#question-form button[type=submit]")
    page.wait_for_function("() => document.getElementById('game-panel').dataset.nextIndex === '1'")
    assert status.inner_text() == "" and not status.is_visible()
