"""Playing the shipped trained guessers (issue 23): offered instead of the untrained tiny model,
saying that they know only their pool, the word picked from that pool, and their top candidates
after each answer."""

from __future__ import annotations

import pytest

from tests.webapp.play.support import start_from_page, truthful_verdict
from webapp.catalog.selectors import word_list_latest
from webapp.catalog.services import seed_model_specs
from webapp.catalog.shipped import POOL_LIST, seed_guesser_specs, seed_pool_word_list


def pool_words() -> list[str]:
    return list(word_list_latest(POOL_LIST).words.values_list("text", flat=True))


pytestmark = pytest.mark.django_db


@pytest.fixture
def trained(catalog, tmp_path):
    seed_model_specs(tmp_path / "tiny")  # the untrained tiny model too (not built: never played)
    seed_pool_word_list()
    seed_guesser_specs()


def test_the_start_page_offers_the_trained_guessers_with_their_pool(client, trained):
    html = client.get("/play/").content.decode()
    assert 'value="tiny-20q-sft" data-pool="bench-learningpool"' in html
    assert f'data-pool-name="{POOL_LIST}"' in html  # the word list the draw preselects
    assert "tiny-20q-sft knows only its pool</strong>: the 400 words of bench-learning/pool" in html
    assert 'value="tiny-llama"' not in html  # a training base, not an opponent
    first = min(pool_words())
    assert f'<datalist id="pool-words-bench-learningpool"><option value="{first}">' in html
    assert f'<option value="{POOL_LIST}"' in html  # its pool can be drawn from


def test_the_person_picks_the_word_from_the_pool_and_sees_the_pools_candidates(client, trained):
    game = start_from_page(
        client, role="answerer", guesser="tiny-20q-sft", draw_word="pick", secret="rocket"
    )
    assert (game.secret, game.state["secret_source"]) == ("rocket", "player")
    pending = game.state.get("pending")
    if pending is not None:  # a question for the person (the rules decide an invalid one)
        verdict = truthful_verdict("rocket", pending["question"])
        client.post(f"/play/{game.pk}/answer/", {"verdict": verdict, "expected_index": 0})
    first = game.turns.get(index=0)
    assert len(first.top_candidates) == 5
    assert {w for w, _ in first.top_candidates} <= set(pool_words())


def test_picking_needs_a_word(client, trained):
    response = client.post(
        "/play/start/", {"role": "answerer", "guesser": "tiny-20q-sft", "draw_word": "pick"}
    )
    assert response.status_code == 302 and response["Location"] == "/play/"
    assert "type a word from its pool" in client.get("/play/").content.decode()
