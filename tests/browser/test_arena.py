"""An Arena battle in a real browser, played with the keyboard only: the keys answer the
highlighted side, turn by turn, never a question just shown; names appear only at the end; the page
fits a phone."""

from __future__ import annotations

import pytest

from games.arena import battle_outcome
from tests.browser.conftest import screenshot
from tests.webapp.arena.support import STRONG, WEAK, seed_arena
from tests.webapp.play.support import clear_guest_limit, truthful_verdict
from webapp.arena.models import Battle

pytestmark = pytest.mark.browser
KEYS = {"yes": "y", "no": "n", "unknown": "d", "finished": "w"}
NO_OVERFLOW = "document.documentElement.scrollWidth <= window.innerWidth"
# htmx gives swapped-in elements their old attributes until it settles (the old side keeps
# "is-active" for a moment): wait for the settle before reading which side asks.
ANSWERED_OR_REFUSED = """n => {
    const panel = document.getElementById("battle-panel");
    if (document.querySelector(".htmx-swapping, .htmx-settling")) return false;
    return Number(panel.dataset.turns) > n || !!panel.querySelector(".form-error");
}"""
ACTIVE_QUESTION = """() => {
    const side = document.getElementById("battle-panel").dataset.active;
    return document.getElementById("pending-" + side).innerText;
}"""
# the keys answer once the active question has shown for the settle time (panel-keys.js)
KEYS_READY = """() => {
    const panel = document.getElementById("battle-panel");
    return panel.contains(document.activeElement)
        && !panel.querySelector(".side.is-active .answer-form.is-new");
}"""
# A key pressed while the active question counts as just shown (the settle time raised so that
# every question on the page does): how many answers it sent (in the same task: no timing).
KEY_ON_A_NEW_QUESTION = """key => {
    const script = document.querySelector("script[data-panel='battle-panel']");
    const settle = script.dataset.settle;
    let sent = 0;
    const count = () => { sent += 1; };
    document.addEventListener("submit", count, true);
    script.dataset.settle = "600000";
    document.dispatchEvent(new KeyboardEvent("keydown", {key: key, bubbles: true}));
    script.dataset.settle = settle;
    document.removeEventListener("submit", count, true);
    return sent;
}"""


@pytest.fixture
def arena_catalog(browser, transactional_db):
    clear_guest_limit()
    seed_arena()


def test_a_whole_battle_with_the_keyboard(page, arena_catalog, viewport):
    page.goto("/arena/")
    page.click("#start-battle")
    page.wait_for_url("**/arena/*-*/")
    assert STRONG not in page.content() and WEAK not in page.content()
    answered, keys = 0, set()
    while page.locator("#word-input").count() == 0:
        active = page.locator(".side.is-active")
        question = page.evaluate(ACTIVE_QUESTION)
        assert active.locator(".pending-question").inner_text() == question
        label = page.locator("#battle-panel").get_attribute("data-active").upper()
        assert f"answer {label}’s question" in page.inner_text("#turn-line")  # whose turn, in words
        if answered == 1:
            screenshot(page, "20-arena-battle")
            boxes = [page.locator(f"#side-{s}").bounding_box() for s in "ab"]
            stacked = boxes[1]["y"] >= boxes[0]["y"] + boxes[0]["height"]
            assert stacked == (viewport == "phone")  # side by side on a wide screen
            assert page.evaluate(NO_OVERFLOW)
        key = KEYS[truthful_verdict("dog", question)]
        if answered in (0, 2):  # questions shown at load, and after an answer's swap
            assert page.evaluate(KEY_ON_A_NEW_QUESTION, key) == 0, "a key answered a new question"
        page.wait_for_function(KEYS_READY)
        page.keyboard.press(key)
        keys.add(key)
        page.wait_for_function(ANSWERED_OR_REFUSED, arg=answered, timeout=30_000)
        refused = page.locator("#battle-panel .form-error")
        assert refused.count() == 0, (key, question, refused.inner_text())
        answered = int(page.locator("#battle-panel").get_attribute("data-turns"))
        assert answered <= 40, "two games of at most 20 questions"
        assert STRONG not in page.content() and WEAK not in page.content()
    battle = Battle.objects.get()
    strong = battle.game_a if battle.guesser_a.name == STRONG else battle.game_b
    asked = [(t.question, t.verdict) for t in strong.turns.order_by("index")]
    assert keys >= {"y", "n"}, asked
    page.wait_for_function("document.activeElement.id === 'word-input'")
    page.keyboard.type("dog")
    page.keyboard.press("Enter")
    # the first finish of a test run loads the judges that check the word (over 15 s seen on a
    # loaded machine)
    page.wait_for_selector("#reveal", timeout=60_000)
    reveal = page.inner_text("#reveal")
    assert STRONG in reveal and WEAK in reveal and "top candidates" in reveal
    assert page.evaluate(NO_OVERFLOW)
    screenshot(page, "21-arena-reveal")
    battle.refresh_from_db()
    a, b = battle.game_a, battle.game_b
    expected = battle_outcome(a.outcome == "won", a.n_turns, b.outcome == "won", b.n_turns)
    # the outcome follows the two games (the strong side does not always find "dog" under the
    # open-world answers since the guesser's new phrasing: see the session note of issue 24)
    assert (battle.outcome, battle.word, battle.word_in_kb) == (expected, "dog", True)
    assert battle.game_a.turns.count() + battle.game_b.turns.count() == answered
