"""The site's own pages: home for a newcomer, the 403/404/500 pages inside the layout (never
DEBUG's URL list), the favicon and the skip link."""

from __future__ import annotations

import re

import pytest

from webapp.catalog.models import ModelSpec, WordList
from webapp.jobs.models import Job
from webapp.leaderboards.services import leaderboards_refresh
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
URL_LIST = "Django tried these URL patterns"  # DEBUG's 404 page


@pytest.fixture
def no_debug(settings):
    settings.DEBUG = False  # the handlers that visitors see, as in production
    return settings


def _in_layout(body: str) -> bool:
    return 'class="site-header"' in body and '<main id="main"' in body


def _game(secret: str, won: bool, n_turns: int, **fields) -> Game:
    return Game.objects.create(
        secret=secret,
        status="finished",
        outcome="won" if won else "lost",
        n_turns=n_turns,
        **fields,
    )


def _kb() -> ModelSpec:
    return ModelSpec.objects.get_or_create(
        name="kb-judge", defaults={"kind": "kb", "role": "judge"}
    )[0]


@pytest.fixture
def boards(make_user):
    """Finished games of four models and four people, and the boards computed from them."""
    kb = _kb()
    words = WordList.objects.create(name="test/words", version=1)
    job = Job.objects.create(kind="evaluation", status="finished")
    sample = iter(range(100))
    for rank, name in enumerate(("m-first", "m-second", "m-third", "m-fourth")):
        guesser = ModelSpec.objects.create(name=name, kind="infogain", role="guesser")
        for i in range(4):
            _game(
                "apple", i >= rank, 9, mode="model", guesser=guesser, judge=kb, word_list=words,
                job=job, sample_index=next(sample), config={"max_turns": 20},
            )  # fmt: skip
    people = {}
    for wins, name in ((6, "pia"), (4, "paul"), (2, "pam"), (0, "pete")):
        people[name] = make_user("player", username=name)
        for i in range(6):
            _game(
                f"w{i}", i < wins, 7, mode="human_guesser", player=people[name], judge=kb,
                config={"max_turns": 20, "win_rule": "strict"},
            )  # fmt: skip
    leaderboards_refresh()
    return people


def test_home_tells_a_newcomer_how_to_play(client):
    body = client.get("/").content.decode()
    assert "How to play" in body
    assert "You ask" in body and "The model asks" in body
    assert "20 questions" in body
    assert "<kbd>Ctrl</kbd>+<kbd>Enter</kbd>" in body
    assert all(f"<kbd>{key}</kbd>" in body for key in "YNDIW")  # the answer keys of panel-keys.js
    assert "No finished games yet" in body
    assert "No model games on the board yet" in body


def test_home_links_recent_finished_peoples_games_and_board_highlights(
    client, boards, django_assert_max_num_queries
):
    _game("", True, 3, mode="human_judge", guesser=ModelSpec.objects.get(name="m-first"))
    newest = _game("kettle", True, 5, mode="human_guesser", player=boards["pia"], judge=_kb())
    running = Game.objects.create(secret="hidden-word", mode="human_guesser", status="playing")
    with django_assert_max_num_queries(6):  # boards, recent games, word lists
        response = client.get("/")
    body = response.content.decode()
    recent = " ".join(
        body[body.index('id="recent-games"') : body.index("Board highlights")].split()
    )
    links = re.findall(r'href="/games/(\d+)/"', recent)
    assert len(links) == 5 and links[0] == str(newest.pk)  # the newest five, newest first
    assert str(running.pk) not in links and "hidden-word" not in body
    assert "asked kb-judge and found “kettle” in 5 questions" in recent
    assert "a guest answered m-first, which found the word in 3 questions" in recent
    assert "did not find “w5” in 7 questions" in recent
    assert "m-second" not in recent  # models' games are not people's games
    top_models = body[body.index('id="top-models"') : body.index('id="top-people"')]
    assert re.findall(r"<li><a [^>]*>([^<]+)</a>", top_models) == ["m-first", "m-second", "m-third"]
    top_people = body[body.index('id="top-people"') : body.index("All leaderboards")]
    assert re.findall(r"<li><a [^>]*>([^<]+)</a>", top_people) == ["pia", "paul", "pam"]
    assert 'href="/players/pia/"' in top_people


def test_home_keeps_the_word_lists_table(client):
    WordList.objects.create(name="test/words", version=3)
    body = client.get("/").content.decode()
    assert "<h2>Word lists</h2>" in body and "test/words" in body


def test_404_is_in_the_layout_and_lists_no_url_patterns(client, no_debug):
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    body = response.content.decode()
    assert _in_layout(body) and "Page not found" in body
    assert 'href="/play/"' in body and 'href="/games/"' in body
    main = body.split("<main", 1)[1]
    assert URL_LIST not in body and "admin/" not in main and "api/" not in main


def test_a_missing_game_is_the_same_404_page(client, no_debug):
    response = client.get("/games/987654/")
    assert response.status_code == 404
    assert "Page not found" in response.content.decode()


def test_403_is_in_the_layout_and_says_what_is_missing(client, no_debug, player):
    client.force_login(player)
    response = client.get("/jobs/")
    assert response.status_code == 403
    body = response.content.decode()
    assert _in_layout(body) and "You cannot open this page" in body
    assert "researcher role" in body and 'href="/play/"' in body


@pytest.mark.urls("tests.webapp.core.error_urls")
def test_500_is_in_the_layout(client, no_debug):
    client.raise_request_exception = False
    response = client.get("/broken/")
    assert response.status_code == 500
    body = response.content.decode()
    assert _in_layout(body) and "Something went wrong on our side" in body
    assert "RuntimeError" not in body and "Traceback" not in body
    assert 'href="/games/"' in body


def test_favicon_is_linked_and_favicon_ico_is_answered(client):
    body = client.get("/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in body
    response = client.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"] == "/static/favicon.svg"


def test_skip_link_is_the_first_focusable_element_and_targets_main(client):
    body = client.get("/").content.decode()
    first = re.search(r"<(a|button|input|select|textarea)\b[^>]*>", body.split("<body", 1)[1])
    assert first.group(0) == '<a class="skip-link" href="#main">'
    assert '<main id="main"' in body


def test_menu_button_controls_the_site_menu(client):
    body = client.get("/").content.decode()
    assert "{#" not in body and "#}" not in body  # a template comment spanning lines shows as text
    assert (
        '<button type="button" class="menu-toggle" aria-expanded="false" '
        'aria-controls="site-menu">Menu</button>' in body
    )
    menu = body[body.index('id="site-menu"') : body.index("</header>")]
    assert 'href="/accounts/login/"' in menu and 'href="/accounts/signup/"' in menu
    assert '<script src="/static/js/nav.js" defer></script>' in body


def test_home_top_people_come_from_one_word_list(client, make_user):
    """The People board ranks each word list apart: the home page's top people are the most
    played list's, never a mix of lists (where one person could be listed twice)."""
    kb = _kb()
    big = WordList.objects.create(name="test/big", version=1)
    small = WordList.objects.create(name="test/small", version=1)
    strict = {"max_turns": 20, "win_rule": "strict"}
    for name, wins in (("pia", 5), ("paul", 3)):
        user = make_user("player", username=name)
        for i in range(6):
            _game(
                f"w{i}", i < wins, 7, mode="human_guesser", player=user, judge=kb,
                word_list=big, config=strict,
            )  # fmt: skip
    _game(
        "w9", True, 4, mode="human_guesser", player=user, judge=kb, word_list=small, config=strict
    )
    leaderboards_refresh()
    body = client.get("/").content.decode()
    top_people = body[body.index('id="top-people"') : body.index("All leaderboards")]
    assert re.findall(r"<li><a [^>]*>([^<]+)</a>", top_people) == ["pia", "paul"]
    assert "test/big" in top_people


def test_home_leaves_out_games_hidden_while_their_secret_is_labelled(client):
    """A game asking a question still being labelled is hidden from everyone but researchers and
    its player (webapp.labelling.selectors.games_not_blinded): the home page does not link to it."""
    from webapp.labelling.models import DisagreementItem
    from webapp.play.models import Turn

    shown = _game("apple", True, 4, mode="human_guesser", judge=_kb())
    hidden = _game("kettle", True, 5, mode="human_guesser", judge=_kb())
    Turn.objects.create(game=hidden, index=0, question="Is it metal?", verdict="yes")
    DisagreementItem.objects.create(secret="kettle", question="Is it metal?")
    assert client.get(f"/games/{hidden.pk}/").status_code == 403
    body = client.get("/").content.decode()
    assert f'href="/games/{shown.pk}/"' in body
    assert f'href="/games/{hidden.pk}/"' not in body and "kettle" not in body
