"""Play services: whole games in both roles, the engine's rules, provenance, ownership."""

from __future__ import annotations

import pytest

from games import rules
from tests.webapp.play.support import truthful_verdict, visitor_of
from webapp.catalog.models import ModelSpec
from webapp.core.exceptions import ApplicationError
from webapp.labelling.models import JudgeVote
from webapp.play import services
from webapp.play.models import Game, GameMode, GameStatus, Turn

pytestmark = pytest.mark.django_db


def play_as_answerer(game: Game, visitor, secret: str, lie: str | None = None) -> Game:
    """Answer every pending question (truthfully, or always `lie`) until the game ends."""
    for _ in range(60):
        game.refresh_from_db()
        if game.status != GameStatus.PLAYING:
            return game
        question = game.state["pending"]["question"]
        services.answer_submit(
            game_id=game.pk,
            visitor=visitor,
            verdict=lie or truthful_verdict(secret, question),
            expected_index=game.n_turns,
        )
    raise AssertionError("the game did not end")


class TestGameStart:
    def test_guesser_game_draws_a_secret_the_judge_knows_from_the_default_word_list(
        self, catalog, player
    ):
        game = services.game_start(visitor=visitor_of(player), role="guesser")
        assert (
            game.mode == GameMode.HUMAN_GUESSER
            and game.judge.name == "pretrained"  # it reads any word
            and game.player == player
        )
        assert game.word_list.name == "dbrl/paper_test"
        assert game.word_list.entries.filter(word__text=game.secret).exists()
        assert game.state["secret_source"] == "word_list" and game.status == GameStatus.PLAYING
        not_in_the_kb = {"casquette", "acai", "akubra", "fascinator"}
        for _ in range(20):  # a judge that reads the knowledge base draws only words it knows
            drawn = services.game_start(visitor=visitor_of(player), role="guesser", judge="learned")
            assert drawn.judge.name == "learned" and drawn.secret not in not_in_the_kb

    def test_a_guest_game_keeps_the_hashed_ip_not_the_ip(self, catalog):
        game = services.game_start(visitor=visitor_of(), role="guesser")
        assert (
            game.player is None and len(game.guest_key) == 64 and "127.0.0.1" not in game.guest_key
        )

    def test_only_researchers_choose_the_secret_of_a_game_they_guess(
        self, catalog, player, researcher
    ):
        with pytest.raises(ApplicationError) as err:
            services.game_start(visitor=visitor_of(player), role="guesser", secret="dog")
        assert err.value.status == 403
        game = services.game_start(visitor=visitor_of(researcher), role="guesser", secret="Dogs!")
        assert game.secret == "dogs" and game.state["secret_source"] == "chosen"

    def test_unknown_models_word_lists_and_roles_are_refused_with_a_sentence(self, catalog, player):
        visitor = visitor_of(player)
        for kwargs, words in [
            (dict(role="guesser", judge="infogain"), "no active judge"),
            (dict(role="answerer", guesser="nope"), "no active guesser"),
            (dict(role="guesser", word_list="missing/list"), "no word list"),
            (dict(role="referee"), "Unknown role"),
            (dict(role="guesser", max_turns=500), "between 1 and"),
        ]:
            with pytest.raises(ApplicationError, match=words):
                services.game_start(visitor=visitor, **kwargs)
        assert Game.objects.count() == 0

    def test_answerer_game_asks_its_first_question_straight_away(self, catalog, player):
        game = services.game_start(visitor=visitor_of(player), role="answerer")
        assert (
            game.guesser.name == "natural"  # the default opponent
            and game.secret == ""
            and game.state["secret_source"] == "unconfirmed"
        )
        pending = game.state["pending"]
        assert (
            pending["index"] == 0
            and pending["question"].endswith("?")
            and pending["candidates_left"] > 1000
        )
        assert len(pending["top_candidates"]) == 5


class TestPersonAsks:
    def test_a_whole_game_to_a_win(self, catalog, player, fixed_secret):
        fixed_secret("dog")
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser", judge="kb")
        first = services.turn_submit(
            game_id=game.pk, visitor=visitor, question="Is it a kind of animal?", expected_index=0
        )
        assert (first.verdict, first.judge_raw, first.extra["judge"]) == ("yes", "isa:animal", "kb")
        repeated = services.turn_submit(
            game_id=game.pk, visitor=visitor, question="is it a KIND of animal", expected_index=1
        )
        assert repeated.verdict == "invalid"  # no question mark: the rules decide before the judge
        again = services.turn_submit(
            game_id=game.pk, visitor=visitor, question="IS IT A KIND OF ANIMAL?", expected_index=2
        )
        assert again.verdict == "repeated" and again.reward["repeated"] == -1.0
        last = services.turn_submit(
            game_id=game.pk, visitor=visitor, question="Is it a dog?", expected_index=3
        )
        game.refresh_from_db()
        assert last.verdict == "finished" and last.reward == {"turn": -0.05, "win": 2.0}
        assert (game.outcome, game.status, game.n_turns) == ("won", GameStatus.FINISHED, 4)
        assert game.finished_at is not None

    def test_a_repeated_guess_is_repeated_not_answered_no_again(
        self, catalog, player, fixed_secret
    ):
        """Issue 34 item 24 ("No, it is not a bodyguard" at questions 9, 14 and 15)."""
        fixed_secret("dog")
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser", judge="kb")
        verdicts = [
            services.turn_submit(
                game_id=game.pk, visitor=visitor, question=question, expected_index=i
            ).verdict
            for i, question in enumerate(["Is it a bodyguard?", "Is it a BODYGUARD?"])
        ]
        assert verdicts == ["no", "repeated"]

    def test_running_out_of_questions_loses(self, catalog, player, fixed_secret):
        fixed_secret("dog")
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser", max_turns=2)
        services.turn_submit(
            game_id=game.pk, visitor=visitor, question="Is it a kind of plant?", expected_index=0
        )
        services.turn_submit(
            game_id=game.pk, visitor=visitor, question="Is it a kind of tool?", expected_index=1
        )
        game.refresh_from_db()
        assert (game.outcome, game.status) == ("lost", GameStatus.FINISHED)

    def test_a_question_after_the_end_is_refused_with_a_clear_sentence(
        self, catalog, player, fixed_secret
    ):
        fixed_secret("dog")
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser")
        services.turn_submit(
            game_id=game.pk, visitor=visitor, question="Is it a dog?", expected_index=0
        )
        with pytest.raises(ApplicationError) as err:
            services.turn_submit(
                game_id=game.pk, visitor=visitor, question="Is it a cat?", expected_index=1
            )
        assert err.value.status == 409 and "game is over" in err.value.message
        assert Turn.objects.filter(game=game).count() == 1

    def test_a_100_kb_question_is_an_invalid_turn_not_an_error(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser")
        turn = services.turn_submit(
            game_id=game.pk,
            visitor=visitor,
            question="Is it " + "x" * 100_000 + "?",
            expected_index=0,
        )
        assert turn.verdict == "invalid" and turn.judge_raw == "rule: too long"
        assert len(turn.question) <= 2000 and turn.reward["invalid"] == -5.0

    def test_a_stale_expected_index_is_refused_and_stores_nothing(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser")
        services.turn_submit(
            game_id=game.pk, visitor=visitor, question="Is it alive?", expected_index=0
        )
        with pytest.raises(ApplicationError) as err:
            services.turn_submit(
                game_id=game.pk, visitor=visitor, question="Is it alive?", expected_index=0
            )
        assert err.value.status == 409 and err.value.extra == {"n_turns": 1}
        assert Turn.objects.filter(game=game).count() == 1

    def test_nobody_continues_someone_elses_game(self, catalog, make_user):
        owner, other = make_user("player"), make_user("player")
        game = services.game_start(visitor=visitor_of(owner), role="guesser")
        guest_game = services.game_start(visitor=visitor_of(), role="guesser")
        for visitor, target in [
            (visitor_of(other), game),
            (visitor_of(), game),  # a guest session without it
            (visitor_of(owner), guest_game),
            (visitor_of(None), guest_game),
        ]:
            with pytest.raises(ApplicationError) as err:
                services.turn_submit(
                    game_id=target.pk, visitor=visitor, question="Is it alive?", expected_index=0
                )
            assert err.value.status == 403
        services.turn_submit(
            game_id=guest_game.pk,
            visitor=visitor_of(None, guest_game),
            question="Is it alive?",
            expected_index=0,
        )
        assert (
            Turn.objects.filter(game=guest_game).count() == 1
            and Turn.objects.filter(game=game).count() == 0
        )

    def test_a_verdict_in_a_game_where_the_person_asks_is_refused(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser")
        with pytest.raises(ApplicationError, match="send a question"):
            services.answer_submit(
                game_id=game.pk, visitor=visitor, verdict="yes", expected_index=0
            )


class TestPersonJudges:
    def test_truthful_answers_until_the_guesser_names_the_word_then_confirm(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="answerer", guesser="infogain")
        game = play_as_answerer(game, visitor, "dog")
        assert game.outcome == "won" and game.secret == ""  # not confirmed yet
        turns = list(game.turns.order_by("index"))
        assert turns[-1].verdict == "finished" and "dog" in turns[-1].question.lower()
        assert all(t.judged_by == player and t.extra["judge"] == "human" for t in turns)
        assert all(t.top_candidates and t.candidates_left for t in turns)
        votes = JudgeVote.objects.filter(turn__game=game)
        assert votes.count() == len(turns) and {v.judge_name for v in votes} == {
            f"human:{player.username}"
        }

        game = services.game_confirm_secret(game_id=game.pk, visitor=visitor, secret="Dog")
        assert game.secret == "dog" and set(votes.values_list("secret", flat=True)) == {"dog"}
        check = game.state[
            "kb_check"
        ]  # the knowledge base cannot ground every question it asks (open world)
        assert check["available"] and check["disagreements"] == []
        assert check["compared"] + check["ungrounded"] == len(turns)

    def test_the_knowledge_base_lists_every_answer_it_would_give_differently(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(
            visitor=visitor, role="answerer", guesser="infogain", max_turns=4
        )
        game = play_as_answerer(game, visitor, "dog", lie="yes")
        game = services.game_confirm_secret(game_id=game.pk, visitor=visitor, secret="dog")
        expected = [
            t.index
            for t in game.turns.order_by("index")
            if truthful_verdict("dog", t.question) != "yes"
        ]
        listed = game.state["kb_check"]["disagreements"]
        assert expected and [d["index"] for d in listed] == expected
        assert all(d["you"] == "yes" and d["kb"] in ("no", "finished") for d in listed)

    def test_a_word_outside_the_knowledge_base_is_skipped_with_a_note(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="answerer", max_turns=1)
        game = play_as_answerer(game, visitor, "dog", lie="no")
        game = services.game_confirm_secret(game_id=game.pk, visitor=visitor, secret="quuxblorf")
        judges = {j["judge"]: j for j in game.state["kb_check"]["judges"]}
        assert judges["kb"]["available"] is False and judges["learned"]["available"] is False
        assert "not in the knowledge base" in judges["kb"]["note"]
        assert judges["pretrained"]["available"] is True  # it reads any word

    def test_the_confirmed_word_must_be_the_one_the_winning_question_names(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="answerer")
        # answer as for "cat" until the guesser names a plausible word (not a broad category,
        # which "That's my word" is never offered for), then claim it was the word
        while not rules.guessed_word(question := game.state["pending"]["question"]):
            services.answer_submit(
                game_id=game.pk,
                visitor=visitor,
                verdict=truthful_verdict("cat", question),
                expected_index=game.n_turns,
            )
            game.refresh_from_db()
        services.answer_submit(
            game_id=game.pk, visitor=visitor, verdict="finished", expected_index=game.n_turns
        )
        with pytest.raises(ApplicationError, match="last question names"):
            services.game_confirm_secret(game_id=game.pk, visitor=visitor, secret="dog")
        named = question.rstrip("?").split()[-1]  # the last word of the question it won with
        game = services.game_confirm_secret(game_id=game.pk, visitor=visitor, secret=named)
        assert game.secret == named and game.outcome == "won"
        with pytest.raises(ApplicationError, match="already known"):
            services.game_confirm_secret(game_id=game.pk, visitor=visitor, secret=named)

    def test_with_a_known_word_the_rules_end_the_game_when_the_guesser_names_it(
        self, catalog, player
    ):
        visitor = visitor_of(player)
        game = services.game_start(
            visitor=visitor, role="answerer", guesser="infogain", secret="dog"
        )
        with pytest.raises(ApplicationError, match="does not name your word"):
            services.answer_submit(
                game_id=game.pk, visitor=visitor, verdict="finished", expected_index=0
            )
        game = play_as_answerer(game, visitor, "dog")
        last = game.turns.order_by("index").last()
        assert (
            game.outcome == "won" and last.verdict == "finished" and last.extra["judge"] == "rules"
        )
        assert last.judged_by is None and not last.votes.exists()
        assert game.state["kb_check"]["disagreements"] == [] and "pending" not in game.state

    def test_a_drawn_word_is_kept_and_guest_votes_are_named_guest(self, catalog):
        game = services.game_start(
            visitor=visitor_of(),
            role="answerer",
            guesser="infogain",
            word_list="dbrl/paper_test",
            max_turns=1,
        )
        assert game.secret and game.state["secret_source"] == "word_list"
        services.answer_submit(
            game_id=game.pk, visitor=visitor_of(None, game), verdict="unknown", expected_index=0
        )
        vote = JudgeVote.objects.get(turn__game=game)
        assert (vote.judge_name, vote.user, vote.verdict, vote.secret) == (
            "human:guest",
            None,
            "unknown",
            game.secret,
        )

    def test_rule_decided_questions_of_a_model_guesser_are_stored_without_asking(
        self, catalog, player, monkeypatch
    ):
        from games.guessers.base import Ask

        asked = iter(["not a question", "Is it alive?"])
        monkeypatch.setattr(
            "games.guessers.infogain.InfoGainGuesser.ask", lambda self, state: Ask(next(asked))
        )
        game = services.game_start(visitor=visitor_of(player), role="answerer", guesser="infogain")
        only = game.turns.get()
        assert (only.verdict, only.extra["judge"], only.judged_by) == ("invalid", "rules", None)
        assert game.n_turns == 1
        assert (game.state["pending"]["index"], game.state["pending"]["question"]) == (
            1,
            "Is it alive?",
        )

    def test_giving_up_ends_the_game(self, catalog, player):
        visitor = visitor_of(player)
        game = services.game_start(visitor=visitor, role="guesser")
        game = services.game_abandon(game_id=game.pk, visitor=visitor)
        assert (game.status, game.outcome) == (GameStatus.ABANDONED, "abandoned")
        with pytest.raises(ApplicationError, match="already over"):
            services.game_abandon(game_id=game.pk, visitor=visitor)


def test_an_unusable_model_is_a_503_with_its_name(catalog, player):
    ModelSpec.objects.create(
        name="broken", kind="transformers", role="guesser", path="/nonexistent/model"
    )
    with pytest.raises(ApplicationError) as err:
        services.game_start(visitor=visitor_of(player), role="answerer", guesser="broken")
    assert err.value.status == 503 and "broken" in err.value.message
