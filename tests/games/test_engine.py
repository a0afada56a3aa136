import pytest

from games.engine import GameOverError, TwentyQuestions, replay
from games.judges.base import Judge, UnknownSecretError
from games.types import GameConfig, JudgeAnswer, Outcome, Trajectory, Verdict


class ScriptedJudge(Judge):
    """Answers yes to questions containing 'alive', 'finished' to 'magic', else no."""

    name = "scripted"

    def check_secret(self, secret):
        if secret == "unobtainium":
            raise UnknownSecretError("unknown secret: unobtainium")

    def judge_batch(self, requests):
        out = []
        for r in requests:
            q = r.question.lower()
            out.append(
                JudgeAnswer(
                    Verdict.FINISHED
                    if "magic" in q
                    else Verdict.YES
                    if "alive" in q
                    else Verdict.NO
                )
            )
        return out


def play(questions, secret="dog", **config):
    env = TwentyQuestions(ScriptedJudge(), GameConfig(**config))
    env.reset(secret, seed=7)
    return [env.step(q) for q in questions], env


def test_verdicts_rewards_and_feedback():
    results, env = play(
        ["Is it alive?", "Is it big?", "is it   ALIVE??", "Is it alive ?", "Is it a dog?"]
    )
    verdicts = [r.turn.verdict for r in results]
    assert verdicts == [
        Verdict.YES,
        Verdict.NO,
        Verdict.INVALID,
        Verdict.REPEATED,
        Verdict.FINISHED,
    ]
    assert results[0].turn.reward == {"turn": -0.05}
    assert results[2].turn.reward == {"turn": -0.05, "invalid": -5.0}
    assert results[3].turn.reward == {"turn": -0.05, "repeated": -1.0}
    assert results[4].turn.reward == {"turn": -0.05, "win": 2.0}
    assert (
        "valid question" in results[2].turn.feedback and "already asked" in results[3].turn.feedback
    )
    assert env.trajectory.outcome is Outcome.WON and results[4].done


class GroundlessJudge(ScriptedJudge):
    def judge_batch(self, requests):
        return [
            JudgeAnswer(Verdict.UNKNOWN) if "blorp" in r.question else a
            for r, a in zip(requests, super().judge_batch(requests))
        ]


def test_unknown_costs_its_turn_and_the_configured_penalty():
    for config, expected in (
        (GameConfig(), {"turn": -0.05}),
        (GameConfig(unknown_penalty=-0.5), {"turn": -0.05, "unknown": -0.5}),
    ):
        env = TwentyQuestions(GroundlessJudge(), config)
        env.reset("dog", seed=7)
        result = env.step("Is it a blorp?")
        assert (
            result.turn.verdict is Verdict.UNKNOWN
            and result.turn.reward == expected
            and not result.done
        )


@pytest.mark.parametrize("question", ["Is it a dog?", "IS IT A DOG?", "is it the dog?"])
def test_naming_the_secret_wins(question):
    results, _ = play([question])
    assert results[0].turn.verdict is Verdict.FINISHED


@pytest.mark.parametrize("rule", ["strict", "lemma"])
def test_plural_secret_matches_singular_and_multiword_under_strict_and_lemma(rule):
    assert play(["Are they DOGS?"], win_rule=rule)[0][0].won
    assert play(["Is it a golf ball?"], secret="golf balls", win_rule=rule)[0][0].won
    assert play(["Is it a puppy?"], secret="puppies", win_rule=rule)[0][0].won
    assert not play(["Is it a dogma?"], win_rule=rule)[0][0].won  # whole words only


def test_reference_wins_only_on_the_secret_as_a_word():
    """The paper's scripts: `exact` alone. A plural is the judge's to answer (not a win)."""
    assert not play(["Are they DOGS?"])[0][0].won
    assert not play(["Is it a puppy?"], secret="puppies")[0][0].won
    assert play(["Is it a golf balls?"], secret="golf balls")[0][0].won
    assert not play(["Is it a dogma?"])[0][0].won


def test_judge_finished_without_naming_the_secret_becomes_yes():
    results, env = play(["Is it magic?"])
    assert results[0].turn.verdict is Verdict.YES and not env.done


@pytest.mark.parametrize(
    "question",
    [
        "",
        " ",
        "?",
        "x" * 600 + "?",
        "no question mark",
        "One? Two?",
        "\x00\x01\x02?",
        "<script>alert(1)</script>",
        "a" * 100_000,
    ],
)
def test_malformed_questions_get_invalid_not_an_exception(question):
    results, _ = play([question])
    assert results[0].turn.verdict is Verdict.INVALID
    assert len(results[0].turn.question) <= 2000


def test_game_ends_after_max_turns_and_refuses_more():
    results, env = play([f"Is it number {i}?" for i in range(3)], max_turns=3)
    assert results[-1].done and env.trajectory.outcome is Outcome.LOST
    with pytest.raises(GameOverError):
        env.step("Is it alive?")


def test_unknown_secret_is_refused_at_reset():
    env = TwentyQuestions(ScriptedJudge())
    with pytest.raises(UnknownSecretError, match="unobtainium"):
        env.reset("unobtainium")


def test_same_seed_same_game_and_json_round_trip():
    questions = ["Is it alive?", "Is it big?", "Is it a dog?"]
    a = replay(ScriptedJudge(), "dog", 3, questions)
    b = replay(ScriptedJudge(), "dog", 3, questions)

    def strip(t):
        return [{k: v for k, v in turn.to_dict().items() if k != "latency_ms"} for turn in t.turns]

    assert strip(a) == strip(b)
    again = Trajectory.from_dict(a.to_dict())
    assert again.outcome is Outcome.WON and [t.verdict for t in again.turns] == [
        t.verdict for t in a.turns
    ]


def test_game_config_is_validated():
    with pytest.raises(ValueError, match="max_turns"):
        GameConfig(max_turns=0)
    with pytest.raises(ValueError, match="unknown game config keys"):
        GameConfig.from_dict({"max_turn": 3})
    with pytest.raises(ValueError, match="win_rule must be one of reference, strict"):
        GameConfig(win_rule="lenient")


def test_win_rule_is_stored_with_the_config_and_old_configs_load_as_reference():
    assert GameConfig().win_rule == "reference"
    assert GameConfig.from_dict(GameConfig(win_rule="strict").to_dict()).win_rule == "strict"
    old = {k: v for k, v in GameConfig().to_dict().items() if k != "win_rule"}
    assert (
        GameConfig.from_dict(old) == GameConfig()
        and GameConfig.from_dict({}).win_rule == "reference"
    )
    traj = replay(ScriptedJudge(), "dog", 1, ["Is it a dog?"], GameConfig(win_rule="strict"))
    assert Trajectory.from_dict(traj.to_dict()).config.win_rule == "strict"


@pytest.mark.parametrize(
    "question, reason",
    [
        ("Is it an animal? Is it a dog?", "several questions"),
        ("Is it a dog", "does not end with a question mark"),
        ("Is it a\ndog?", "a control character or line break"),
        ("A cat?", "no question word"),
    ],
)
def test_invalid_replies_keep_their_reason_and_invalid_beats_finished(question, reason):
    # the question-word check is the reference's `syntax` method: the lemma rule's, not the
    # scripts' (reference)
    results, env = play(
        [question], win_rule="lemma" if reason == "no question word" else "reference"
    )
    turn = results[0].turn
    assert turn.verdict is Verdict.INVALID and turn.judge_raw == f"rule: {reason}" and not env.done
    assert turn.reward == {"turn": -0.05, "invalid": -5.0}


def test_strict_games_win_on_a_guess_of_the_thing_only():
    results, env = play(
        ["Is it related to dogs?", "Is it a dog or a cat?", "Is it a hound?", "Is it a dog?"],
        win_rule="strict",
    )
    assert [r.turn.verdict for r in results] == [
        Verdict.NO,
        Verdict.INVALID,
        Verdict.NO,
        Verdict.FINISHED,
    ]
    assert results[1].turn.judge_raw == "rule: a guess must name one thing"
    assert (
        results[3].turn.judge_raw == "rule: names the secret"
        and env.trajectory.outcome is Outcome.WON
    )
    # the same question under the lemma rule already wins; under reference "dogs" is not "dog"
    results, _ = play(["Is it related to dogs?"], win_rule="lemma")
    assert results[0].turn.verdict is Verdict.FINISHED
    results, _ = play(["Is it related to dog?"])
    assert results[0].turn.verdict is Verdict.FINISHED


def test_a_repeat_is_repeated_and_an_invalid_question_may_be_asked_again():
    results, _ = play(["Is it alive", "Is it alive?", "is it ALIVE?", "Is it a dog?"])
    assert [r.turn.verdict for r in results] == [
        Verdict.INVALID,
        Verdict.YES,
        Verdict.REPEATED,
        Verdict.FINISHED,
    ]


def test_a_strict_guess_of_another_thing_is_no_whatever_the_judge_says():
    class YesJudge(ScriptedJudge):
        def judge_batch(self, requests):
            return [JudgeAnswer(Verdict.YES, raw="yes-man") for _ in requests]

    env = TwentyQuestions(YesJudge(), GameConfig(win_rule="strict"))
    env.reset("dinghy", seed=1)
    turn = env.step("Is it a canoe?").turn
    assert turn.verdict is Verdict.NO and turn.feedback == "No, it is not a canoe."
    assert turn.judge_raw == "rule: a guess of another thing: a canoe"
    assert (
        env.step("Is it a boat?").turn.verdict is Verdict.YES
    )  # a category of the secret: the judge
    # the reference rule leaves the guess to the judge, as the reference does
    env = TwentyQuestions(YesJudge(), GameConfig())
    env.reset("dinghy", seed=1)
    assert env.step("Is it a canoe?").turn.verdict is Verdict.YES


def test_an_invalid_repeat_costs_the_invalid_penalty_only_as_under_the_papers_scripts():
    """The reference's per_turn_reward_fn adds −5 for an invalid reply and −1 for "already asked"
    in the feedback; the two stack (−6) only if the feedback can say both. Under the scripts'
    verify_judge (methods incl. multiple_questions) correct_obs turns every rule-invalid reply
    into the invalid feedback before the judge's "repeated" is looked at, so a repeat that is also
    invalid reads "You have not asked a valid question" and costs −5 (and −0.05), here too."""
    results, _ = play(["Is it alive?", "Is it alive? Is it alive?", "Is it alive"])
    for result in results[1:]:
        assert result.turn.verdict is Verdict.INVALID
        assert result.turn.reward == {"turn": -0.05, "invalid": -5.0}
        assert "already asked" not in result.turn.feedback


def test_a_repeated_guess_of_another_thing_is_repeated_not_the_rules_no_again():
    """Issue 34 item 24: "Is it a bodyguard?" asked again is marked repeated."""
    results, _ = play(["Is it a cat?", "Is it alive?", "is it a CAT?"], win_rule="strict")
    assert [r.turn.verdict for r in results] == [Verdict.NO, Verdict.YES, Verdict.REPEATED]
    assert results[2].turn.judge_raw == "rule: already asked"
    assert results[2].turn.reward == {"turn": -0.05, "repeated": -1.0}
