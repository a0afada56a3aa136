"""Playing the shipped trained guessers in a real browser (issue 23): the start page says a trained
guesser knows only its pool, the person picks a held-out word of that pool, answers every question
as the knowledge-base judge would, and sees the pool's top candidates after each answer at the
end; the guessers' questions are valid (not marked invalid) at least 80% of the time."""

from __future__ import annotations

import pytest

from tests.browser.conftest import screenshot
from tests.webapp.play.support import truthful_verdict
from webapp.catalog.shipped import POOL_LIST
from webapp.play.models import Game
from webapp.play.selectors import informative_belief

pytestmark = pytest.mark.browser
TRAINED = ("tiny-20q-sft", "tiny-20q-starpo", "tiny-20q-cia")  # all shipped: a missing one fails
SECRET = "rocket"  # a held-out test word of the pool: never played in training
QUESTIONS = 20  # a whole game of the default length


@pytest.fixture
def trained_catalog(play_catalog, tmp_path):
    from webapp.catalog.services import seed_model_specs
    from webapp.catalog.shipped import seed_guesser_specs, seed_pool_word_list

    seed_model_specs(tmp_path / "tiny")  # registered as a training base, never built here
    seed_pool_word_list()
    seed_guesser_specs()


@pytest.mark.parametrize("guesser", TRAINED)
def test_a_whole_game_against_a_trained_guesser_on_a_word_from_its_pool(
    page, trained_catalog, guesser
):
    page.goto("/play/")
    assert page.locator("#judge-guesser option[value=tiny-llama]").count() == 0
    page.select_option("#judge-guesser", guesser)
    note = page.locator(f"[data-guesser-note='{guesser}']")
    assert note.is_visible() and "knows only its pool" in note.inner_text()
    assert page.locator("[data-guesser-note]:visible").count() == 1
    assert page.input_value("#judge-word-list") == POOL_LIST  # drawing draws from its pool
    page.fill("#pool-word", SECRET)  # typing in the box picks "from its pool"
    assert page.is_checked("#pick-word-radio")
    listed = page.get_attribute("#pool-word", "list")
    assert page.locator(f"#{listed} option[value={SECRET}]").count() == 1  # the autocomplete
    page.fill("#judge-max-turns", str(QUESTIONS))
    screenshot(page, f"trained-01-start-{guesser}")
    page.click("#start-judging")
    page.wait_for_url("**/play/*/")
    game_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    index = 0
    while page.locator("#game-panel").get_attribute("data-over") == "false":
        # the first question loads the model in the server (seconds on a busy CPU)
        page.wait_for_selector("#pending-question, #game-panel[data-over=true]", timeout=90_000)
        if page.locator("#game-panel").get_attribute("data-over") == "true":
            break
        verdict = truthful_verdict(SECRET, page.inner_text("#pending-question"))
        page.click(f"#game-panel button[value={verdict}]")
        page.wait_for_function(
            "n => Number(document.getElementById('game-panel').dataset.nextIndex) > n",
            arg=index,
            timeout=60_000,
        )
        index = int(page.locator("#game-panel").get_attribute("data-next-index"))
    page.wait_for_selector(".end-screen")
    screenshot(page, f"trained-02-end-{guesser}")
    game = Game.objects.get(pk=game_id)
    turns = list(game.turns.order_by("index"))
    assert (game.secret, game.guesser.name, game.status) == (SECRET, guesser, "finished")
    assert game.n_turns == len(turns) and (game.outcome == "won" or len(turns) == QUESTIONS)
    valid = sum(t.verdict != "invalid" for t in turns)
    assert valid >= 0.8 * len(turns), [(t.question, t.verdict) for t in turns]
    # the pool's top candidates before each answer, shown once the game is over and only where
    # the belief is informative (its top word above 1 %)
    informative = [t for t in turns if informative_belief(t.top_candidates)]
    assert all(t.top_candidates for t in turns)
    assert page.locator(".turn-list .candidates").count() == len(informative)
