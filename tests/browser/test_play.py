"""Playing and inspecting games in a real browser: both roles, the keyboard, the trajectory
charts."""

from __future__ import annotations

import pytest

from games import rules
from tests.browser.conftest import screenshot
from tests.webapp.play.support import model_game, truthful_verdict
from webapp.play import services
from webapp.play.models import Game

pytestmark = pytest.mark.browser


def new_game_id(page) -> int:
    page.wait_for_url("**/play/*/")
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


def wait_past_turn(page, index: int) -> int:
    """Wait until the panel has moved past turn `index`; return the new next index."""
    page.wait_for_function(
        "n => Number(document.getElementById('game-panel').dataset.nextIndex) > n", arg=index
    )
    return int(page.locator("#game-panel").get_attribute("data-next-index"))


def test_play_a_whole_game_as_the_guesser_to_a_win(page, play_catalog, monkeypatch):
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "dog")
    page.goto("/play/")
    screenshot(page, "01-new-game")
    page.click("#start-asking")
    game_id = new_game_id(page)
    assert "dog" not in page.content()  # the secret stays on the server
    page.fill("#question-input", "I think it's a ball")  # no "?": caught before it costs a turn
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#game-panel .form-error")
    assert "Did you mean “Is it a ball?”?" in page.inner_text("#game-panel .form-error")
    assert page.input_value("#question-input") == "I think it's a ball"
    assert page.inner_text("#turn-counter").startswith("Question 1 of 20")
    page.fill("#question-input", "Is it a kind of animal?")
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#play-turn-1 .verdict-yes")
    assert page.inner_text("#turn-counter").startswith("Question 2 of 20")
    assert page.inner_text("#announcer") == "Question 1: “Is it a kind of animal?” — Answer: Yes."
    screenshot(page, "02-guesser-playing")
    page.fill("#question-input", "Is it a dog?")
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#revealed-secret")
    assert page.inner_text("#revealed-secret") == "dog"
    assert "You won in 2 questions!" in page.inner_text(".end-screen")
    assert "The word was “dog”" in page.inner_text("#announcer")
    screenshot(page, "03-guesser-won")
    game = Game.objects.get(pk=game_id)
    assert (game.outcome, game.n_turns, game.player) == ("won", 2, None)


def test_judge_the_infogain_guesser_with_buttons_and_shortcuts_then_confirm(page, play_catalog):
    page.goto("/play/")
    page.click("#start-judging")
    game_id = new_game_id(page)
    index, used_keys = 0, set()
    while page.locator("#game-panel").get_attribute("data-over") == "false":
        verdict = truthful_verdict("dog", page.inner_text("#pending-question"))
        if verdict == "finished":
            page.click("button[value=finished]")  # "That's my word!"
        elif index % 2 == 0:  # keyboard: play.js keeps the focus in the panel after each swap
            page.wait_for_function(
                "document.getElementById('game-panel').contains(document.activeElement)"
            )
            key = {"yes": "y", "no": "n", "unknown": "?"}[verdict]
            page.keyboard.press(key)
            used_keys.add(key)
        else:
            page.click(f"#game-panel button[value={verdict}]")
        if index == 2:
            screenshot(page, "04-answerer-playing")
        index = wait_past_turn(page, index)
        assert index < 25, "the guesser should find 'dog' well within 25 questions"
    assert used_keys >= {"y", "n"}
    assert "found your word in" in page.inner_text(".end-screen")
    page.fill("#secret-input", "dog")
    page.click(".confirm-form button[type=submit]")
    page.wait_for_selector("#revealed-secret")
    assert "agrees with all" in page.inner_text(".kb-check")
    assert page.locator(".turn-list .candidates").count() == index  # top 5 after every turn
    screenshot(page, "05-answerer-confirmed")
    game = Game.objects.get(pk=game_id)
    assert (game.outcome, game.secret, game.n_turns) == ("won", "dog", index)
    assert all(t.extra["judge"] == "human" for t in game.turns.all())


def test_keyboard_shortcuts_send_questions_and_keep_focus(page, play_catalog, monkeypatch):
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "violin")
    page.goto("/play/")
    page.click("#start-asking")
    new_game_id(page)
    page.wait_for_function(
        "document.activeElement && document.activeElement.id === 'question-input'"
    )
    page.keyboard.type("Is it a kind of ani")
    page.wait_for_selector(
        "#kb-suggestions option[value='Is it a kind of animal?']", state="attached"
    )
    page.fill("#question-input", "Is it a kind of musical instrument?")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#play-turn-1 .verdict-yes")
    assert (
        page.evaluate("document.activeElement.id") == "question-input"
    )  # focus came back after the swap
    page.keyboard.type("Is it a kind of drum?")
    page.keyboard.press("Meta+Enter")
    page.wait_for_selector("#play-turn-2 .verdict-no")
    assert page.locator(".turn-list .turn").count() == 2  # each shortcut sent exactly one question
    assert page.inner_text("#announcer") == "Question 2: “Is it a kind of drum?” — Answer: No."
    screenshot(page, "06-keyboard")


def test_the_trajectory_page_renders_its_charts(page, play_catalog):
    game = model_game("dog", ["Is it a kind of animal?", "Is it a kind of plant?", "Is it a dog?"])
    page.goto("/games/")  # people's games by default: the model game is one click away
    assert page.locator(f"a[href='/games/{game.pk}/']").count() == 0
    page.click("#include-model-games")
    page.wait_for_selector(f"a[href='/games/{game.pk}/']")
    screenshot(page, "07-game-list")
    page.goto(f"/games/{game.pk}/#turn-2")
    page.wait_for_function(
        "window.trajectoryCharts && Object.keys(window.trajectoryCharts).length === 3"
    )
    for canvas in ("chart-belief", "chart-candidates", "chart-reward"):
        size = page.evaluate(f"""() => {{
            const chart = Chart.getChart(document.getElementById('{canvas}'));
            return chart ? [chart.width, chart.height, chart.data.labels.length] : null; }}""")
        assert size and size[0] > 100 and size[1] > 100 and size[2] == 3, canvas
    assert page.evaluate("document.getElementById('turn-2').matches(':target')")
    highlight = page.evaluate("getComputedStyle(document.getElementById('turn-2')).backgroundColor")
    assert highlight == "rgb(255, 244, 194)"
    screenshot(page, "08-trajectory")


def test_a_list_of_words_is_invalid_and_a_wrong_guess_is_no_with_the_reason_shown(
    page, play_catalog, monkeypatch
):
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "dinghy")
    page.goto("/play/")
    page.select_option("#ask-judge", "kb")
    page.click("#start-asking")
    new_game_id(page)
    page.fill("#question-input", "Is it a canoe, a kayak, a raft, a yacht, a dinghy or a barge?")
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#play-turn-1 .verdict-invalid")
    assert "Invalid: a guess must name one thing." in page.inner_text("#play-turn-1")
    assert "a guess must name one thing" in page.inner_text("#announcer")
    page.fill("#question-input", "Is it a canoe?")
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#play-turn-2 .verdict-no")
    assert "No, it is not a canoe." in page.inner_text("#play-turn-2")
    assert page.locator("#game-panel").get_attribute("data-over") == "false"


def test_thats_my_word_only_on_a_guess_and_it_can_be_undone(page, play_catalog):
    page.goto("/play/")
    page.click("#start-judging")
    game_id = new_game_id(page)
    index = 0
    while True:  # answer truthfully for "dog" until the guesser makes a guess of one thing
        question = page.inner_text("#pending-question")
        if rules.guessed_thing(question):
            break
        assert page.locator("#my-word").count() == 0, question
        page.click(f"#game-panel button[value={truthful_verdict('dog', question)}]")
        index = wait_past_turn(page, index)
    page.click("#my-word")  # pressed on a guess, whichever it is
    page.wait_for_selector("#secret-input")
    assert "found your word in" in page.inner_text(".end-screen")
    page.click("#undo-answer")
    page.wait_for_selector("#pending-question")
    assert page.inner_text("#pending-question") == question
    assert page.locator("#game-panel").get_attribute("data-over") == "false"
    game = Game.objects.get(pk=game_id)
    assert (game.status, game.n_turns) == ("playing", index)
    screenshot(page, "09-undo")
