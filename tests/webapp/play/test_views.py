"""HTML views: htmx fragments, no secret leaks, CSRF, escaping, the trajectory browser, players."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from tests.webapp.play.support import model_game, truthful_verdict, visitor_of
from tests.webapp.play.support import start_from_page as start_game
from webapp.catalog.models import WordList
from webapp.jobs.models import Job
from webapp.play import selectors, services
from webapp.play.models import Game

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


class TestPlayingPages:
    def test_the_start_page_offers_every_judge_guesser_and_word_list(self, client, catalog):
        html = client.get("/play/").content.decode()
        for name in ("kb", "kb-any-sense", "infogain", "random", "dbrl/paper_test"):
            assert f'value="{name}"' in html
        assert 'value="dbrl/paper_test" selected' in html and 'value="pretrained" selected' in html
        assert 'value="learned"' in html and 'value="kb+learned"' in html
        assert 'value="kb-closed"' in html

    def test_the_answerer_form_draws_a_word_only_when_asked_to(self, client, catalog, fixed_secret):
        fixed_secret("violin")
        kept = start_game(client, role="answerer", guesser="infogain", word_list="dbrl/paper_test")
        drawn = start_game(
            client, role="answerer", guesser="random", word_list="dbrl/paper_test", draw_word="on"
        )
        assert (kept.secret, kept.word_list, kept.guesser.name) == ("", None, "infogain")
        assert (drawn.secret, drawn.word_list.name, drawn.guesser.name) == (
            "violin",
            "dbrl/paper_test",
            "random",
        )
        assert (
            'Your word: <strong class="secret">violin</strong>'
            in client.get(f"/play/{drawn.pk}/").content.decode()
        )

    def test_the_secret_never_reaches_the_browser_before_the_end(
        self, client, catalog, fixed_secret
    ):
        fixed_secret("xylophone")
        game = start_game(
            client, role="guesser", judge="kb", word_list="dbrl/paper_test", max_turns=3
        )
        pages = [
            client.get(f"/play/{game.pk}/"),
            client.get(f"/games/{game.pk}/"),
            client.get(f"/games/{game.pk}.json"),
            client.get("/games/"),
            client.get(f"/api/games/{game.pk}/"),
            client.post(
                f"/play/{game.pk}/ask/",
                {"question": "Is it a kind of musical instrument?", "expected_index": 0},
                **HTMX,
            ),
        ]
        for response in pages:
            assert response.status_code == 200 and b"xylophone" not in response.content, (
                response.request["PATH_INFO"]
            )
        assert (
            "No games match" in client.get("/games/?word=xylophone").content.decode()
        )  # not searchable either
        done = client.post(f"/play/{game.pk}/abandon/", **HTMX).content.decode()
        assert 'id="revealed-secret">xylophone<' in done

    def test_an_htmx_question_returns_the_panel_and_announces_the_answer(
        self, client, catalog, fixed_secret
    ):
        fixed_secret("dog")
        game = start_game(client, role="guesser")
        response = client.post(
            f"/play/{game.pk}/ask/",
            {"question": "Is it a kind of animal?", "expected_index": 0},
            **HTMX,
        )
        html = response.content.decode()
        assert (
            response.status_code == 200
            and "<html" not in html
            and html.lstrip().startswith('<section id="game-panel"')
        )
        assert 'data-next-index="1"' in html and "Question <strong>2</strong> of 20" in html
        announced = (
            'hx-swap-oob="innerHTML:#announcer">'
            "Question 1: “Is it a kind of animal?” — Answer: Yes."
        )
        assert announced in html
        full = client.get(f"/play/{game.pk}/").content.decode()
        assert 'id="announcer" class="announcer" aria-live="polite"' in full and "<html" in full

    def test_without_htmx_a_question_redirects_back_to_the_game(self, client, catalog):
        game = start_game(client, role="guesser")
        response = client.post(
            f"/play/{game.pk}/ask/", {"question": "Is it alive?", "expected_index": 0}
        )
        assert response.status_code == 302 and response["Location"] == f"/play/{game.pk}/"
        assert game.turns.count() == 1

    def test_a_refusal_is_shown_in_the_panel_with_its_status(self, client, catalog):
        game = start_game(client, role="guesser")
        response = client.post(
            f"/play/{game.pk}/ask/", {"question": "Is it alive?", "expected_index": 5}, **HTMX
        )
        assert response.status_code == 409
        assert 'role="alert">Question 6 is not the next one' in response.content.decode()
        stale = client.post(
            f"/play/{game.pk}/ask/", {"question": "Is it alive?", "expected_index": 5}
        )
        assert (
            stale.status_code == 302
            and "is not the next one" in client.get(stale["Location"]).content.decode()
        )

    def test_judging_a_model_through_the_page_then_confirming_the_word(
        self, client, catalog, player
    ):
        client.force_login(player)
        game = start_game(client, role="answerer", guesser="infogain")
        page = client.get(f"/play/{game.pk}/").content.decode()
        assert "infogain</span> asks, you answer" in page and "That's my word!" in page
        html = page
        for _ in range(40):
            game.refresh_from_db()
            if game.status != "playing":
                break
            verdict = truthful_verdict("dog", game.state["pending"]["question"])
            html = client.post(
                f"/play/{game.pk}/answer/",
                {"verdict": verdict, "expected_index": game.n_turns},
                **HTMX,
            ).content.decode()
        assert "found your word in" in html and 'id="secret-input"' in html
        assert "belief before the answer:" in html
        html = client.post(f"/play/{game.pk}/confirm/", {"secret": "dog"}, **HTMX).content.decode()
        assert 'id="revealed-secret">dog<' in html and "agrees with all" in html

    def test_the_kb_comparison_names_each_differing_answer(self, client, catalog, player):
        client.force_login(player)
        game = start_game(client, role="answerer", guesser="infogain", max_turns=2)  # KB's forms
        for index in range(2):
            client.post(
                f"/play/{game.pk}/answer/", {"verdict": "no", "expected_index": index}, **HTMX
            )
        html = client.post(f"/play/{game.pk}/confirm/", {"secret": "dog"}, **HTMX).content.decode()
        differing = Game.objects.get(pk=game.pk).state["kb_check"]["differences"]
        assert differing and html.count("<td>No</td>") == len(
            differing
        )  # one row per differing answer
        assert all(f"Question {d['index'] + 1}</a>" in html for d in differing)

    @pytest.mark.parametrize(
        "judge, text",
        [
            ("kb", "understands questions like"),
            ("learned", "This judge answers any yes/no question"),
            ("kb+learned", "This judge answers any yes/no question"),
        ],
    )
    def test_suggestions_continue_what_was_typed_in_the_judges_forms(
        self, client, catalog, judge, text
    ):
        game = start_game(client, role="guesser", judge=judge)
        options = client.get(
            f"/play/{game.pk}/suggestions/", {"question": "Is it a kind of ani"}
        ).content.decode()
        assert '<option value="Is it a kind of animal?">' in options
        heads = client.get(f"/play/{game.pk}/suggestions/", {"question": "Does"}).content.decode()
        assert (
            '<option value="Does it have a ">' in heads
            and '<option value="Does it have an ">' in heads
        )
        vowels = client.get(
            f"/play/{game.pk}/suggestions/", {"question": "Does it have an a"}
        ).content.decode()
        assert re.findall(r'value="Does it have an a\w', vowels) and "have a a" not in vowels
        assert text in client.get(f"/play/{game.pk}/").content.decode()

    def test_guests_are_limited_in_the_html_views_too(self, client, catalog, settings):
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {"guest_play": "2/minute"},
        }
        game = start_game(client, role="guesser")
        client.post(
            f"/play/{game.pk}/ask/", {"question": "Is it alive?", "expected_index": 0}, **HTMX
        )
        limited = client.post(
            f"/play/{game.pk}/ask/", {"question": "Is it big?", "expected_index": 1}, **HTMX
        )
        assert (
            limited.status_code == 429
            and "Guests may play only so fast" in limited.content.decode()
        )
        assert (
            client.post("/play/start/", {"role": "guesser"}).status_code == 302
            and Game.objects.count() == 1
        )


def test_every_form_refuses_a_post_without_the_csrf_token(catalog, player):
    game = services.game_start(visitor=visitor_of(player), role="guesser")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(player)
    posts = {
        "/play/start/": {"role": "guesser"},
        f"/play/{game.pk}/ask/": {"question": "Is it alive?", "expected_index": 0},
        f"/play/{game.pk}/answer/": {"verdict": "yes", "expected_index": 0},
        f"/play/{game.pk}/confirm/": {"secret": "dog"},
        f"/play/{game.pk}/abandon/": {},
        "/api/games/": {"role": "guesser"},
        f"/api/games/{game.pk}/turns/": {"question": "Is it alive?", "expected_index": 0},
    }
    for url, data in posts.items():
        assert strict.post(url, data).status_code == 403, url
    assert Game.objects.count() == 1 and game.turns.count() == 0
    token = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)"',
        strict.get(f"/play/{game.pk}/").content.decode(),
    )[1]
    assert (
        strict.post(
            f"/play/{game.pk}/ask/",
            {"question": "Is it alive?", "expected_index": 0, "csrfmiddlewaretoken": token},
        ).status_code
        == 302
    )
    assert game.turns.count() == 1


def test_html_in_questions_and_usernames_is_inert_text_everywhere(client, catalog):
    evil = get_user_model().objects.create(
        username="<script>alert('u')</script>"
    )  # e.g. made in the admin
    game = services.game_start(visitor=visitor_of(evil), role="guesser", max_turns=1)
    services.turn_submit(
        game_id=game.pk,
        visitor=visitor_of(evil),
        question="<script>alert('q')</script><b>Is it?</b>",
        expected_index=0,
    )
    client.force_login(evil)
    pages = [
        f"/play/{game.pk}/",
        f"/games/{game.pk}/",
        "/games/",
        f"/players/{evil.username}/",
        "/",
    ]
    for url in pages:
        html = client.get(url).content.decode()
        assert "<script>alert(" not in html and "<b>Is it?" not in html, url
        assert "&lt;script&gt;alert(" in html, url
    detail = client.get(f"/games/{game.pk}/").content.decode()
    assert "&lt;b&gt;Is it?&lt;/b&gt;" in detail
    data = json.loads(
        re.search(r'id="chart-data" type="application/json">(.*?)</script>', detail, re.S)[1]
    )
    assert data["questions"] == [
        "<script>alert('q')</script><b>Is it?</b>"
    ]  # json_script escaped it safely


class TestTrajectoryBrowser:
    def test_filters_live_in_the_url_and_each_one_narrows_the_list(self, client, catalog, player):
        job = Job.objects.create(kind="eval")
        other_list = WordList.objects.create(name="mini", version=1)
        won = model_game("dog", ["Is it a kind of animal?", "Is it a dog?"], job=job)
        lost = model_game("cat", ["Is it a kind of plant?"], word_list=other_list)
        mine = services.game_start(visitor=visitor_of(player), role="answerer", guesser="infogain")
        Game.objects.filter(pk=lost.pk).update(created_at=timezone.now() - dt.timedelta(days=10))
        today = timezone.now().date()
        cases = {
            "": {mine.pk},  # bare /games/: people's games only
            "show=all": {won.pk, lost.pk, mine.pk},
            "show=models": {won.pk, lost.pk},
            "outcome=won": {won.pk},
            f"job={job.pk}": {won.pk},
            "word=CAT": {lost.pk},
            "word_list=mini": {lost.pk},
            f"player={player.username}": {mine.pk},
            "player=guest": set(),  # nobody played the model-vs-model games
            "guesser=infogain": {won.pk, lost.pk, mine.pk},
            "judge=kb": {won.pk, lost.pk},
            "mode=human_judge": {mine.pk},
            f"date_from={today}": {won.pk, mine.pk},
            f"date_to={today - dt.timedelta(days=5)}": {lost.pk},
        }
        for query, expected in cases.items():
            html = client.get(f"/games/?{query}").content.decode()
            shown = {int(pk) for pk in re.findall(r'<td><a href="/games/(\d+)/">', html)}
            assert shown == expected, query
        partial = client.get("/games/?outcome=won", **HTMX).content.decode()
        assert "<html" not in partial and f"/games/{won.pk}/" in partial

    def test_people_guests_partial_words_and_bad_values(self, client, catalog, player):
        """Issue 22 item 7: guests are people, word and player match in part and in any case, an
        invalid value leaves out only itself and says so in words."""
        model = model_game("dog", ["Is it a kind of animal?", "Is it a dog?"])
        guest = services.game_start(visitor=visitor_of(None), role="answerer")
        Game.objects.filter(pk=guest.pk).update(status="finished", outcome="won", secret="hotdog")
        mine = services.game_start(visitor=visitor_of(player), role="answerer")

        def shown(query):
            html = client.get(f"/games/?{query}").content.decode()
            return html, {int(pk) for pk in re.findall(r'<td><a href="/games/(\d+)/">', html)}

        html, ids = shown("")
        assert ids == {guest.pk, mine.pk} and "include model games" in html
        assert 'href="?show=all" id="include-model-games"' in html
        assert shown("show=all")[1] == {model.pk, guest.pk, mine.pk}
        assert shown("player=guest")[1] == {guest.pk}
        assert shown("player=GUEST")[1] == {guest.pk}
        assert shown(f"player={player.username[:3].upper()}")[1] == {mine.pk}
        assert shown("word=DOG")[1] == {model.pk, guest.pk}  # a link with filters: every game
        assert shown("word=hot&show=people")[1] == {guest.pk}
        html, ids = shown("job=abc&word=Hotd&date_from=someday")
        assert ids == {guest.pk}  # the word filter still applies
        assert "Job “abc” was left out: not a whole number." in html
        assert "From “someday” was left out: not a date (year-month-day)." in html
        assert "job:" not in html and '<ul class="errorlist' not in html
        partial = client.get("/games/?outcome=nope&word=dog", **HTMX).content.decode()
        assert "Outcome “nope” was left out: not one of the choices." in partial
        assert f"/games/{model.pk}/" in partial

    def test_pagination_keeps_the_filters(self, client, catalog):
        for _ in range(27):
            model_game("dog", ["Is it a dog?"])
        html = client.get("/games/?outcome=won&judge=kb").content.decode()
        assert "27 games" in html and 'href="?outcome=won&amp;judge=kb&amp;page=2"' in html
        second = client.get("/games/?outcome=won&judge=kb&page=2").content.decode()
        assert len(re.findall(r'<td><a href="/games/\d+/">', second)) == 2
        assert 'value="won" selected' in second  # the form shows the filters it applied

    def test_the_trajectory_page_has_charts_tables_and_turn_permalinks(self, client, catalog):
        game = model_game(
            "dog", ["Is it a kind of animal?", "Is it a kind of plant?", "Is it a dog?"]
        )
        html = client.get(f"/games/{game.pk}/").content.decode()
        for canvas in ("chart-belief", "chart-candidates", "chart-reward"):
            assert f'<canvas id="{canvas}" role="img"' in html
        for table in ("belief-table", "candidates-table", "reward-table"):
            assert f'id="{table}"' in html
        assert all(f'<tr id="turn-{n}" class="turn-row">' in html for n in (1, 2, 3))
        assert (
            "js/chart.umd.min.js" in html
            and "js/trajectory.js" in html
            and "cdn" not in html.lower()
        )
        data = json.loads(
            re.search(r'id="chart-data" type="application/json">(.*?)</script>', html, re.S)[1]
        )
        assert data["candidates_left"] == [100, 50, 33] and data["reward_parts"]["win"] == [
            0.0,
            0.0,
            2.0,
        ]

    def test_the_json_download_is_the_trajectory_plus_ids_and_provenance(
        self, client, catalog, player
    ):
        game = model_game("dog", ["Is it a kind of animal?", "Is it a dog?"])
        response = client.get(f"/games/{game.pk}.json")
        assert response["Content-Disposition"] == f'attachment; filename="game-{game.pk}.json"'
        data = response.json()
        assert {
            "secret",
            "seed",
            "config",
            "turns",
            "outcome",
            "guesser",
            "judge",
            "initial_belief",
        } <= set(data)
        assert (data["id"], data["secret"], data["outcome"], data["guesser"]) == (
            game.pk,
            "dog",
            "won",
            "infogain",
        )
        assert (
            data["turns"][0]["id"] == game.turns.get(index=0).pk
            and data["turns"][1]["verdict"] == "finished"
        )

        running = services.game_start(visitor=visitor_of(player), role="guesser")
        services.turn_submit(
            game_id=running.pk,
            visitor=visitor_of(player),
            question="Is it alive?",
            expected_index=0,
        )
        hidden = client.get(f"/games/{running.pk}.json").json()
        assert (
            hidden["secret"] is None
            and hidden["turns"][0]["judge_raw"] == ""
            and hidden["status"] == "playing"
        )


def test_a_players_page_shows_their_history_and_stats(client, catalog, player, fixed_secret):
    fixed_secret("dog")
    visitor = visitor_of(player)
    for questions in (
        ["Is it a dog?"],
        ["Is it alive?", "Is it a kind of animal?", "Is it a dog?"],
    ):
        game = services.game_start(visitor=visitor, role="guesser")
        for i, q in enumerate(questions):
            services.turn_submit(game_id=game.pk, visitor=visitor, question=q, expected_index=i)
    lost = services.game_start(visitor=visitor, role="guesser", max_turns=1)
    services.turn_submit(
        game_id=lost.pk, visitor=visitor, question="Is it a cat?", expected_index=0
    )
    services.game_start(visitor=visitor, role="guesser")  # still playing: not in the stats
    # a game the player answered and the model won: the model's win, not the player's
    answered = services.game_start(visitor=visitor, role="answerer", word_list="dbrl/paper_test")
    Game.objects.filter(pk=answered.pk).update(status="finished", outcome="won", n_turns=4)
    html = client.get(f"/players/{player.username}/").content.decode()

    def cells(table_id):
        table = re.search(rf'<table class="data stats" id="{table_id}">(.*?)</table>', html, re.S)[
            1
        ]
        return re.findall(r"<td>(.*?)</td>", table)

    assert cells("stats-asking") == ["3", "2", "67%", "0", "1.7", "2.0"]
    assert cells("stats-answering") == ["1", "1", "100%", "0", "4.0", "4.0"]
    assert (
        "The model found the word" in html
        and "Model's success rate" in html
        and "4 finished games" in html
    )
    assert "1 game in progress" in html and html.count('<td><a href="/games/') == 5
    client.force_login(player)
    assert client.get("/players/me/")["Location"] == f"/players/{player.username}/"
    assert Client().get("/players/me/")["Location"].startswith("/accounts/login/")


def test_a_models_win_counts_on_the_players_page_only_once_the_word_is_confirmed(
    client, catalog, player
):
    """Issue 34 item 20: "That's my word!" on "Is it an object?", then leaving, is no model win;
    a game given up is a loss for no one."""
    visitor = visitor_of(player)
    kept = services.game_start(visitor=visitor, role="answerer", ask_first=False)
    Game.objects.filter(pk=kept.pk).update(status="finished", outcome="won", n_turns=3)
    given_up = services.game_start(visitor=visitor, role="answerer", ask_first=False)
    Game.objects.filter(pk=given_up.pk).update(status="abandoned", outcome="abandoned", n_turns=2)
    stats = selectors.player_stats(user=player)["as_answerer"]
    assert (stats["games"], stats["wins"], stats["win_rate"]) == (0, 0, None)
    assert (stats["unconfirmed"], stats["abandoned"]) == (1, 1)
    html = client.get(f"/players/{player.username}/").content.decode()
    assert 'id="unconfirmed-wins"' in html and "1 game the model may have won awaits" in html
    Game.objects.filter(pk=kept.pk).update(secret="bottle")  # the word confirmed
    stats = selectors.player_stats(user=player)["as_answerer"]
    assert (stats["games"], stats["wins"], stats["unconfirmed"]) == (1, 1, 0)


def test_the_game_page_has_one_htmx_config_that_swaps_refusals_and_keeps_the_csp_settings(
    client, catalog
):
    """htmx reads only the first htmx-config: the game page's must carry base.html's settings too,
    or a 4xx refusal (a stale question index, a form error) is never shown."""
    import json

    game = start_game(client, role="guesser", max_turns=20)
    page = client.get(f"/play/{game.pk}/").content.decode()
    configs = re.findall(r'<meta name="htmx-config" content=\'([^\']*)\'>', page)
    assert len(configs) == 1
    config = json.loads(configs[0])
    assert config["allowEval"] is False and config["includeIndicatorStyles"] is False
    assert {"code": "4..", "swap": True, "error": False} in config["responseHandling"]
    other = client.get("/games/").content.decode()
    assert re.findall(r'<meta name="htmx-config" content=\'([^\']*)\'>', other) == [
        '{"includeIndicatorStyles": false, "allowEval": false}'
    ]
