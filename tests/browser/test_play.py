"""Playing and inspecting games in a real browser: both roles, the keyboard, the trajectory
charts."""

from __future__ import annotations

import time

import pytest

from games import rules
from games.types import Verdict
from tests.browser.conftest import docs_screenshot, screenshot
from tests.webapp.play.support import model_game, slow_guessers, truthful_verdict
from webapp.play import services
from webapp.play.models import Game
from webapp.play.selectors import informative_belief

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


# How many text nodes on the page show the text to the eye (not those only read out).
VISIBLE_COUNT = """text => {
    const walk = document.createTreeWalker(document.querySelector("main"), NodeFilter.SHOW_TEXT);
    let count = 0;
    while (walk.nextNode()) {
        const el = walk.currentNode.parentElement;
        if (walk.currentNode.data.includes(text) && !el.closest(".visually-hidden")
            && el.getClientRects().length && getComputedStyle(el).visibility !== "hidden") count++;
    }
    return count;
}"""


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
    page.select_option("#judge-guesser", "infogain")  # answered from the KB: its own world
    page.click("#start-judging")
    game_id = new_game_id(page)
    index, used_keys = 0, set()
    while page.locator("#game-panel").get_attribute("data-over") == "false":
        verdict = truthful_verdict("dog", page.inner_text("#pending-question"))
        if verdict == "finished":
            page.click("button[value=finished]")  # "That's my word!"
        elif index % 2 == 0:  # keyboard: panel-keys.js keeps the focus in the panel after each swap
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
        if index == 4:
            docs_screenshot(page, "game")
        index = wait_past_turn(page, index)
        assert index < 25, "the guesser should find 'dog' well within 25 questions"
    assert used_keys >= {"y", "n"}
    assert "found your word in" in page.inner_text(".end-screen")
    page.fill("#secret-input", "dog")
    page.click(".confirm-form button[type=submit]")
    page.wait_for_selector("#revealed-secret")
    assert "agrees with all" in page.inner_text(".kb-check")
    screenshot(page, "05-answerer-confirmed")
    game = Game.objects.get(pk=game_id)
    informative = [t for t in game.turns.all() if informative_belief(t.top_candidates)]
    assert 0 < len(informative) < index  # not at the start, where the belief is near uniform
    assert page.locator(".turn-list .candidates").count() == len(informative)
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


def test_typing_over_a_slow_suggestions_request_logs_no_console_error(
    page, play_catalog, monkeypatch
):
    """Issue 34 item 8: a pause while typing sends a suggestions request; typing on while it runs
    used to abort it, and htmx logs an aborted request as two console errors."""
    from webapp.play import suggestions

    suggest = suggestions.question_suggestions
    monkeypatch.setattr(
        suggestions,
        "question_suggestions",
        lambda **kw: time.sleep(0.5) or suggest(**kw),  # a busy server
    )
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "violin")
    page.goto("/play/")
    page.select_option("#ask-judge", "kb")
    page.click("#start-asking")
    new_game_id(page)
    for n, kind in enumerate(("animal", "plant", "musical instrument"), start=1):
        page.wait_for_function("document.activeElement.id === 'question-input'")
        page.keyboard.type("Is it a kind")
        page.wait_for_timeout(300)  # past the 150 ms pause: a suggestions request is under way
        page.keyboard.type(f" of {kind}?")
        page.keyboard.press("Control+Enter")
        page.wait_for_selector(f"#play-turn-{n}")
    page.wait_for_timeout(1200)  # any request still running ends
    assert errors == []


def test_a_shortcut_pressed_before_the_panel_settles_stays_on_the_page(
    page, play_catalog, monkeypatch
):
    """htmx binds a swapped-in panel only when it settles: a key pressed in between must still
    send the question through htmx, not as a native form post that reloads the page."""
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "violin")
    page.goto("/play/")
    page.click("#start-asking")
    new_game_id(page)
    page.evaluate("htmx.config.defaultSettleDelay = 2000; window.samePage = true")
    page.fill("#question-input", "Is it a kind of musical instrument?")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#play-turn-1 .verdict-yes")
    page.wait_for_function("document.activeElement.id === 'question-input'")
    page.keyboard.type("Is it a kind of drum?")
    page.keyboard.press("Control+Enter")  # within the 2 s before the new panel settles
    page.wait_for_selector("#play-turn-2 .verdict-no")
    assert page.evaluate("window.samePage === true")  # no reload
    assert page.inner_text("#announcer") == "Question 2: “Is it a kind of drum?” — Answer: No."


@pytest.fixture(scope="module")
def person():
    """Answers as a person would, in natural terms: the pretrained judge, not the learned judge
    the natural guesser's P(yes) matrix comes from (it must not grade itself)."""
    from games.registry import build_judge

    return build_judge("pretrained")


@pytest.mark.parametrize("viewport", ["desktop"])  # a whole game is the point, not the layout
@pytest.mark.parametrize("secret", ["apple", "hammer", "dog"])
def test_the_default_opponent_finds_everyday_words_answered_as_a_person_would(
    page, play_catalog, person, secret
):
    page.goto("/play/")
    assert page.input_value("#judge-guesser") == services.DEFAULT_GUESSER == "natural"
    page.click("#start-judging")
    game_id = new_game_id(page)
    index, asked = 0, []
    while page.locator("#game-panel").get_attribute("data-over") == "false":
        question = page.inner_text("#pending-question")
        asked.append(question)
        if rules.wins(question, secret, "strict"):
            verdict = "finished"  # "That's my word!"
        else:
            answer = person.judge(secret, question).verdict
            verdict = answer.value if answer in (Verdict.YES, Verdict.NO) else "unknown"
        page.click(f"#game-panel button[value={verdict}]")
        index = wait_past_turn(page, index)
        assert index <= 20
    assert "found your word in" in page.inner_text(".end-screen"), asked
    game = Game.objects.get(pk=game_id)
    assert (game.outcome, game.n_turns, game.guesser.name) == ("won", index, "natural")
    assert rules.wins(game.turns.get(index=index - 1).question, secret, "strict")
    screenshot(page, f"12-natural-finds-{secret}")


def test_the_trajectory_page_renders_its_charts(page, play_catalog):
    game = model_game("dog", ["Is it a kind of animal?", "Is it a kind of plant?", "Is it a dog?"])
    game.turns.filter(index=2).update(candidates_left=0)  # the set went empty
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
    # issue 34 item 14: a log scale, the empty set left out (a linear one sat on zero)
    scale = "Chart.getChart(document.getElementById('chart-candidates')).options.scales.y.type"
    assert page.evaluate(scale) == "logarithmic"
    assert page.evaluate("document.getElementById('turn-2').matches(':target')")
    highlight = page.evaluate("getComputedStyle(document.getElementById('turn-2')).backgroundColor")
    assert highlight == "rgb(255, 244, 194)"
    screenshot(page, "08-trajectory")
    docs_screenshot(page, "trajectory", at="top")


def test_a_list_of_words_is_refused_unasked_and_a_wrong_guess_is_no_with_the_reason_shown(
    page, play_catalog, monkeypatch
):
    monkeypatch.setattr(services, "draw_secret", lambda words, judge: "dinghy")
    page.goto("/play/")
    page.select_option("#ask-judge", "kb")
    page.click("#start-asking")
    new_game_id(page)
    page.fill("#question-input", "Is it a canoe, a kayak, a raft, a yacht, a dinghy or a barge?")
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#game-panel .form-error")  # refused before it is asked: no turn
    assert "A guess must name one thing." in page.inner_text("#game-panel .form-error")
    assert page.locator("#play-turn-1").count() == 0
    page.fill("#question-input", "Is it a canoe?")
    page.click("#question-form button[type=submit]")
    page.wait_for_selector("#play-turn-1 .verdict-no")
    assert "No, it is not a canoe." in page.inner_text("#play-turn-1")
    assert page.locator("#game-panel").get_attribute("data-over") == "false"


def test_thats_my_word_only_on_a_guess_and_it_can_be_undone(page, play_catalog):
    page.goto("/play/")
    page.click("#start-judging")
    game_id = new_game_id(page)
    index = 0
    while True:  # answer truthfully for "dog" until the guesser makes a guess of one thing
        question = page.inner_text("#pending-question")
        if rules.guessed_word(question):
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


def test_a_slow_guessers_first_question_shows_progress_at_once_and_is_shown_once(
    page, play_catalog, monkeypatch
):
    slow_seconds = 3.0
    slow_guessers(monkeypatch, slow_seconds)  # the real guesser, but its questions take 3 s
    refused: list[str] = []  # the thinking state and its request stay within the CSP
    page.on("console", lambda m: refused.append(m.text) if "Content Security" in m.text else None)
    page.goto("/play/")
    began = time.perf_counter()
    page.click("#start-judging")
    new_game_id(page)
    page.wait_for_selector("#thinking [role=status]")
    shown = time.perf_counter() - began
    assert "The model is thinking of its first question…" in page.inner_text("#game-panel")
    assert shown < slow_seconds, shown  # progress before the model has answered
    screenshot(page, "10-first-question-thinking")
    question = page.inner_text("#pending-question")  # loaded by the page's own request
    asked = time.perf_counter() - began
    print(f"start: progress shown after {shown:.2f} s, question after {asked:.2f} s")
    assert page.evaluate(VISIBLE_COUNT, question) == 1  # in the panel only
    # read out, hidden; the default opponent asks
    assert page.inner_text("#announcer-next") == f"{services.DEFAULT_GUESSER} asks: “{question}”"
    assert not page.is_visible("#announcer")  # nothing answered yet
    assert refused == []


def test_answer_keys_work_anywhere_on_the_page_and_are_named(page, play_catalog):
    page.goto("/play/")
    page.click("#start-judging")
    new_game_id(page)
    first = page.inner_text("#pending-question")
    assert "work anywhere on this page" in page.inner_text("#shortcuts-note")
    page.click("h1")  # focus leaves the game panel
    page.evaluate("document.activeElement && document.activeElement.blur()")
    assert not page.evaluate(
        "document.getElementById('game-panel').contains(document.activeElement)"
    )
    page.keyboard.press("n")
    assert wait_past_turn(page, 0) >= 1
    assert "You answered: No" in page.inner_text("#announcer")
    page.click("h1")
    page.keyboard.press("d")  # Don't know
    wait_past_turn(page, 1)
    game = Game.objects.get(pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))
    assert [t.verdict for t in game.turns.order_by("index")][:2] == ["no", "unknown"]
    assert game.turns.get(index=0).question == first
    screenshot(page, "11-keys-anywhere")


def test_a_guest_signs_up_from_the_end_screen_and_keeps_the_game(page, play_catalog):
    from django.contrib.auth import get_user_model

    page.goto("/play/")
    page.click("#start-asking")
    game_id = new_game_id(page)
    page.once("dialog", lambda dialog: dialog.accept())  # "Give up this game?"
    page.click(".give-up button")
    page.click("#keep-games a[href^='/accounts/signup/']")
    page.wait_for_url(lambda url: f"/accounts/signup/?next=/play/{game_id}/" in url)
    page.fill("#id_username", "ada")
    page.fill("#id_password1", "correct-horse-battery")
    page.fill("#id_password2", "correct-horse-battery!")
    page.click("form.account-form button[type=submit]")
    page.wait_for_selector("#field-password2 .errorlist")
    assert "didn’t match" in page.inner_text("#field-password2")
    assert page.get_attribute("#id_password2", "aria-invalid") == "true"
    assert "1 game you played as a guest" in page.inner_text("#guest-games-note")
    screenshot(page, "12-sign-up-errors")
    page.fill("#id_password1", "correct-horse-battery")
    page.fill("#id_password2", "correct-horse-battery")
    page.click("form.account-form button[type=submit]")
    page.wait_for_url(f"**/play/{game_id}/")
    assert "now in your history" in page.inner_text("main")
    assert page.locator("#keep-games").count() == 0
    assert Game.objects.get(pk=game_id).player == get_user_model().objects.get(username="ada")
