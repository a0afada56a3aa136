"""Lock-step rollouts: batching per turn, what each turn records, determinism, ΔBelief."""

from __future__ import annotations

import json

import pytest

from games.guessers.llm import LLMGuesser
from games.llm.base import SamplingParams
from games.rollout import rollout
from games.types import GameConfig, Outcome, Trajectory, Verdict

SCRIPTS = {
    0: ["Is it a fruit?", "Is it an apple?"],  # wins on turn 2
    1: [
        "Is it big?",
        "Is it big?",
        "not a question",
        "Is it heavy?",
    ],  # repeated, invalid, then runs out
    2: ["Is it a bird?"],  # asks the same question until the end
}


def test_one_guesser_and_one_judge_batch_per_turn(scripted_guesser, counting_judge):
    guesser = scripted_guesser(SCRIPTS)
    trajs = rollout(
        guesser, counting_judge, ["apple", "boulder", "crow"], config=GameConfig(max_turns=4)
    )
    assert guesser.batches == [[0, 1, 2], [0, 1, 2], [1, 2], [1, 2]]  # the won game drops out
    # turns 2 and 3 are all decided by the rules (win, repeats, invalid): no judge call at all
    assert counting_judge.batches == [3, 1]
    won, lost, bird = trajs
    assert won.outcome is Outcome.WON and [t.verdict for t in won.turns] == [
        Verdict.YES,
        Verdict.FINISHED,
    ]
    assert [t.verdict for t in lost.turns] == [
        Verdict.YES,
        Verdict.REPEATED,
        Verdict.INVALID,
        Verdict.NO,
    ]
    assert lost.outcome is Outcome.LOST and bird.turns[1].verdict is Verdict.REPEATED
    assert won.turns[1].reward == {"turn": -0.05, "win": 2.0}
    assert lost.turns[2].reward == {"turn": -0.05, "invalid": -5.0}
    assert won.turns[0].candidates_left == 100 and won.turns[1].candidates_left == 99
    assert won.turns[0].top_candidates == [("cat", 0.5)] and won.turns[1].extra == {"turn_seen": 1}
    assert (
        won.turns[0].judge_raw.startswith("seed ")
        and lost.turns[1].judge_raw == "rule: already asked"
    )
    assert all(t.latency_ms is not None and t.latency_ms >= 0 for t in won.turns)
    assert won.guesser == "scripted-guesser" and won.judge == "counting"


def test_seeds_reach_the_games(scripted_guesser, counting_judge):
    trajs = rollout(
        scripted_guesser({7: ["Is it?"], 9: ["Is it?"]}),
        counting_judge,
        ["ant", "bee"],
        seeds=[7, 9],
        config=GameConfig(max_turns=1),
    )
    assert [t.seed for t in trajs] == [7, 9]
    with pytest.raises(ValueError, match="2 seeds for 1 secrets"):
        rollout(scripted_guesser(SCRIPTS), counting_judge, ["ant"], seeds=[0, 1])


def test_turn_hook_and_json_round_trip(scripted_guesser, counting_judge):
    seen = []
    trajs = rollout(
        scripted_guesser(SCRIPTS),
        counting_judge,
        ["apple", "boulder", "crow"],
        config=GameConfig(max_turns=3),
        on_turn=lambda i, traj, turn: seen.append((i, turn.index)),
    )
    assert seen == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1), (1, 2), (2, 2)]
    for traj in trajs:
        assert (
            Trajectory.from_dict(json.loads(json.dumps(traj.to_dict()))).to_dict() == traj.to_dict()
        )


@pytest.fixture
def tiny_guesser(tiny_backend):
    return LLMGuesser(tiny_backend, sampling=SamplingParams(max_new_tokens=8, temperature=1.0))


SECRETS = ["apple", "snake", "river", "chair"]


def test_tiny_model_rollout_records_tokens_and_is_deterministic(
    tiny_backend, tiny_guesser, counting_judge
):
    config = GameConfig(max_turns=3)
    tiny_backend.clear_cache()
    first = rollout(tiny_guesser, counting_judge, SECRETS, seeds=[1, 2, 3, 4], config=config)
    tiny_backend.clear_cache()
    second = rollout(tiny_guesser, counting_judge, SECRETS, seeds=[1, 2, 3, 4], config=config)
    dump = [json.dumps(t.to_dict(), sort_keys=True) for t in first]
    strip = lambda d: {**d, "turns": [{**t, "latency_ms": None} for t in d["turns"]]}  # noqa: E731
    assert [strip(t.to_dict()) for t in first] == [strip(t.to_dict()) for t in second]
    for traj, text in zip(first, dump):
        assert Trajectory.from_dict(json.loads(text)).to_dict() == traj.to_dict()
        turn = traj.turns[-1]
        assert (
            tiny_backend.tokenizer.decode(turn.extra["prompt_token_ids"][-2:]) == "<|assistant|>\n"
        )
        assert len(turn.extra["token_ids"]) == len(turn.extra["logprobs"]) == 8
        assert turn.extra["messages"][-1]["content"] == traj.turns[-2].feedback
        assert turn.extra["messages"][-2]["content"] == traj.turns[-2].question
    # different seeds, different games
    other = rollout(tiny_guesser, counting_judge, SECRETS, seeds=[5, 6, 7, 8], config=config)
    assert [t.turns[0].extra["token_ids"] for t in other] != [
        t.turns[0].extra["token_ids"] for t in first
    ]


def test_warm_prefix_cache_keeps_the_games(tiny_backend, tiny_guesser, counting_judge):
    config = GameConfig(max_turns=3)
    tiny_backend.clear_cache()
    cold = rollout(tiny_guesser, counting_judge, SECRETS, seeds=[1, 2, 3, 4], config=config)
    warm = rollout(tiny_guesser, counting_judge, SECRETS, seeds=[1, 2, 3, 4], config=config)
    for a, b in zip(cold, warm):
        assert [t.extra["token_ids"] for t in a.turns] == [t.extra["token_ids"] for t in b.turns]
        for ta, tb in zip(a.turns, b.turns):
            assert ta.extra["logprobs"] == pytest.approx(tb.extra["logprobs"], abs=1e-5)


def test_rollout_fills_delta_belief(tiny_backend, tiny_guesser, counting_judge):
    from games.belief import annotate_beliefs

    trajs = rollout(
        tiny_guesser,
        counting_judge,
        SECRETS[:2],
        config=GameConfig(max_turns=3),
        belief_backend=tiny_backend,
    )
    online = [[(t.belief, t.delta_belief) for t in traj.turns] for traj in trajs]
    initial = [traj.initial_belief for traj in trajs]
    assert all(b is not None and b < 0 for b in initial)
    for traj in trajs:
        beliefs = [traj.initial_belief] + [t.belief for t in traj.turns]
        assert [t.delta_belief for t in traj.turns] == pytest.approx(
            [b - a for a, b in zip(beliefs, beliefs[1:])]
        )
    annotate_beliefs(tiny_backend, trajs)  # the same numbers computed after the fact, in one batch
    assert [traj.initial_belief for traj in trajs] == pytest.approx(initial, abs=1e-4)
    for traj, pairs in zip(trajs, online):
        assert [(t.belief, t.delta_belief) for t in traj.turns] == [
            (pytest.approx(b, abs=1e-4), pytest.approx(d, abs=1e-4)) for b, d in pairs
        ]


def test_the_games_rule_reaches_the_guesser_and_infogain_plays_by_it():
    """Under the strict rule only a guess names a word: the information-gain guesser must know
    that, or it rules out a word that "Is it related to X?" merely mentioned and loses games an
    honest judge answered (measured on 160 paper_test words: 73.8% without the rule, 93.8% with)."""
    from dataclasses import replace

    from games.guessers.infogain import InfoGainGuesser
    from games.judges.base import playable_words
    from games.judges.kb import KBJudge
    from games.wordlists import read_words

    judge = KBJudge()
    words = playable_words(judge, read_words("dbrl/paper_test"))[0][:60]
    guesser = InfoGainGuesser()
    seen = []
    start = guesser.start

    def recording_start(seed):
        state = start(seed=seed)
        seen.append(state)
        return state

    guesser.start = recording_start
    strict = replace(GameConfig(), win_rule="strict")
    games = rollout(guesser, judge, words, config=strict)
    assert {s.data["win_rule"] for s in seen} == {"strict"}
    assert sum(g.won for g in games) / len(games) >= 0.85
